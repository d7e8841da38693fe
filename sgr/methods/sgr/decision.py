"""The decision of one SGR reasoning round as a pure function (Zhang et al., SGR §3.4.2–3.5, eqs. 12–13, 17–18).

The answerer (:mod:`sgr.methods.sgr.answerer`) computes every source's candidates and every voting path first and
records them as :class:`DecisionInputs`; :func:`decide` turns them into answers under :class:`DecisionParams`.
It is deterministic and does no I/O, so ``bench/sgr_grid.py`` replays it over recorded inputs (μ, ε, λ,
answer_ratio, integrate) without calling the model again.

**Candidates (A_c)**, one entry per (source, answer), sources in their order of trust: ``"llm"`` (the model's
Cypher), ``"model1"``, ``"model2"``, … (each of the model's N-best grammar paths, compiled), ``"plan1"``, … (the
relation path of the nearest training question, when it exists from V_q: a retrieved plan), ``"compiled"`` (G_q's
best schema path, compiled). A plan whose question is phrased like this one — cosine ≥ ``plan_trust`` — is trusted
before every other source; a plan below it is recorded but takes no part (measured: letting it through validation
behind the model's paths passed the model's own wrong paths that validation had rejected). Each candidate has γ
(graph consistency, eq. 10)
and δ (the model's probability ρ of the candidate's path when it is one of the model's paths, the question
similarity for a plan, else PRP-RM where it was measured, else the prior), so v_j = μ·δ_j + (1−μ)·γ_j and
A_v = {a_j : v_j ≥ ε} (eqs. 12–13). A candidate whose δ is the model's own confidence (its Cypher, its paths, and
the candidates of other sources on one of its paths) must also have γ_j ≥ ``gamma_min``: with μ near 1 a confident
path is valid whatever G_q says, and the graph gets a veto ("who was president after franklin d. roosevelt?": the
model's ``people.person.nationality``, ρ 0.93, reaches "United States of America" by a walk G_q does not hold,
γ 0; G_q's ``vice_president`` walk then votes Harry S. Truman).

**Votes (P_q)**: G_q's top M walks, the walks of the model's N-best paths, SCR's paths when on; each with ρ_i, η_i
and ω_i = λ·ρ_i + (1−λ)·η_i (eq. 17); support(a) = Σ_i ω_i·𝕀(a_i = a) (eq. 18). Answers whose support is at least
``answer_ratio`` × the best one's are kept (set-valued questions).

How A_v and the vote combine (``integrate``):

* ``False`` — the first source (in order) with a valid candidate answers with its A_v, ranked by v; only when no
  source has one do the paths vote (``route = "collaborative"``) — SGR's "A_v, else collaborate". With
  ``join_first``, when C_q's join held on the voting paths (``joined``: only the walks that meet another linked
  entity vote) and that source's top answer is none of theirs, the joined paths vote instead: a conjunction's answer
  meets each entity the question names ("what group fought in the Battle of Vicksburg that was based in
  Montgomery?": G_q's compiled path from Vicksburg reaches 13 people, none of them meets Montgomery; the walks that
  do vote the Confederate States of America). Candidates of
  equal v (the ends of one path share its δ and, often, γ) are ordered by how many relations link them to the
  linked entities (``links``, :meth:`sgr.graph.store.GraphStore.topic_links`: Turkey is linked to *Turkish
  Language* by ``languages_spoken`` and ``official_language``, to *Arabic Language* by one), then by the paths'
  support (eq. 18), so the graph and the vote rank the answers of a set that validation cannot tell apart (not
  their names; chosen on dev questions, ``bench/experiments/sgr-cwq.md``). The answer is the whole
  answer set of the relation path that won: the candidates of the other sources whose relation path is the same
  one — compared under the graph's inverse names (``same_relation``, :mod:`sgr.graph.inverses`), whichever way
  each step runs — follow A_v, each valid with that path's δ and its own γ. A slice of Freebase stores one fact
  under either of two names and in either direction, so each source's own query reaches part of the set ("who
  founded the kkk": the model's ``organizations_founded`` reaches 2 of the 6 founders, G_q's compiled
  ``organization.founders`` all 6).
* ``True`` — A_v's candidates vote with weight v_j alongside P_q's paths: support(a) = Σ_{j ∈ A_v, a_j = a} v_j +
  Σ_i ω_i·𝕀(a_i = a). ``route`` is ``"direct"`` when A_v's share of the top answer's support is at least its
  paths' share, else ``"collaborative"``.

``route_source`` names who carried the top answer's support: ``"model"`` when the model's contributions — its
Cypher's candidates, its N-best paths' candidates, any candidate or voting path whose relation pattern is one of
the model's N-best paths — make up at least half of that answer's support (v_j for candidates, ω_i for paths);
otherwise ``"plan"`` or ``"compiled"`` when a plan's or G_q's compiled best path's candidate is the largest of the
rest, else ``"graph"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sgr.methods.sgr.config import SGRConfig
from sgr.methods.sgr.reasoning import reliability, validation_score

Pattern = tuple[str, ...]
_DEFAULTS = SGRConfig()
_ROUND = 4


@dataclass
class CandidateIn:
    """One a_j ∈ A_c of one source, with its validation terms."""

    key: str
    text: str
    source: str  # "llm" | "model1" … | "plan1" … | "compiled"
    relations: Pattern  # of its best path
    gamma: float
    delta: float
    delta_source: str = "prior"  # "model-path" | "plan" | "prp-rm" | "prior"

    @property
    def origin(self) -> str:
        return next((o for o in ("model", "plan") if self.source.startswith(o)), self.source)


@dataclass
class VoteIn:
    """One voting path p_i: its answer a_i, ρ_i, η_i and who proposed it."""

    answer: str
    text: str
    relations: Pattern
    rho: float
    eta: float
    origin: str = "graph"  # "graph" (G_q) | "model" (a walk of the model's N-best path) | "scr"
    rho_source: str = "prior"  # "model-path" | "prp-rm" | "scr" | "prior"


@dataclass
class DecisionInputs:
    """Everything :func:`decide` reads (``validated = False``: no G_q to validate on, every candidate is valid, v = 1)."""

    sources: list[str]
    candidates: list[CandidateIn] = field(default_factory=list)
    votes: list[VoteIn] = field(default_factory=list)
    model_patterns: list[Pattern] = field(default_factory=list)
    validated: bool = True
    same_relation: dict[str, str] = field(default_factory=dict)  # relation → the name its inverse pair is read as
    joined: bool = False  # the votes are the walks that met another linked entity (C_q's join held on P_q)
    links: dict[str, int] = field(default_factory=dict)  # answer → the relations linking it to V_q (ties)

    def relation_path(self, relations: Pattern) -> Pattern:
        """``relations`` with each paired relation read under one name of its pair (``same_relation``)."""
        return tuple(self.same_relation.get(r, r) for r in relations)

    def to_dict(self, max_votes: int | None = 50, lam: float = 0.5, max_candidates: int | None = None,
                mu: float = 0.5) -> dict[str, Any]:
        """Compact JSON: relation patterns and names once; votes capped at ``max_votes`` by ω (at this λ), candidates
        at ``max_candidates`` by v (at this μ); the order of each list is kept."""
        votes = strongest(self.votes, max_votes, lambda p: reliability(p.rho, p.eta, lam))
        cands = strongest(self.candidates, max_candidates, lambda c: validation_score(c.delta, c.gamma, mu))
        patterns: list[Pattern] = list(dict.fromkeys([*self.model_patterns, *(c.relations for c in cands),
                                                      *(v.relations for v in votes)]))
        pid = {p: i for i, p in enumerate(patterns)}
        names: dict[str, str] = {}
        keys = {c.key for c in cands} | {v.answer for v in votes}
        for key, text in [(c.key, c.text) for c in cands] + [(v.answer, v.text) for v in votes]:
            if text != key:
                names.setdefault(key, text)
        return {"sources": self.sources, "validated": self.validated, "patterns": [list(p) for p in patterns],
                "model_patterns": [pid[p] for p in self.model_patterns], "names": names,
                "candidates": [[c.key, c.source, pid[c.relations], round(c.gamma, _ROUND), round(c.delta, _ROUND),
                                c.delta_source] for c in cands],
                "votes": [[v.answer, pid[v.relations], round(v.rho, _ROUND), round(v.eta, _ROUND), v.origin,
                           v.rho_source] for v in votes],
                "votes_total": len(self.votes), "candidates_total": len(self.candidates),
                "same_relation": self.same_relation, "joined": self.joined,
                "links": {k: n for k, n in self.links.items() if n and k in keys}}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "DecisionInputs":
        patterns = [tuple(p) for p in d["patterns"]]
        names = d.get("names", {})
        return cls(sources=list(d["sources"]), validated=bool(d.get("validated", True)),
                   same_relation=dict(d.get("same_relation", {})), joined=bool(d.get("joined", False)),
                   links={k: int(n) for k, n in d.get("links", {}).items()},
                   model_patterns=[patterns[i] for i in d.get("model_patterns", [])],
                   candidates=[CandidateIn(k, names.get(k, k), s, patterns[p], g, dl, ds)
                               for k, s, p, g, dl, ds in d["candidates"]],
                   votes=[VoteIn(a, names.get(a, a), patterns[p], r, e, o, rs) for a, p, r, e, o, rs in d["votes"]])


def strongest(items: list, cap: int | None, weight: Any) -> list:  # noqa: ANN401
    """The ``cap`` items of greatest ``weight`` (the first among equals), in their order (all when ``cap`` is None):
    what a prediction records of its candidates and votes (:meth:`DecisionInputs.to_dict`)."""
    if cap is None or len(items) <= cap:
        return list(items)
    order = sorted(range(len(items)), key=lambda i: -weight(items[i]))
    return [items[i] for i in sorted(order[:cap])]


@dataclass(frozen=True)
class DecisionParams:
    """μ, ε (eqs. 12–13), λ (eq. 17), the set-answer ratio, how A_v and the vote combine, whether paths vote, the
    similarity at which a plan is trusted first. Defaults are :class:`sgr.methods.sgr.config.SGRConfig`'s
    (:meth:`from_config`)."""

    mu: float = _DEFAULTS.mu
    epsilon: float = _DEFAULTS.epsilon
    lam: float = _DEFAULTS.lam
    answer_ratio: float = _DEFAULTS.answer_ratio
    integrate: bool = _DEFAULTS.integrate
    collaborative: bool = _DEFAULTS.collaborative
    plan_trust: float = _DEFAULTS.plan_trust
    gamma_min: float = _DEFAULTS.gamma_min
    graph_first: bool = _DEFAULTS.graph_first
    join_first: bool = _DEFAULTS.join_first

    @classmethod
    def from_config(cls, c: SGRConfig) -> "DecisionParams":
        return cls(mu=c.mu, epsilon=c.epsilon, lam=c.lam, answer_ratio=c.answer_ratio, integrate=c.integrate,
                   collaborative=c.collaborative, plan_trust=c.plan_trust, gamma_min=c.gamma_min,
                   graph_first=c.graph_first, join_first=c.join_first)


@dataclass
class DecidedAnswer:
    """One answer with its score (v in a direct decision, support in a vote) and what gave it."""

    key: str
    text: str
    score: float
    candidates: list[int] = field(default_factory=list)  # indexes into DecisionInputs.candidates
    votes: list[int] = field(default_factory=list)  # indexes into DecisionInputs.votes
    model_support: float = 0.0  # the part of ``score`` the model's route gave
    candidate_support: float = 0.0  # the part A_v gave (integrate)


@dataclass
class Decision:
    """The outcome: the answers (best first), every tallied answer, the route, who carried it, the deciding stage."""

    answers: list[DecidedAnswer]
    tally: list[DecidedAnswer]  # every answer with support (the selected ones and the rest), best first
    route: str | None  # "direct" | "collaborative" | None
    route_source: str | None  # "model" | "compiled" | "graph" | None
    stage: str | None  # a source name, "vote" or "integrated"; None without answers
    v: list[float]  # v_j of each candidate
    valid: list[bool]
    omegas: list[float]  # ω_i of each voting path

    def summary(self) -> dict[str, Any]:
        return {"route": self.route, "route_source": self.route_source, "stage": self.stage,
                "valid": sum(self.valid), "answers": len(self.answers),
                "top": None if not self.answers else {"key": self.answers[0].key,
                                                      "score": round(self.answers[0].score, _ROUND),
                                                      "model_support": round(self.answers[0].model_support, _ROUND)}}


def decide(inputs: DecisionInputs, params: DecisionParams) -> Decision:
    """A_v, the vote and the answers of one round (module docstring); deterministic, no I/O."""
    cands, votes = inputs.candidates, inputs.votes
    v = [validation_score(c.delta, c.gamma, params.mu) if inputs.validated else 1.0 for c in cands]
    valid = [((not inputs.validated) or x >= params.epsilon - 1e-9)  # tolerance for float sums
             and (c.origin != "plan" or c.delta >= params.plan_trust)
             and not _vetoed(inputs, _model_delta(c), c.gamma, params)
             for x, c in zip(v, cands)]
    omegas = [reliability(p.rho, p.eta, params.lam) for p in votes]
    model = set(inputs.model_patterns)

    def cand_is_model(i: int) -> bool:
        return cands[i].origin in ("llm", "model") or cands[i].relations in model

    def vote_is_model(i: int) -> bool:
        return votes[i].origin == "model" or votes[i].relations in model

    if not params.integrate:
        paths_say = _path_support(votes, omegas) if params.collaborative else {}

        def order(i: int) -> tuple[float, int, float, str]:  # by v; equal v (one path's ends) by the relations
            # linking the answer to V_q, then by the paths, then by name
            return -round(v[i], 9), -inputs.links.get(cands[i].key, 0), -paths_say.get(cands[i].key, 0.0), cands[i].text

        joined = paths_say if params.join_first and inputs.joined and params.collaborative else None  # voted answers
        for src in trust_order(inputs, params.plan_trust, params.graph_first):
            idx = sorted((i for i, c in enumerate(cands) if c.source == src and valid[i]), key=order)
            if idx and joined is not None and cands[idx[0]].key not in joined:
                break  # C_q's join held on the paths, not on this source's answer: the joined paths vote
            if idx:
                scored = [(i, v[i]) for i in idx] + _same_path_rest(inputs, idx, v, params, order)
                answers = [DecidedAnswer(cands[i].key, cands[i].text, vi, [i], [], vi if cand_is_model(i) else 0.0,
                                         vi) for i, vi in scored]
                return _finish(answers, answers, "direct", src, cands, v, valid, omegas)
        tally: dict[str, DecidedAnswer] = {}
    else:
        tally = {}
        for i, c in enumerate(cands):
            if valid[i]:
                a = tally.setdefault(c.key, DecidedAnswer(c.key, c.text, 0.0))
                a.score += v[i]
                a.candidates.append(i)
                a.candidate_support += v[i]
                a.model_support += v[i] if cand_is_model(i) else 0.0
    if params.collaborative:
        for i, p in enumerate(votes):
            a = tally.setdefault(p.answer, DecidedAnswer(p.answer, p.text, 0.0))
            a.score += omegas[i]
            a.votes.append(i)
            a.model_support += omegas[i] if vote_is_model(i) else 0.0
    ranked = sorted(tally.values(), key=lambda a: (-a.score, -inputs.links.get(a.key, 0), a.text))
    chosen = [a for a in ranked if a.score >= params.answer_ratio * ranked[0].score and a.score > 0] if ranked else []
    if not chosen:
        return _finish([], ranked, None, None, cands, v, valid, omegas)
    top = chosen[0]
    route = "direct" if top.candidate_support >= top.score - top.candidate_support and top.candidates else \
        "collaborative"
    return _finish(chosen, ranked, route, "integrated" if params.integrate else "vote", cands, v, valid, omegas)


def _same_path_rest(inputs: DecisionInputs, chosen: list[int], v: list[float], params: DecisionParams,
                    order: Callable[[int], Any]) -> list[tuple[int, float]]:
    """The rest of the winning relation path's answer set: ``(j, v_j)`` for the candidates of other sources whose
    relation path is a ``chosen`` candidate's (under ``same_relation``) and whose answer is not chosen yet, one per
    answer, in ``order``. Such a candidate is the same path's end, so δ is that path's (the best chosen δ on it):
    v_j = μ·δ + (1−μ)·γ_j must reach ε (eq. 13), and γ_j ``gamma_min`` when that δ is the model's."""
    cands = inputs.candidates
    delta: dict[Pattern, float] = {}
    models: set[Pattern] = set()  # the paths whose δ is the model's (gamma_min bounds their ends)
    for i in chosen:
        path = inputs.relation_path(cands[i].relations)
        delta[path] = max(delta.get(path, 0.0), cands[i].delta)
        if _model_delta(cands[i]):
            models.add(path)
    sources = {cands[i].source for i in chosen}
    seen = {cands[i].key for i in chosen}
    rest = []
    for j in sorted(range(len(cands)), key=order):
        c, path = cands[j], inputs.relation_path(cands[j].relations)
        if c.key in seen or c.source in sources or path not in delta:
            continue
        vj = validation_score(delta[path], c.gamma, params.mu) if inputs.validated else v[j]
        if vj >= params.epsilon - 1e-9 and not _vetoed(inputs, path in models, c.gamma, params):
            seen.add(c.key)
            rest.append((j, vj))
    return rest


