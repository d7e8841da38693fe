"""PRP-RM: a training-free verification score from Yes/No token probabilities (KG-RAR §4.4), and the one
verification prompt SGR sends.

KG-RAR (Wu et al., 2025, "Graph-Augmented Reasoning", §4.4) scores a reasoning step ``S`` given the retrieved
information ``I`` with a frozen LLM: it asks a verification question that is answered *Yes* or *No* and reads the
probabilities of those two tokens at the first position of the answer:

    Score(S, I) = exp(p(Yes | S, I)) / (exp(p(Yes | S, I)) + exp(p(No | S, I)))

where ``p`` are the tokens' log-probabilities (so the score is the probability of *Yes* renormalised over
{Yes, No}, a number in [0, 1]; it does not depend on how much mass other tokens take). :func:`prp_score` is that
formula, computed stably as ``1 / (1 + exp(p(No) − p(Yes)))``.

SGR (Zhang et al., §3.4–§3.5) uses it through :func:`path_confidence` for the semantic confidence
``δ_j = P(a_j | q, S_q, p_j)`` of a candidate answer reached by path p_j (eq. 11) and the model confidence
``ρ_i = P(a_i | q, p_i, S_q)`` of the answer a reasoning path leads to (eq. 15): both ask
:func:`verification_messages` (the question, the query schema, one path; a Yes and a No worked example). When the
endpoint gives no token log-probabilities the score is a fixed prior marked ``source="prior"``, so callers can tell
a measured score from a default.

The model's own Yes/No judgement can be weak (a 135M model said *No* to "Is Paris in France?"); these scores are
meant to be combined with graph evidence (SGR's η and γ terms), not used alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

#: The score used when the model exposes no log-probabilities (no evidence either way).
PRIOR_SCORE = 0.5
VERIFY_SYSTEM = ("You check whether a path of facts from a knowledge graph leads to an answer of a question. "
                 "Reply with one word: Yes or No.")
VERIFY_EXAMPLES = (
    ("what does jamaican people speak?", "Jamaica -[location.country.languages_spoken]-> Jamaican English", "Yes"),
    ("what does jamaican people speak?", "Jamaica -[location.location.containedby]-> Caribbean", "No"),
)


@dataclass(frozen=True)
class Verification:
    """A PRP-RM score and where it came from (``"logprobs"`` of the model, or the fixed ``"prior"``)."""

    score: float
    logp_yes: float | None = None
    logp_no: float | None = None
    source: str = "logprobs"

    @property
    def measured(self) -> bool:
        return self.source == "logprobs"


def prp_score(logp_yes: float, logp_no: float) -> float:
    """KG-RAR §4.4: ``e^{p(Yes)} / (e^{p(Yes)} + e^{p(No)})`` from the two tokens' log-probabilities.

    Stable for any finite inputs; ``-inf`` for one token gives 0 or 1; ``-inf`` for both gives :data:`PRIOR_SCORE`.
    """
    if math.isnan(logp_yes) or math.isnan(logp_no):
        raise ValueError("log-probabilities must not be NaN")
    if logp_yes == -math.inf and logp_no == -math.inf:
        return PRIOR_SCORE
    if logp_no == -math.inf:
        return 1.0
    if logp_yes == -math.inf:
        return 0.0
    diff = logp_no - logp_yes
    if diff > 0:
        e = math.exp(-diff)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(diff))


def _verify_user(question: str, path_text: str, schema_text: str | None) -> str:
    lines = [f"Question: {question}"]
    if schema_text:
        lines.append(f"Query schema: {schema_text}")
    lines.append(f"Path: {path_text}")
    lines.append("Does the path lead to an answer of the question? Answer Yes or No.")
    return "\n".join(lines)


def verification_messages(question: str, path_text: str, schema_text: str | None = None) -> list[BaseMessage]:
    """System message, a Yes and a No worked example, then the question with one rendered path (δ_j / ρ_i)."""
    msgs: list[BaseMessage] = [SystemMessage(VERIFY_SYSTEM)]
    for q, p, a in VERIFY_EXAMPLES:
        msgs += [HumanMessage(_verify_user(q, p, None)), AIMessage(a)]
    msgs.append(HumanMessage(_verify_user(question, path_text, schema_text)))
    return msgs


def score_messages(llm, messages: Sequence[BaseMessage], *, stage: str, prior: float = PRIOR_SCORE) -> Verification:
    """Ask ``messages`` through :meth:`sgr.llm.client.LLM.yes_no_logprobs` and turn the answer into a PRP-RM score;
    ``prior`` when there is no model or it gives no log-probabilities."""
    if llm is None or not getattr(llm, "logprobs", False):
        return Verification(score=prior, source="prior")
    pair = llm.yes_no_logprobs(list(messages), stage=stage)
    if pair is None:
        return Verification(score=prior, source="prior")
    logp_yes, logp_no = pair
    return Verification(score=prp_score(logp_yes, logp_no), logp_yes=logp_yes, logp_no=logp_no)


def path_confidence(llm, question: str, path_text: str, schema_text: str | None = None, *,  # noqa: ANN001
                    stage: str = "verify", prior: float = PRIOR_SCORE) -> Verification:
    """SGR's δ_j (eq. 11) / ρ_i (eq. 15): the PRP-RM score of :func:`verification_messages` for one path."""
    return score_messages(llm, verification_messages(question, path_text, schema_text), stage=stage, prior=prior)
