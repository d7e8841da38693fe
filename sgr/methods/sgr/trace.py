"""The trace of one SGR question (:class:`SGRResult`) and its JSON view (``sgr ask --json``).

It holds everything the question went through: the linked entities, S_q, G_q, the Cypher attempts, the
validated candidates and the collaborative votes (each round), the answers with their paths, and a Cypher
statement that redraws the evidence in Neo4j Browser.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cypher.compile import CompiledQuery
from cypher.repair import CypherGeneration
from sgr.core.text import cypher_literal
from sgr.core.types import Answer, Prediction, Question, ReasoningPath
from sgr.methods.sgr.config import SGRConfig
from sgr.methods.sgr.decision import CandidateIn, DecidedAnswer, Decision, DecisionInputs, Pattern, strongest
from sgr.methods.sgr.reasoning import Candidate, Vote, reliability, validation_score
from sgr.methods.sgr.schema import QuestionSchema
from sgr.methods.sgr.subgraph import Subgraph
from sgr.methods.sgr.word_relations import asking_words, load_word_relations
from sgr.retrieval.entities import LinkedEntity, linked_names


#: the voting walks the evidence signals read: the strongest by ω, as many as a prediction records
#: (:meth:`DecisionInputs.to_dict`), so a stored prediction gives the same signals as the live run
EVIDENCE_VOTES = 50
#: the candidates they read: the best by v, as many as a prediction records
EVIDENCE_CANDIDATES = 50
_DEFAULTS = SGRConfig()


@dataclass(frozen=True)
class Evidence:
    """How the top answer is reached among the :data:`EVIDENCE_VOTES` strongest voting walks: where the graph lacks
    the answer's edge, the answer left is reached by fewer and weaker walks, and a walk to another answer by another
    relation path is about as strong; where the walks spread over many answers (a vague path, many rivals), the top
    one holds a small share of them."""

    votes_top: int  # voting walks that reach the top answer
    vote_share: float  # their share of the walks read (0 when there are none)
    omega_top: float  # ω of its best walk (0 when no walk reaches it)
    rival_gap: float  # that ω minus ω of the best walk to another answer by another relation path
    relations: Pattern  # its best relation path (its strongest walk's, else its first candidate's)
    sources: int = 0  # how many kinds of candidate source reach it (:func:`agreeing_sources`)
    ends: frozenset[str] = frozenset()  # the last relations of the paths that reach it: its candidates among the
    # EVIDENCE_CANDIDATES best by v and its walks among the EVIDENCE_VOTES strongest, as a prediction records them
    joined: bool = False  # C_q's join held on the votes (``DecisionInputs.joined``) and a walk it read reaches it:
    # the votes are then the walks that met another linked entity — or, for another seed, the question's mention


def best_candidates(inputs: DecisionInputs, mu: float) -> list[CandidateIn]:
    """The :data:`EVIDENCE_CANDIDATES` best candidates by v (at this μ), as a prediction records them."""
    return strongest(inputs.candidates, EVIDENCE_CANDIDATES, lambda c: validation_score(c.delta, c.gamma, mu))


def agreeing_sources(candidates: Iterable[CandidateIn], top: str) -> int:
    """How many kinds of candidate source have ``top`` among ``candidates`` (:func:`best_candidates`): the model's
    Cypher, the model's own relation paths, a retrieved plan, G_q's compiled best path (:attr:`CandidateIn.origin`),
    valid or not. Sources that reach one answer each their own way agree on it, and an answer they agree on is more
    often right (self-consistency): on the dev runs of ``bench/experiments/confidence.md`` it is the calibrator's
    strongest addition."""
    return len({c.origin for c in candidates if c.key == top})


def answer_evidence(inputs: DecisionInputs, top: str, lam: float, mu: float = _DEFAULTS.mu) -> Evidence:
    """:class:`Evidence` of answer ``top`` in ``inputs`` (ω at this λ, v at this μ; relation paths read under
    ``same_relation``)."""
    omega = [reliability(v.rho, v.eta, lam) for v in inputs.votes]
    order = sorted(range(len(inputs.votes)), key=lambda i: -omega[i])[:EVIDENCE_VOTES]
    votes = [(inputs.votes[i], omega[i]) for i in order]
    mine = [(inputs.relation_path(v.relations), w) for v, w in votes if v.answer == top]
    best = max(mine, key=lambda m: m[1]) if mine else None
    cands = [inputs.relation_path(c.relations) for c in inputs.candidates if c.key == top]
    relations = best[0] if best else (cands[0] if cands else ())
    omega_top = best[1] if best else 0.0
    rivals = [w for v, w in votes if v.answer != top and inputs.relation_path(v.relations) != relations]
    strong = best_candidates(inputs, mu)
    ends = frozenset(p[-1] for p in [c.relations for c in strong if c.key == top]
                     + [v.relations for v, _ in votes if v.answer == top] if p)
    return Evidence(len(mine), len(mine) / len(votes) if votes else 0.0, float(omega_top),
                    float(omega_top - max(rivals, default=0.0)), relations, agreeing_sources(strong, top), ends,
                    inputs.joined and bool(mine))


def dotted_names(relations: Sequence[str]) -> float:
    """1 when the path's relations are named ``domain.type.property`` (a Freebase-style graph), else 0: what a path's
    score means differs between such a graph and one of plain names (the MetaQA KB)."""
    return float(bool(relations) and all(r.count(".") >= 2 for r in relations))


def asked_relation_fit(ends: Iterable[str], question: str, names: Sequence[str] = ()) -> float:
    """How well the relations that give an answer (``ends``: :attr:`Evidence.ends`) fit the word of the question that
    asks for it (its words outside the linked entities' ``names``,
    :func:`~sgr.methods.sgr.word_relations.asking_words`): the shipped word–relation lexicon's score
    (:class:`sgr.methods.sgr.word_relations.WordRelations`), the best of them; 0 without a lexicon. An answer that
    comes by a relation no word asks for scores low ("what currency does japan use?" answered by an Olympics
    relation). It cannot see a word that describes the topic ("the *book* the hobbit" goes with a book's characters),
    nor whose relation it is on a longer path (bench/experiments/confidence.md)."""
    lexicon = load_word_relations()
    if lexicon is None:
        return 0.0
    words = asking_words(question, names)
    return max((lexicon.score(words, r) for r in ends), default=0.0)


#: the signals :func:`evidence_signals` gives
EVIDENCE_SIGNALS = ("ev_votes_top", "ev_vote_share", "ev_omega_top", "ev_rival_gap", "ev_sources", "dotted_names",
                    "ev_lex_last", "ev_unjoined")


def evidence_signals(inputs: DecisionInputs | None, top: str | None, lam: float, mu: float = _DEFAULTS.mu,
                     question: str = "", names: Sequence[str] = (), linked: int = 1) -> dict[str, float]:
    """The evidence-strength signals of the top answer (:class:`Evidence`, :func:`dotted_names`,
    :func:`asked_relation_fit` of ``question`` and its linked entities' ``names``, and ``ev_unjoined``: 1 when
    ``linked``, the number of linked entities, is two or more and the answer is not :attr:`Evidence.joined` — a
    conjunction whose other condition it does not meet); all 0 when there is no answer."""
    if inputs is None or top is None:
        return dict.fromkeys(EVIDENCE_SIGNALS, 0.0)
    ev = answer_evidence(inputs, top, lam, mu)
    return {"ev_votes_top": math.log1p(ev.votes_top), "ev_vote_share": ev.vote_share, "ev_omega_top": ev.omega_top,
            "ev_rival_gap": ev.rival_gap, "ev_sources": float(ev.sources), "dotted_names": dotted_names(ev.relations),
            "ev_lex_last": asked_relation_fit(ev.ends, question, names),
            "ev_unjoined": float(linked > 1 and not ev.joined)}


def recorded_signals(record: dict[str, Any], lam: float, mu: float = _DEFAULTS.mu) -> dict[str, float]:
    """:func:`evidence_signals` of a stored prediction (``predictions.jsonl``: its top answer and
    ``extra.decision.inputs``), so a signal added here needs no second run of the questions; equal to the live ones up
    to the record's rounding of ρ and η (4 decimals: under 1e-4 on the WebQSP and unanswerable runs)."""
    extra = record.get("extra") or {}
    inputs = (extra.get("decision") or {}).get("inputs")
    answers = record.get("answers") or []
    linked = extra.get("linked") or []
    names = [t for e in linked for t in (e.get("mention") or "", e.get("name") or e.get("id") or "")]
    return evidence_signals(DecisionInputs.from_dict(inputs) if inputs else None,
                            answers[0]["id"] if answers else None, lam, mu, record.get("question") or "", names,
                            len({e.get("id") for e in linked}))


@dataclass
class SGRResult:
    """Everything one question went through; ``prediction`` is what ``sgr eval`` scores."""

    question: Question
    method: str
    prediction: Prediction
    config: SGRConfig
    entities: list[LinkedEntity] = field(default_factory=list)
    schema: QuestionSchema | None = None
    subgraph: Subgraph | None = None
    generation: CypherGeneration | None = None
    compiled: CompiledQuery | None = None
    cypher_source: str | None = None  # the source whose A_v answered: "llm" | "model" (one of the model's paths,
    # compiled) | "compiled"; None when the vote decided
    candidates: list[Candidate] = field(default_factory=list)  # every source's candidates, valid or not (latest round)
    votes: list[Vote] = field(default_factory=list)  # the tally when the vote decided (or A_v voted: integrate)
    inputs: DecisionInputs | None = None  # what decide() read in the latest round
    round_inputs: list[DecisionInputs] = field(default_factory=list)  # … and in each round (bench/sgr_grid.py)
    decision: Decision | None = None
    scr_paths: list[ReasoningPath] = field(default_factory=list)  # SCR's proposals (path_retriever "scr"…)
    generated_text: str | None = None
    rounds: list[dict[str, Any]] = field(default_factory=list)  # one entry per reasoning round (bounded by max_rounds)
    hops: int = 0  # expansion depth of the latest round

    @property
    def route(self) -> str | None:
        return self.prediction.route

    def record(self, cands: list[Candidate], vote_paths: list[ReasoningPath], inputs: DecisionInputs,
               decision: Decision) -> None:
        """Write a round's decision into the trace: v and validity of each candidate, the tally (when the paths
        voted), the answers with their best ``paths_per_answer`` paths, the route and the deciding source."""
        pred = self.prediction
        for c, v, ok in zip(cands, decision.v, decision.valid):
            c.v, c.valid = v, ok
        self.candidates, self.inputs, self.decision = cands, inputs, decision
        self.round_inputs.append(inputs)

        def paths_of(a: DecidedAnswer) -> list[ReasoningPath]:
            paths = [p for i in a.candidates for p in cands[i].paths] + [vote_paths[i] for i in a.votes]
            unique = list({(tuple(p.nodes), tuple(p.relations)): p for p in reversed(paths)}.values())[::-1]
            return sorted(unique, key=lambda p: -p.score)[:self.config.paths_per_answer]

        voted = decision.route != "direct" or decision.stage == "integrated"
        self.votes = [Vote(a.key, a.text, a.score, paths_of(a), [decision.omegas[i] for i in a.votes])
                      for a in decision.tally] if voted else []
        pred.answers = [Answer(text=a.text, id=a.key, score=float(a.score), paths=paths_of(a))
                        for a in decision.answers]
        pred.route = decision.route
        stage = decision.stage or ""
        self.cypher_source = ("model" if stage.startswith("model") else stage) if stage in inputs.sources else None

    def signals(self) -> dict[str, float]:
        """The numbers :mod:`sgr.methods.confidence` calibrates (its module docstring): the top answer's candidate
        (v, δ, γ), whether any candidate was valid, the route and who carried it, the vote's share and margin, G_q's
        best path score and its lead, the model's best ρ, the linking, unchecked constraints, a relaxed round, how
        well G_q's best path matches the question (its terms ``path_sim``, ``rel_mean``, ``rel_last``, ``type_check``),
        and the top answer's evidence (:func:`evidence_signals`)."""
        pred, d = self.prediction, self.decision
        top = d.answers[0] if d is not None and d.answers else None
        cand = max((self.candidates[i] for i in top.candidates), key=lambda c: c.v, default=None) if top else None
        tally = [a.score for a in d.tally] if d is not None else []
        total = sum(tally)
        gq = [sp.score for sp in self.subgraph.schema_paths[:2]] if self.subgraph is not None else []
        best = self.subgraph.schema_paths[0].parts if self.subgraph is not None and self.subgraph.schema_paths else {}
        rhos = [p.rho for p in (self.schema.model_paths if self.schema else []) if p.rho == p.rho]
        source = (d.route_source if d is not None else None) or ""
        first = self.entities[0] if self.entities else None
        return {
            "v_top": float(cand.v) if cand else 0.0, "delta_top": float(cand.delta) if cand else 0.0,
            "gamma_top": float(cand.gamma) if cand else 0.0,
            "valid_any": float(any(c.valid for c in self.candidates)),
            "route_direct": float(pred.route == "direct"), "route_collaborative": float(pred.route == "collaborative"),
            **{f"source_{s}": float(source == s) for s in ("model", "plan", "compiled", "graph")},
            "vote_share": float(tally[0] / total) if total > 0 else 0.0,
            "vote_margin": float((tally[0] - tally[1]) / tally[0]) if len(tally) > 1 and tally[0] > 0 else
            float(bool(tally)),
            "gq_top": float(gq[0]) if gq else 0.0, "gq_margin": float(gq[0] - gq[1]) if len(gq) > 1 else
            float(gq[0]) if gq else 0.0,
            "rho_top": float(max(rhos)) if rhos else 0.0,
            "link_given": float(bool(first) and first.method in ("given", "mid")),
            "link_score": float(first.score) if first else 0.0,
            "unchecked": float(min(3, len(pred.extra.get("constraints_unchecked") or []))),
            "relaxed": float(len(self.rounds) > 1),
            **{f"gq_{k}": float(best.get(k, 0.0)) for k in ("path_sim", "rel_mean", "rel_last", "type_check")},
            **evidence_signals(self.inputs, pred.answers[0].id if pred.answers else None, self.config.lam,
                               self.config.mu, self.question.text, linked_names(self.entities),
                               len({e.id for e in self.entities})),
        }

    def decision_record(self) -> dict[str, Any]:
        """The latest round's decision inputs (compact: ≤ 50 voting paths by ω, ≤ 50 candidates by v) and outcome."""
        assert self.inputs is not None
        return {"inputs": self.inputs.to_dict(EVIDENCE_VOTES, self.config.lam, EVIDENCE_CANDIDATES, self.config.mu),
                "outcome": None if self.decision is None else self.decision.summary()}

    def evidence_triples(self) -> list[tuple[str, str, str]]:
        """Stored (head, relation, tail) triples of the answers' paths and the top paths."""
        seen: list[tuple[str, str, str]] = []
        for a in self.prediction.answers:
            for p in a.paths:
                seen += [t for t in p.triples() if t not in seen]
        for p in self.prediction.paths:
            seen += [t for t in p.triples() if t not in seen]
        return seen

    def evidence_nodes(self) -> list[dict[str, Any]]:
        names: dict[str, str | None] = {}
        for p in [p for a in self.prediction.answers for p in a.paths] + list(self.prediction.paths):
            for n, nm in zip(p.nodes, p.names or [None] * len(p.nodes)):
                names.setdefault(n, nm)
        answers = {a.id for a in self.prediction.answers}
        seeds = {e.id for e in self.entities}
        return [{"id": i, "name": nm, "answer": i in answers, "seed": i in seeds} for i, nm in names.items()]

    def evidence_edges(self) -> list[dict[str, str]]:
        return [{"source": h, "type": r, "target": t} for h, r, t in self.evidence_triples()]

    def evidence_cypher(self) -> str:
        """A statement to paste into Neo4j Browser that redraws the evidence subgraph."""
        triples = self.evidence_triples()
        if not triples:
            ids = [e.id for e in self.entities]
            return f"MATCH (n:Entity) WHERE n.id IN {cypher_literal(ids)} RETURN n"
        rows = ", ".join(cypher_literal([h, r, t]) for h, r, t in triples)
        return (f"UNWIND [{rows}] AS t\n"
                "MATCH (h:Entity {id: t[0]})-[r]->(x:Entity {id: t[2]}) WHERE type(r) = t[1]\n"
                "RETURN h, r, x")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view (``sgr ask --json``)."""
        pred = self.prediction
        gen = self.generation
        return {
            "question": self.question.text,
            "method": self.method,
            "route": pred.route,
            "error": pred.error,
            "answers": [{"text": a.text, "id": a.id, "score": round(a.score, 4),
                         "paths": [p.summary() for p in a.paths]}
                        for a in pred.answers],
            "entities": [dataclasses.asdict(e) | {"relation_types": e.relation_types[:10]} for e in self.entities],
            "schema": None if self.schema is None else {
                "relations": [{"name": r.name, "score": round(r.score, 4), "similarity": round(r.similarity, 4),
                               "picked_rank": r.picked_rank} for r in self.schema.relations],
                "ordered": self.schema.ordered, "constraints": [dataclasses.asdict(c) for c in self.schema.constraints],
                "mentions": self.schema.mentions, "source": self.schema.source, "exemplars": self.schema.exemplars,
                "model_paths": [{"relations": list(p.relations), "rho": None if p.rho != p.rho else round(p.rho, 4)}
                                for p in self.schema.model_paths],
                "plans": [{"relations": list(p.relations), "cos": round(p.rho, 4)} for p in self.schema.plans],
                "reply": self.schema.reply},
            "cypher": {
                "source": self.cypher_source,
                "ran": pred.cypher,
                "attempts": [] if gen is None else [
                    {"reply": a.reply, "query": a.query, "ok": a.ok, "rows": None if a.rows is None else len(a.rows),
                     "problems": [dataclasses.asdict(p) for p in a.problems], "error": a.error} for a in gen.attempts],
                "repairs": 0 if gen is None else gen.repairs,
            },
            "validation": [{"answer": c.text, "origin": c.origin, "gamma": round(c.gamma, 4),
                            "delta": round(c.delta, 4), "delta_source": c.delta_source, "v": round(c.v, 4),
                            "source": c.source, "valid": c.valid} for c in self.candidates[:50]],
            "votes": [{"answer": v.text, "support": round(v.support, 4), "paths": len(v.paths)} for v in self.votes[:20]],
            "top_paths": [{"text": p.render(), "score": round(p.score, 4)} for p in pred.paths],
            "scr_paths": [{"text": p.render(), "probability": round(p.score, 4)} for p in self.scr_paths],
            "subgraph": None if self.subgraph is None else {
                "schema_paths": [{"path": sp.render(self.subgraph.names.get(sp.seed)), "score": round(sp.score, 4),
                                  "answers": len(sp.walks), **{k: round(v, 4) for k, v in sp.parts.items()}}
                                 for sp in self.subgraph.schema_paths[:10]],
                "nodes": len(self.subgraph.nodes()), "edges": len(self.subgraph.edges()), "cost": self.subgraph.cost},
            "rounds": self.rounds,
            "generated_text": self.generated_text,
            "usage": dataclasses.asdict(pred.usage),
            "evidence_cypher": self.evidence_cypher(),
            "extra": pred.extra,
        }
