"""Direct and collaborative reasoning over G_q (Zhang et al., SGR §3.4–§3.5): the formulas, candidates and votes.

**Direct reasoning (§3.4).** Candidate answers A_c = Exec(Q_c, G) (eq. 9) come from every source: the model's
Cypher (:mod:`cypher.translate` + :mod:`cypher.repair`), each of the model's N-best grammar paths compiled, and
the compiled best scored schema path of G_q (:mod:`cypher.compile`). Each a_j ∈ A_c is validated (eqs. 10–13):

    γ_j = C(p_j, G_q)                       graph consistency of a_j's best path in G_q (0 when none)
    δ_j = P_θ(a_j | q, S_q, p_j)             the model's Yes/No confidence (PRP-RM score of a verification prompt)
    v_j = μ·δ_j + (1 − μ)·γ_j,   A_v = {a_j : v_j ≥ ε}

**Collaborative reasoning (§3.5)**: the top M paths p_1..p_M of G_q (and the walks of the model's N-best paths,
SCR's paths when on) each give an answer a_i with ρ_i = P_θ(a_i | q, p_i, S_q) and η_i = C(p_i, G_q) (eqs. 14–16),

    ω_i = λ·ρ_i + (1 − λ)·η_i,    â = argmax_a Σ_i ω_i·𝕀(a_i = a)            (eqs. 17–18)

A walk of G_q's top M that goes on from another one's answer does not vote for a node a walk of its own reaches
(:func:`independent_walks`: it is the other walk's evidence again). The answers are returned ranked by that support;
answers whose support is at least ``answer_ratio`` of â's are kept as well (set-valued questions), â first. How A_v
and the vote combine, and which source answers, is :func:`sgr.methods.sgr.decision.decide` (a pure function over the
recorded terms).

C(p, G_q) (the paper leaves it open) is exp(−(s* − s(p))/τ) for a path p of G_q with score s(p), s* the best
path score and τ = ``consistency_temperature`` — 1 for the best paths, decaying with the score gap — and 0 for
a path outside G_q. δ and ρ are PRP-RM scores e^{lp_yes}/(e^{lp_yes}+e^{lp_no}) of the verification prompt
(:func:`sgr.llm.verify.path_confidence`), asked once per distinct relation pattern (answers reached by the
same relations share the question's semantics) and only when the score can change the outcome
(``lazy_verification``); an endpoint without log-probabilities gives the fixed prior ``prior_confidence``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from sgr.core.types import ReasoningPath


# -- formulas ------------------------------------------------------------------------------------------------------
def consistency(score: float, best: float, temperature: float) -> float:
    """C(p, G_q) = exp(−(s* − s(p))/τ), clipped to [0, 1] (module docstring)."""
    if best <= 0 or temperature <= 0:
        return 1.0 if score >= best else 0.0
    return max(0.0, min(1.0, math.exp(-(best - score) / temperature)))


def validation_score(delta: float, gamma: float, mu: float) -> float:
    """v_j = μ·δ_j + (1 − μ)·γ_j (eq. 12)."""
    return mu * delta + (1 - mu) * gamma


def reliability(rho: float, eta: float, lam: float) -> float:
    """ω_i = λ·ρ_i + (1 − λ)·η_i (eq. 17)."""
    return lam * rho + (1 - lam) * eta


def independent_walks(paths: Sequence[ReasoningPath]) -> list[ReasoningPath]:
    """``paths`` less the walks that go on from another walk's answer to a node some walk of its own reaches. Such a
    walk repeats the other walk's evidence, so eq. 18 would count its end again: "who played Barbara Gordon" →
    "Female" once through the character and once more through every actress's path and her gender. A node reached
    only that way (the director of the film an actor starred in) keeps its walks."""
    walks = {tuple(p.nodes) for p in paths}
    extends = [any(tuple(p.nodes[:k]) in walks for k in range(2, len(p.nodes))) for p in paths]
    own = {p.nodes[-1] for p, ext in zip(paths, extends) if not ext}
    return [p for p, ext in zip(paths, extends) if not (ext and p.nodes[-1] in own)]


def delta_decides(gamma: float, mu: float, epsilon: float) -> bool:
    """Whether δ ∈ [0, 1] can change ``v ≥ ε`` for this γ (if not, the Yes/No call is skipped)."""
    low = validation_score(0.0, gamma, mu)
    high = validation_score(1.0, gamma, mu)
    return low < epsilon <= high


@dataclass
class Candidate:
    """A candidate answer of direct reasoning with its validation terms (eqs. 10–13)."""

    key: str  # node id (or the raw value when it is no node)
    text: str
    paths: list[ReasoningPath] = field(default_factory=list)
    gamma: float = 0.0
    delta: float = 0.5
    delta_source: str = "prior"
    v: float = 0.0
    valid: bool = False
    origin: str = ""  # "llm" (the model's Cypher), "model" (a path the model proposed), "compiled" (G_q's best path)
    source: str = ""  # the source's name in the decision: "llm", "model1", "model2", …, "compiled"
    pattern: tuple[str, ...] = ()  # the relation path compiled for it (its walks may store a step's inverse name)


@dataclass
class Vote:
    """Support of one answer in the vote: Σ ω_i over its paths (eq. 18), plus Σ v_j of its valid candidates when
    A_v votes (:mod:`sgr.methods.sgr.decision`, ``integrate``)."""

    key: str
    text: str
    support: float = 0.0
    paths: list[ReasoningPath] = field(default_factory=list)
    omegas: list[float] = field(default_factory=list)


# -- answer generation from the top paths --------------------------------------------------------------------------
ANSWER_SYSTEM = ("You answer a question from reasoning paths of a knowledge graph. Write the answers only, one per "
                 "line, each copied exactly from the end of a path. No other text.")
ANSWER_EXAMPLE = (
    "what does jamaican people speak?",
    ["Jamaica -[location.country.languages_spoken]-> Jamaican English",
     "Jamaica -[location.country.languages_spoken]-> Jamaican Creole English Language",
     "Jamaica -[location.location.containedby]-> Caribbean"],
    "Jamaican English\nJamaican Creole English Language",
)


def _answer_user(question: str, path_lines: Sequence[str]) -> str:
    body = "\n".join(f"{i}. {p}" for i, p in enumerate(path_lines, 1))
    return f"Reasoning paths:\n{body}\nQuestion: {question}\nAnswers:"


def answer_messages(question: str, paths: Sequence[ReasoningPath], max_paths: int = 8) -> list[BaseMessage]:
    """Reasoning paths + question → answers, one per line (the optional generation stage)."""
    q, lines, reply = ANSWER_EXAMPLE
    return [SystemMessage(ANSWER_SYSTEM), HumanMessage(_answer_user(q, lines)), AIMessage(reply),
            HumanMessage(_answer_user(question, [p.render() for p in paths[:max_paths]]))]
