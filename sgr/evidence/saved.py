"""Saved evidence: the subgraph behind an answer, kept in Neo4j beside (never inside) the data.

* :func:`save_evidence` — one ``(:SgrQuestion {id, text, asked_at, answers, method, cypher, …})``
  node (``title`` repeats the text: it is the caption Neo4j Browser shows) and
  ``-[:SGR_EVIDENCE {rank, score, role}]->`` relationships to the evidence entities of
  :func:`sgr.evidence.graph.evidence_subgraph`. It only *creates* these; it never sets a property on, or
  adds a label or relationship between, data nodes. ``sgr stats`` leaves the label out of its counts
  (``sgr.graph.store.BOOKKEEPING_LABELS``). On a user's own graph (``graph: "property"``, a profiled prediction) the
  links go to the evidence nodes by element id, and the graph profile leaves the label and the type out
  (:func:`sgr.graph.profile.read_profile`): saving is the user's choice (``--save``), and ``sgr evidence clear``
  takes it all back.
* :func:`list_evidence`, :func:`load_evidence`, :func:`clear_evidence` — ``sgr evidence list|show|clear``.
  A loaded :class:`SavedQuestion` gives back its prediction, so it is drawn with the same
  :func:`sgr.evidence.graph.redraw_query` as unsaved evidence (:func:`sgr.evidence.inspect.inspect_saved`).
"""

from __future__ import annotations

import json
import uuid
import weakref
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from sgr.core.errors import InputError
from sgr.core.types import Answer, Prediction, ReasoningPath
from sgr.evidence.graph import (LABEL, ROLE_TOPIC, EvidenceGraph, EvidencePath, answer_ids, evidence_subgraph,
                                is_profiled)
from sgr.graph.store import GraphStore

SCHEMA = f"CREATE CONSTRAINT sgr_question_id IF NOT EXISTS FOR (q:{LABEL}) REQUIRE q.id IS UNIQUE"


_SCHEMA_DONE: "weakref.WeakSet[GraphStore]" = weakref.WeakSet()


def ensure_schema(store: GraphStore) -> None:
    """The uniqueness constraint on ``SgrQuestion.id`` (once per store object)."""
    if store not in _SCHEMA_DONE:
        store.write(SCHEMA)
        _SCHEMA_DONE.add(store)


def new_question_id() -> str:
    """A short random id (12 hex digits)."""
    return uuid.uuid4().hex[:12]


def _path_record(p: EvidencePath) -> dict[str, Any]:
    return {"rank": p.rank, "score": p.score, "nodes": p.nodes, "relations": p.relations,
            "directions": p.directions, "names": p.names, "source": p.source}


def save_evidence(store: GraphStore, question_text: str, prediction: Prediction, method: str,
                  graph: EvidenceGraph | None = None, topic_ids: list[str] | None = None) -> str:
    """Record ``prediction`` for ``question_text`` as an ``SgrQuestion`` with its evidence; return its id.

    One write transaction: ``CREATE`` the question node (answers, scores, the Cypher that ran, the
    rendered paths and their edges as parallel lists), then ``CREATE`` one ``SGR_EVIDENCE`` relationship
    per evidence entity the store holds. Data nodes are only ``MATCH``-ed, never changed.
    """
    ensure_schema(store)
    graph = graph or evidence_subgraph(store, prediction, topic_ids=topic_ids)
    qid = new_question_id()
    profiled = is_profiled(prediction)
    answers = answer_ids(store, prediction.answers, profiled)
    triples = graph.triples()
    props = {
        "id": qid,
        "text": question_text,
        "title": question_text,  # the caption Neo4j Browser picks for the node
        "question_id": prediction.question_id,
        "method": method or prediction.method,
        "route": prediction.route,
        "answers": [a.text for a, _ in answers],
        "answer_ids": [eid or "" for _, eid in answers],
        "answer_scores": [float(a.score) for a, _ in answers],
        "cypher": list(prediction.cypher),
        "paths": [p.text for p in graph.paths],
        "path_scores": [p.score for p in graph.paths],
        "paths_json": json.dumps([_path_record(p) for p in graph.paths]),
        "triple_heads": [t[0] for t in triples],
        "triple_types": [t[1] for t in triples],
        "triple_tails": [t[2] for t in triples],
        "error": prediction.error,
        "graph": "property" if profiled else "entity",
    }
    links = [{"id": n.id, "rank": n.rank, "score": n.score, "role": n.role} for n in graph.nodes if n.in_graph]
    store.write(
        "CREATE (q:SgrQuestion) SET q = $props, q.asked_at = datetime($asked_at) "
        "WITH q UNWIND $links AS l "
        + ("MATCH (e) WHERE elementId(e) = l.id " if profiled else "MATCH (e:Entity {id: l.id}) ") +
        "CREATE (q)-[:SGR_EVIDENCE {rank: l.rank, score: l.score, role: l.role}]->(e)",
        {"props": {k: v for k, v in props.items() if v is not None},
         "asked_at": datetime.now(timezone.utc).isoformat(), "links": links})
    return qid