def _model_delta(c: CandidateIn) -> bool:
    """Whether ``c``'s δ is the model's own confidence (its Cypher, one of its paths), which ``gamma_min`` bounds."""
    return c.origin in ("llm", "model") or c.delta_source == "model-path"


def _vetoed(inputs: DecisionInputs, model_delta: bool, gamma: float, params: DecisionParams) -> bool:
    """G_q's veto (module docstring): a validated candidate whose δ is the model's needs γ ≥ ``gamma_min``."""
    return inputs.validated and model_delta and gamma < params.gamma_min


def _path_support(votes: list[VoteIn], omegas: list[float]) -> dict[str, float]:
    """support(a) = Σ_i ω_i·𝕀(a_i = a) over the voting paths (eq. 18)."""
    out: dict[str, float] = {}
    for p, w in zip(votes, omegas):
        out[p.answer] = out.get(p.answer, 0.0) + w
    return out


def trust_order(inputs: DecisionInputs, plan_trust: float, graph_first: bool = False) -> list[str]:
    """The sources in their order of trust: plans whose δ (question similarity) reaches ``plan_trust`` first (the
    others are never valid, :func:`decide`); with ``graph_first``, G_q's compiled best path next, before the model's
    own paths and Cypher — after those of the model's paths that continue it (:func:`continuing_sources`); then the
    rest as given."""
    trusted = [s for s in inputs.sources if s.startswith("plan")
               and any(c.source == s and c.delta >= plan_trust for c in inputs.candidates)]
    if graph_first and "compiled" in inputs.sources:
        trusted += [*continuing_sources(inputs, "compiled"), "compiled"]  # model sources: none is a plan
    return trusted + [s for s in inputs.sources if s not in trusted]


