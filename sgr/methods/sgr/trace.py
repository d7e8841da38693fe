"""The trace of one SGR question (:class:`SGRResult`) and its JSON view (``sgr ask --json``).

It holds everything the question went through: the linked entities, S_q, G_q, the Cypher attempts, the
validated candidates and the collaborative votes (each round), the answers with their paths, and a Cypher
statement that redraws the evidence in Neo4j Browser.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from cypher.compile import CompiledQuery
from cypher.repair import CypherGeneration
from sgr.core.text import cypher_literal
from sgr.core.types import Prediction, Question, ReasoningPath
from sgr.methods.sgr.config import SGRConfig
from sgr.methods.sgr.reasoning import Candidate, Vote
from sgr.methods.sgr.schema import QuestionSchema
from sgr.methods.sgr.subgraph import Subgraph
from sgr.retrieval.entities import LinkedEntity


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
    cypher_source: str | None = None  # "llm" | "model" (the model's path, compiled) | "compiled" | None
    candidates: list[Candidate] = field(default_factory=list)
    rejected: list[Candidate] = field(default_factory=list)  # candidates of the model's route that failed validation
    votes: list[Vote] = field(default_factory=list)
    scr_paths: list[ReasoningPath] = field(default_factory=list)  # SCR's proposals (path_retriever "scr"…)
    generated_text: str | None = None
    rounds: list[dict[str, Any]] = field(default_factory=list)  # one entry per reasoning round (bounded by max_rounds)
    hops: int = 0  # expansion depth of the latest round

    @property
    def route(self) -> str | None:
        return self.prediction.route

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
                            "valid": c.valid} for c in (self.rejected + self.candidates)[:50]],
            "votes": [{"answer": v.text, "support": round(v.support, 4), "paths": len(v.paths)} for v in self.votes[:20]],
            "top_paths": [{"text": p.render(), "score": round(p.score, 4)} for p in pred.paths],
            "scr_paths": [{"text": p.render(), "probability": round(p.score, 4)} for p in self.scr_paths],
            "subgraph": None if self.subgraph is None else {
                "schema_paths": [{"path": sp.render(self.subgraph.names.get(sp.seed)), "score": round(sp.score, 4),
                                  "answers": len(sp.walks), **{k: round(v, 4) for k, v in sp.parts.items()}}
                                 for sp in self.subgraph.schema_paths[:10]],
                "nodes": len(self.subgraph.nodes()), "edges": len(self.subgraph.edges())},
            "rounds": self.rounds,
            "generated_text": self.generated_text,
            "usage": dataclasses.asdict(pred.usage),
            "evidence_cypher": self.evidence_cypher(),
            "extra": pred.extra,
        }


def route_source(result: SGRResult) -> str | None:
    """Where the final answers came from: ``"model"`` (the model's Cypher, or a path the model proposed —
    compiled, validated or voted), ``"compiled"`` (the scorer's best G_q path alone), ``"graph"`` (votes of G_q
    paths the model did not propose), or None without answers."""
    pred = result.prediction
    if not pred.answers:
        return None
    proposed = {tuple(p.relations) for p in (result.schema.model_paths if result.schema else [])}
    if pred.route == "direct":
        if result.cypher_source in ("llm", "model"):
            return "model"
        top = pred.answers[0].paths[0].relations if pred.answers[0].paths else []
        return "model" if tuple(top) in proposed else "compiled"
    if pred.route == "collaborative":
        return "model" if any(tuple(p.relations) in proposed for p in pred.answers[0].paths) else "graph"
    return pred.route