# -- reading back ---------------------------------------------------------------------------------
@dataclass
class EvidenceLink:
    """One ``SGR_EVIDENCE`` relationship, with the entity it points at."""

    id: str
    name: str | None
    role: str
    rank: int
    score: float


@dataclass
class SavedQuestion:
    """A saved ``SgrQuestion`` and its evidence links."""

    id: str
    text: str
    asked_at: str
    method: str
    answers: list[str]
    answer_ids: list[str]
    answer_scores: list[float]
    cypher: list[str]
    paths: list[dict[str, Any]]
    question_id: str = ""
    route: str | None = None
    error: str | None = None
    links: list[EvidenceLink] = field(default_factory=list)
    graph: str = "entity"  # "property": a user's own graph (element ids)

    def to_prediction(self) -> Prediction:
        """The saved run as a :class:`Prediction` (for the HTML view of ``sgr evidence show --html``)."""
        answers = [Answer(text=t, id=(self.answer_ids[i] or None) if i < len(self.answer_ids) else None,
                          score=self.answer_scores[i] if i < len(self.answer_scores) else 0.0)
                   for i, t in enumerate(self.answers)]
        paths = [ReasoningPath(nodes=p["nodes"], relations=p["relations"], score=p["score"], names=p["names"],
                               directions=p["directions"], source=p.get("source", "")) for p in self.paths]
        return Prediction(question_id=self.question_id or self.id, answers=answers, paths=paths, method=self.method,
                          route=self.route, cypher=list(self.cypher), error=self.error,
                          extra={"profile": "property"} if self.graph == "property" else {})

    def topic_ids(self) -> list[str]:
        return [link.id for link in self.links if link.role == ROLE_TOPIC]


@dataclass
class QuestionSummary:
    """One line of ``sgr evidence list``."""

    id: str
    asked_at: str
    method: str
    text: str
    answers: list[str]
    evidence: int


def list_evidence(store: GraphStore, limit: int = 50) -> list[QuestionSummary]:
    """Saved questions, newest first."""
    rows = store.read(
        "MATCH (q:SgrQuestion) WITH q ORDER BY q.asked_at DESC LIMIT $limit "
        "RETURN q.id AS id, toString(q.asked_at) AS asked_at, coalesce(q.method, '') AS method, q.text AS text, "
        "coalesce(q.answers, []) AS answers, COUNT { (q)-[:SGR_EVIDENCE]->() } AS evidence", {"limit": limit})
    return [QuestionSummary(**r) for r in rows]


def load_evidence(store: GraphStore, question_id: str) -> SavedQuestion:
    """The saved question ``question_id``; raises :class:`InputError` when there is none."""
    rows = store.read(
        "MATCH (q:SgrQuestion {id: $id}) "
        "OPTIONAL MATCH (q)-[r:SGR_EVIDENCE]->(e) WHERE e:Entity OR q.graph = 'property' "
        "WITH q, r, e ORDER BY r.rank, r.role "
        "RETURN q {.*, asked_at: toString(q.asked_at)} AS q, "
        "collect(CASE WHEN e IS NULL THEN null ELSE "
        "{id: CASE WHEN q.graph = 'property' THEN elementId(e) ELSE e.id END, name: e.name, role: r.role, "
        "rank: r.rank, score: r.score} END) AS links",
        {"id": question_id})
    if not rows:
        raise InputError(f"no saved evidence with id {question_id!r}: see `sgr evidence list`")
    q = rows[0]["q"]
    paths = json.loads(q.get("paths_json") or "[]")
    named = {n: m for p in paths for n, m in zip(p["nodes"], p["names"]) if m}  # a profiled graph's naming property
    links = [EvidenceLink(**{**link, "name": link["name"] or named.get(link["id"])}) for link in rows[0]["links"]]
    return SavedQuestion(
        id=q["id"], text=q.get("text", ""), asked_at=q.get("asked_at", ""), method=q.get("method", ""),
        answers=list(q.get("answers", [])), answer_ids=list(q.get("answer_ids", [])),
        answer_scores=[float(x) for x in q.get("answer_scores", [])], cypher=list(q.get("cypher", [])),
        paths=paths, question_id=q.get("question_id", ""), route=q.get("route"), error=q.get("error"), links=links,
        graph=q.get("graph", "entity"))


def clear_evidence(store: GraphStore, question_id: str | None = None) -> int:
    """Delete one saved question (or all of them) with its ``SGR_EVIDENCE`` links; return how many."""
    if question_id is not None:
        rows = store.write("MATCH (q:SgrQuestion {id: $id}) DETACH DELETE q RETURN count(*) AS n", {"id": question_id})
        return rows[0]["n"] if rows else 0
    total = 0
    while True:
        n = store.write("MATCH (q:SgrQuestion) WITH q LIMIT 5000 DETACH DELETE q RETURN count(*) AS n")[0]["n"]
        total += n
        if n == 0:
            return total
