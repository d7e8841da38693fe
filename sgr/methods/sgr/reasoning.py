"""Direct and collaborative reasoning over G_q (Zhang et al., SGR §3.4–§3.5): the formulas, candidates and votes.

**Direct reasoning (§3.4).** Candidate answers A_c = Exec(Q_c, G) (eq. 9) come from the model's Cypher
(:mod:`cypher.translate` + :mod:`cypher.repair`), or — when that query cannot be used (invalid after the
repairs, failing, or empty) — from the deterministic compilation of the best scored schema path
(:mod:`cypher.compile`). Each a_j ∈ A_c is validated (eqs. 10–13):

    γ_j = C(p_j, G_q)                       graph consistency of a_j's best path in G_q (0 when none)
    δ_j = P_θ(a_j | q, S_q, p_j)             the model's Yes/No confidence (PRP-RM score of a verification prompt)
    v_j = μ·δ_j + (1 − μ)·γ_j,   A_v = {a_j : v_j ≥ ε}

**Collaborative reasoning (§3.5)**, when A_v is empty: the top M paths p_1..p_M of G_q each give an answer a_i
with ρ_i = P_θ(a_i | q, p_i, S_q) and η_i = C(p_i, G_q) (eqs. 14–16),

    ω_i = λ·ρ_i + (1 − λ)·η_i,    â = argmax_a Σ_i ω_i·𝕀(a_i = a)            (eqs. 17–18)

and the answers are returned ranked by that support; answers whose support is at least ``answer_ratio`` of
â's are kept as well (set-valued questions), â first.

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

from sgr.core.types import Answer, ReasoningPath


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


def validate_candidates(cands: list[Candidate], mu: float, epsilon: float) -> list[Candidate]:
    """Fill v_j and ``valid`` (eq. 12–13); returns A_v sorted by v_j (then by name)."""
    for c in cands:
        c.v = validation_score(c.delta, c.gamma, mu)
        c.valid = c.v >= epsilon - 1e-9  # tolerance for float sums at the threshold
    return sorted([c for c in cands if c.valid], key=lambda c: (-c.v, c.text))


@dataclass
class Vote:
    """Support of one answer in collaborative reasoning: Σ ω_i over its paths (eq. 18)."""

    key: str
    text: str
    support: float = 0.0
    paths: list[ReasoningPath] = field(default_factory=list)
    omegas: list[float] = field(default_factory=list)


def aggregate_votes(paths: Sequence[ReasoningPath], rhos: Sequence[float], etas: Sequence[float],
                    lam: float) -> list[Vote]:
    """â = argmax_a Σ_i ω_i·𝕀(a_i = a) (eq. 18): votes sorted by support (ties by name)."""
    votes: dict[str, Vote] = {}
    for p, rho, eta in zip(paths, rhos, etas):
        w = reliability(rho, eta, lam)
        v = votes.setdefault(p.answer, Vote(p.answer, p.answer_name))
        v.support += w
        v.paths.append(p)
        v.omegas.append(w)
    return sorted(votes.values(), key=lambda v: (-v.support, v.text))


def select_answers(votes: Sequence[Vote], ratio: float) -> list[Vote]:
    """â and every answer whose support is ≥ ``ratio`` × â's."""
    if not votes:
        return []
    top = votes[0].support
    return [v for v in votes if v.support >= ratio * top and v.support > 0]


def to_answers(items: Sequence[Candidate | Vote], score_attr: str, max_paths: int = 3) -> list[Answer]:
    out = []
    for it in items:
        paths = sorted(it.paths, key=lambda p: -p.score)[:max_paths]
        out.append(Answer(text=it.text, id=it.key, score=float(getattr(it, score_attr)), paths=paths))
    return out


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
