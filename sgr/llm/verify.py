"""PRP-RM: a training-free verification score from Yes/No token probabilities (KG-RAR §4.4).

KG-RAR (Wu et al., 2025, "Graph-Augmented Reasoning", §4.4) scores a reasoning step ``S`` given the retrieved
information ``I`` with a frozen LLM: it asks a verification question that is answered *Yes* or *No* and reads the
probabilities of those two tokens at the first position of the answer:

    Score(S, I) = exp(p(Yes | S, I)) / (exp(p(Yes | S, I)) + exp(p(No | S, I)))

where ``p`` are the tokens' log-probabilities (so the score is the probability of *Yes* renormalised over
{Yes, No}, a number in [0, 1]; it does not depend on how much mass other tokens take). :func:`prp_score` is that
formula, computed stably as ``1 / (1 + exp(p(No) − p(Yes)))``.

sgr uses it for SGR's validation scores (Hu et al., SGR §3.4): the semantic confidence ``δ_j = P(a_j | q, S_q, p_j)``
of a candidate answer (eq. 11; :func:`verify_answer`) and the model confidence ``ρ_i = P(a_i | q, p_i, S_q)`` of the
answer a reasoning path leads to (eq. 15; :func:`verify_step` with the path as the step). When the endpoint gives no
token log-probabilities, both return a fixed prior (:data:`PRIOR_SCORE`) marked ``source="prior"``, so callers can
tell a measured score from a default.

The model's own Yes/No judgement can be weak (a 135M model said *No* to "Is Paris in France?"); these scores are
meant to be combined with graph evidence (SGR's η and γ terms), not used alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

#: The score used when the model exposes no log-probabilities (no evidence either way).
PRIOR_SCORE = 0.5
#: Evidence lines shown to the verifier (a small model's context is short).
MAX_EVIDENCE_LINES = 20

VERIFIER_SYSTEM = ("You are a careful verifier. You check one claim against the facts given and the question. "
                   "Reply with exactly one word: Yes or No.")

STEP_TEMPLATE = (
    "Question: {question}\n"
    "{evidence_block}"
    "{previous_block}"
    "Current reasoning step: {step}\n\n"
    "Is the current reasoning step correct and supported by the facts? Answer Yes or No."
)

ANSWER_TEMPLATE = (
    "Question: {question}\n"
    "{schema_block}"
    "{evidence_block}"
    "Proposed answer: {answer}\n\n"
    "Is the proposed answer a correct answer to the question, given the facts? Answer Yes or No."
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


def _block(title: str, lines: Sequence[str]) -> str:
    lines = [ln for ln in lines if ln][:MAX_EVIDENCE_LINES]
    if not lines:
        return ""
    return f"{title}:\n" + "\n".join(f"- {ln}" for ln in lines) + "\n"


def step_messages(question: str, step: str, evidence: Sequence[str] = (),
                  previous_steps: Sequence[str] = ()) -> list[BaseMessage]:
    """The step-verification prompt: question, retrieved facts, earlier steps, the step; answered Yes/No."""
    return [SystemMessage(content=VERIFIER_SYSTEM),
            HumanMessage(content=STEP_TEMPLATE.format(
                question=question.strip(), step=step.strip(),
                evidence_block=_block("Facts from the knowledge graph", evidence),
                previous_block=_block("Earlier reasoning steps", previous_steps)))]


def answer_messages(question: str, answer: str, evidence: Sequence[str] = (),
                    schema: str | None = None) -> list[BaseMessage]:
    """The answer-verification prompt: question, optional query schema, supporting facts, the answer; Yes/No."""
    return [SystemMessage(content=VERIFIER_SYSTEM),
            HumanMessage(content=ANSWER_TEMPLATE.format(
                question=question.strip(), answer=answer.strip(),
                schema_block=f"Query schema: {schema.strip()}\n" if schema else "",
                evidence_block=_block("Facts from the knowledge graph", evidence)))]


def score_messages(llm, messages: Sequence[BaseMessage], *, stage: str, prior: float = PRIOR_SCORE) -> Verification:
    """Ask ``messages`` through :meth:`sgr.llm.client.LLM.yes_no_logprobs` and turn the answer into a PRP-RM score."""
    pair = llm.yes_no_logprobs(list(messages), stage=stage)
    if pair is None:
        return Verification(score=prior, source="prior")
    logp_yes, logp_no = pair
    return Verification(score=prp_score(logp_yes, logp_no), logp_yes=logp_yes, logp_no=logp_no)


def verify_step(llm, question: str, step: str, evidence: Sequence[str] = (), previous_steps: Sequence[str] = (),
                *, stage: str = "verify-step", prior: float = PRIOR_SCORE) -> Verification:
    """PRP-RM score of one reasoning step (KG-RAR §4.4, ``Score(S, I)``); SGR's ρ_i for a path (eq. 15)."""
    return score_messages(llm, step_messages(question, step, evidence, previous_steps), stage=stage, prior=prior)


def verify_answer(llm, question: str, answer: str, evidence: Sequence[str] = (), schema: str | None = None,
                  *, stage: str = "verify-answer", prior: float = PRIOR_SCORE) -> Verification:
    """PRP-RM score of a candidate answer given its supporting facts; SGR's δ_j (eq. 11)."""
    return score_messages(llm, answer_messages(question, answer, evidence, schema), stage=stage, prior=prior)