def source_path(inputs: DecisionInputs, source: str) -> Pattern:
    """The relation path of ``source``'s candidates (its first candidate's; one source compiles one path), read under
    ``same_relation``; () when the source has no candidate."""
    return next((inputs.relation_path(c.relations) for c in inputs.candidates if c.source == source), ())


def continuing_sources(inputs: DecisionInputs, base: str) -> list[str]:
    """The model's path sources (``model1`` …) whose relation path continues ``base``'s: starts with all of its
    relations (each read under ``same_relation``) and has more. ``base``'s answers are then the nodes such a path
    goes on from — a composition's bridge ("the team that won the 1970 finals" → its championships), which G_q's
    ranker stops at when a shorter path scores higher; the longer path asks the question's last relation.
    Chosen on CWQ dev (``cwq_dev_eval`` and ``cwq_dev_select``, stored decision inputs replayed)."""
    stem = source_path(inputs, base)
    if not stem:
        return []
    return [s for s in inputs.sources if s.startswith("model")
            and len(path := source_path(inputs, s)) > len(stem) and path[:len(stem)] == stem]


def _finish(answers: list[DecidedAnswer], tally: list[DecidedAnswer], route: str | None, stage: str | None,
            cands: list[CandidateIn], v: list[float], valid: list[bool], omegas: list[float]) -> Decision:
    source = None
    if answers:
        top = answers[0]
        if top.score > 0 and top.model_support >= 0.5 * top.score:
            source = "model"
        else:
            by = {o: sum(v[i] for i in top.candidates if cands[i].origin == o) for o in ("plan", "compiled")}
            rest = top.score - top.model_support - sum(by.values())
            best = max(by, key=lambda o: by[o])
            source = best if by[best] > 0 and by[best] >= rest else "graph"
    return Decision(answers, tally, route, source, stage if answers else None, v, valid, omegas)


def rho_can_change(inputs: DecisionInputs, params: DecisionParams, decision: Decision) -> bool:
    """Whether measuring ρ of the relation patterns still at the prior could change the vote's top answer.

    Paths of one pattern share one ρ ∈ [0, 1], so against each other answer b the top answer's lead moves by
    λ·Δρ_r·(n_top(r) − n_b(r)) per prior pattern r; the calls are skipped (lazy, like δ) when even the worst case
    for the top answer — ρ → 0 on patterns it has more paths of, ρ → 1 on those b has more of — keeps it first
    (a tie that no pattern can break stays as it is)."""
    if not decision.tally or params.lam <= 0:
        return False

    def counts(a: DecidedAnswer) -> dict[Pattern, list[float]]:
        out: dict[Pattern, list[float]] = {}
        for i in a.votes:
            if inputs.votes[i].rho_source == "prior":
                out.setdefault(inputs.votes[i].relations, []).append(inputs.votes[i].rho)
        return out

    top = decision.tally[0]
    mine = counts(top)
    for b in decision.tally[1:]:
        theirs = counts(b)
        lead, movable = top.score - b.score, False
        for r in set(mine) | set(theirs):
            c = len(mine.get(r, [])) - len(theirs.get(r, []))
            rho = (mine.get(r) or theirs.get(r))[0]
            if c:
                movable = True
                lead -= params.lam * (rho * c if c > 0 else (1 - rho) * -c)
        if lead < -1e-12 or (movable and lead <= 1e-12):
            return True
    return False
