"""Saved evidence: the subgraph behind an answer, kept in Neo4j beside (never inside) the data.

A method's :class:`~sgr.core.types.Prediction` names its evidence as reasoning paths
``v0 -r1-> v1 … -rk-> vk`` (entity ids, relation types, stored directions) plus ranked answers.
This module turns that into an *evidence subgraph* and records it:

* :func:`evidence_subgraph` — the union of the paths' nodes and edges, looked up in the store
  (names, ``:CVT``, and whether each edge really exists there). Each node gets one role, by
  priority ``answer > topic > path``: answers are the prediction's answer entities, topic nodes the
  paths' start nodes (plus any given topic ids), path nodes everything else on a path. ``rank`` is
  the answer's rank for answers and the best (1-based) rank of a path through the node otherwise;
  ``score`` is the matching answer or path score.
* :func:`save_evidence` — one ``(:SgrQuestion {id, text, asked_at, answers, method, cypher, …})``
  node (``title`` repeats the text: it is the caption Neo4j Browser shows) and ``-[:SGR_EVIDENCE {rank, score, role}]->`` relationships to the evidence entities. It
  only *creates* these; it never sets a property on, or adds a label or relationship between, data
  nodes. ``sgr stats`` leaves the label out of its counts (``sgr.graph.store.BOOKKEEPING_LABELS``).
* :func:`redraw_query` — a literal Cypher query (no parameters, so it fits in a Neo4j Browser URL)
  that draws a saved question with its evidence entities and the exact data relationships of its
  paths; :func:`paths_query` draws an unsaved prediction's paths the same way.
* :func:`list_evidence`, :func:`load_evidence`, :func:`clear_evidence` — ``sgr evidence
  list|show|clear``.
* :func:`inspect_prediction` — what ``sgr ask --save/--html`` and ``sgr eval --save-evidence``
  call: save, write the HTML view, and build the Browser URL in one step.
"""

from __future__ import annotations

import json
import uuid
import weakref
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sgr.core.errors import InputError
from sgr.graph.store import GraphStore
from sgr.core.types import Answer, Prediction, ReasoningPath

LABEL = "SgrQuestion"
REL = "SGR_EVIDENCE"
ROLE_TOPIC, ROLE_PATH, ROLE_ANSWER = "topic", "path", "answer"
ROLES = (ROLE_TOPIC, ROLE_PATH, ROLE_ANSWER)
_ROLE_PRIORITY = {ROLE_ANSWER: 0, ROLE_TOPIC: 1, ROLE_PATH: 2}
SCHEMA = "CREATE CONSTRAINT sgr_question_id IF NOT EXISTS FOR (q:SgrQuestion) REQUIRE q.id IS UNIQUE"


# -- the evidence subgraph ----------------------------------------------------------------------
@dataclass
class EvidenceNode:
    """An entity of the evidence subgraph."""

    id: str
    name: str | None
    role: str  # answer > topic > path
    rank: int  # 1-based: answer rank, else the best rank of a path through the node
    score: float
    cvt: bool = False
    in_graph: bool = True  # False: the prediction names an id the store does not hold

    @property
    def label(self) -> str:
        return self.name or self.id


@dataclass
class EvidenceEdge:
    """A data relationship on an evidence path, in its stored direction."""

    source: str
    type: str
    target: str
    rank: int  # best rank of a path using it
    score: float
    in_graph: bool = True  # False: no such relationship in the store (an invented edge)


@dataclass
class EvidencePath:
    """A ranked reasoning path as the prediction gave it."""

    rank: int
    score: float
    nodes: list[str]
    relations: list[str]
    directions: list[str]
    names: list[str | None]
    source: str
    text: str  # ``Jamaica -[location.country.languages_spoken]-> Jamaican English``


@dataclass
class EvidenceGraph:
    """Nodes, edges and paths of one prediction's evidence."""

    nodes: list[EvidenceNode] = field(default_factory=list)
    edges: list[EvidenceEdge] = field(default_factory=list)
    paths: list[EvidencePath] = field(default_factory=list)

    def node(self, entity_id: str) -> EvidenceNode | None:
        return next((n for n in self.nodes if n.id == entity_id), None)

    def ids(self, role: str) -> list[str]:
        return [n.id for n in self.nodes if n.role == role]

    @property
    def missing(self) -> list[str]:
        """Ids the prediction names that are not entities of the store."""
        return [n.id for n in self.nodes if not n.in_graph]

    def triples(self) -> list[tuple[str, str, str]]:
        return [(e.source, e.type, e.target) for e in self.edges]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _unique_paths(prediction: Prediction) -> list[ReasoningPath]:
    """Prediction.paths plus each answer's paths, de-duplicated, best score first (stable)."""
    seen: set[tuple] = set()
    out: list[ReasoningPath] = []
    for p in list(prediction.paths) + [p for a in prediction.answers for p in a.paths]:
        if not p.nodes:
            continue
        dirs = tuple(p.directions[i] if i < len(p.directions) else "out" for i in range(len(p.relations)))
        key = (tuple(p.nodes), tuple(p.relations), dirs)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return sorted(out, key=lambda p: -p.score)


def _answer_ids(store: GraphStore, answers: list[Answer]) -> list[tuple[Answer, str | None]]:
    """Each answer with its entity id: ``Answer.id``, else its text when that is an entity id."""
    texts = [a.text for a in answers if not a.id]
    found: set[str] = set()
    if texts:
        rows = store.read("MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id AS id", {"ids": texts})
        found = {r["id"] for r in rows}
    return [(a, a.id or (a.text if a.text in found else None)) for a in answers]


def evidence_subgraph(store: GraphStore, prediction: Prediction, topic_ids: list[str] | None = None,
                      max_paths: int = 50) -> EvidenceGraph:
    """The evidence subgraph of ``prediction``: its top ``max_paths`` paths, answers and topics.

    ``topic_ids`` adds the question's linked topic entities (those the store holds) even when no
    path starts from them.

    Node names and ``:CVT`` come from the store; each path edge is checked against the store in
    its recorded direction (``ReasoningPath.directions``), so an edge a method invented shows up
    with ``in_graph=False`` instead of being silently drawn as fact.
    """
    paths = _unique_paths(prediction)[:max_paths]
    roles: dict[str, tuple[str, int, float]] = {}  # id -> (role, rank, score)

    def claim(eid: str, role: str, rank: int, score: float) -> None:
        cur = roles.get(eid)
        if cur is None or (_ROLE_PRIORITY[role], rank) < (_ROLE_PRIORITY[cur[0]], cur[1]):
            roles[eid] = (role, rank, score)

    answers = _answer_ids(store, prediction.answers)
    for i, (ans, eid) in enumerate(answers, start=1):
        if eid:
            claim(eid, ROLE_ANSWER, i, float(ans.score))
    ev_paths: list[EvidencePath] = []
    edges: dict[tuple[str, str, str], EvidenceEdge] = {}
    path_names: dict[str, str] = {}
    for rank, p in enumerate(paths, start=1):
        claim(p.nodes[0], ROLE_TOPIC, rank, float(p.score))
        for eid in p.nodes[1:]:
            claim(eid, ROLE_PATH, rank, float(p.score))
        for i, eid in enumerate(p.nodes):
            if i < len(p.names) and p.names[i]:
                path_names.setdefault(eid, p.names[i])
        for h, r, t in p.triples():
            if (h, r, t) not in edges:
                edges[(h, r, t)] = EvidenceEdge(h, r, t, rank, float(p.score))
        dirs = [p.directions[i] if i < len(p.directions) else "out" for i in range(len(p.relations))]
        ev_paths.append(EvidencePath(rank=rank, score=float(p.score), nodes=list(p.nodes), relations=list(p.relations),
                                     directions=dirs, names=list(p.names), source=p.source, text=p.render()))
    given_only = [eid for eid in topic_ids or [] if eid not in roles]
    for eid in topic_ids or []:
        claim(eid, ROLE_TOPIC, 1, roles.get(eid, ("", 1, 0.0))[2])

    ids = list(roles)
    info: dict[str, dict[str, Any]] = {}
    if ids:
        rows = store.read("MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id AS id, e.name AS name, e:CVT AS cvt",
                          {"ids": ids})
        info = {r["id"]: r for r in rows}
    existing: set[tuple[str, str, str]] = set()
    if edges:
        rows = store.read(
            "UNWIND $triples AS t MATCH (h:Entity {id: t[0]})-[r]->(x:Entity {id: t[2]}) WHERE type(r) = t[1] "
            "RETURN DISTINCT t[0] AS h, t[1] AS r, t[2] AS t", {"triples": [list(k) for k in edges]})
        existing = {(r["h"], r["r"], r["t"]) for r in rows}
    for key, edge in edges.items():
        edge.in_graph = key in existing
    for eid in given_only:  # a dataset's topic name that is no entity id here: not evidence
        if eid not in info:
            del roles[eid]

    nodes = []
    for eid, (role, rank, score) in roles.items():
        row = info.get(eid)
        nodes.append(EvidenceNode(id=eid, name=(row or {}).get("name") or path_names.get(eid), role=role, rank=rank,
                                  score=score, cvt=bool((row or {}).get("cvt")), in_graph=row is not None))
    nodes.sort(key=lambda n: (_ROLE_PRIORITY[n.role], n.rank, n.label))
    return EvidenceGraph(nodes=nodes, edges=sorted(edges.values(), key=lambda e: (e.rank, e.source, e.type)),
                         paths=ev_paths)


# -- Cypher literals ------------------------------------------------------------------------------
def cypher_string(value: str) -> str:
    """A Cypher string literal (single quotes; backslash and quote escaped)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def redraw_query(question_id: str) -> str:
    """Literal Cypher that draws a saved question's evidence (for Neo4j Browser or any driver).

    Returns one column ``p`` of paths: ``(q:SgrQuestion)-[:SGR_EVIDENCE]->(entity)`` for every
    evidence entity, then each stored path edge ``(head)-[rel]->(tail)`` exactly as saved
    (``q.triple_heads/types/tails``), so the drawing shows the relations the method used, not
    every relation among the entities.
    """
    qid = cypher_string(question_id)
    return (f"MATCH p = (q:SgrQuestion {{id: {qid}}})-[:SGR_EVIDENCE]->(:Entity)\n"
            "RETURN p\n"
            "UNION ALL\n"
            f"MATCH (q:SgrQuestion {{id: {qid}}})\n"
            "UNWIND range(0, size(q.triple_types) - 1) AS i\n"
            "MATCH p = (:Entity {id: q.triple_heads[i]})-[r]->(:Entity {id: q.triple_tails[i]})\n"
            "WHERE type(r) = q.triple_types[i]\n"
            "RETURN p")


def paths_query(graph: EvidenceGraph) -> str:
    """Literal Cypher that draws an (unsaved) evidence subgraph: its path edges and lone nodes."""
    triples = ", ".join("[" + ", ".join(cypher_string(x) for x in t) + "]" for t in graph.triples())
    lone = sorted({n.id for n in graph.nodes} - {x for e in graph.edges for x in (e.source, e.target)})
    ids = ", ".join(cypher_string(x) for x in lone)
    return (f"UNWIND [{triples}] AS t\n"
            "MATCH p = (:Entity {id: t[0]})-[r]->(:Entity {id: t[2]})\n"
            "WHERE type(r) = t[1]\n"
            "RETURN p\n"
            "UNION ALL\n"
            f"MATCH p = (e:Entity) WHERE e.id IN [{ids}]\n"
            "RETURN p")


# -- saving ---------------------------------------------------------------------------------------
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
    answers = _answer_ids(store, prediction.answers)
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
    }
    links = [{"id": n.id, "rank": n.rank, "score": n.score, "role": n.role} for n in graph.nodes if n.in_graph]
    store.write(
        "CREATE (q:SgrQuestion) SET q = $props, q.asked_at = datetime($asked_at) "
        "WITH q UNWIND $links AS l "
        "MATCH (e:Entity {id: l.id}) "
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

    def to_prediction(self) -> Prediction:
        """The saved run as a :class:`Prediction` (for the HTML view of ``sgr evidence show --html``)."""
        answers = [Answer(text=t, id=(self.answer_ids[i] or None) if i < len(self.answer_ids) else None,
                          score=self.answer_scores[i] if i < len(self.answer_scores) else 0.0)
                   for i, t in enumerate(self.answers)]
        paths = [ReasoningPath(nodes=p["nodes"], relations=p["relations"], score=p["score"], names=p["names"],
                               directions=p["directions"], source=p.get("source", "")) for p in self.paths]
        return Prediction(question_id=self.question_id or self.id, answers=answers, paths=paths, method=self.method,
                          route=self.route, cypher=list(self.cypher), error=self.error)

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
        "OPTIONAL MATCH (q)-[r:SGR_EVIDENCE]->(e:Entity) "
        "WITH q, r, e ORDER BY r.rank, r.role "
        "RETURN q {.*, asked_at: toString(q.asked_at)} AS q, "
        "collect(CASE WHEN e IS NULL THEN null ELSE "
        "{id: e.id, name: e.name, role: r.role, rank: r.rank, score: r.score} END) AS links",
        {"id": question_id})
    if not rows:
        raise InputError(f"no saved evidence with id {question_id!r}: see `sgr evidence list`")
    q = rows[0]["q"]
    return SavedQuestion(
        id=q["id"], text=q.get("text", ""), asked_at=q.get("asked_at", ""), method=q.get("method", ""),
        answers=list(q.get("answers", [])), answer_ids=list(q.get("answer_ids", [])),
        answer_scores=[float(x) for x in q.get("answer_scores", [])], cypher=list(q.get("cypher", [])),
        paths=json.loads(q.get("paths_json") or "[]"), question_id=q.get("question_id", ""), route=q.get("route"),
        error=q.get("error"), links=[EvidenceLink(**link) for link in rows[0]["links"]])


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


# -- one call for `sgr ask` / `sgr eval` ----------------------------------------------------------
@dataclass
class Inspection:
    """What ``sgr ask --save/--html`` prints: where to look at the evidence."""

    query: str  # redraw query (saved) or paths query (unsaved)
    question_id: str | None = None
    browser_url: str | None = None
    html: Path | None = None

    def lines(self) -> list[str]:
        out = []
        if self.question_id:
            out.append(f"evidence saved as {self.question_id} (`sgr evidence show {self.question_id}`)")
        if self.html:
            out.append(f"HTML view: {self.html}")
        if self.browser_url:
            out.append(f"Neo4j Browser: {self.browser_url}")
        else:
            out.append("Neo4j Browser: not served (start Neo4j with `sgr neo4j start --browser`)")
        out.append("Cypher to draw the evidence:")
        out.append(self.query)
        return out


def inspect_prediction(store: GraphStore, question_text: str, prediction: Prediction, method: str,
                       save: bool = False, html: Path | str | None = None,
                       topic_ids: list[str] | None = None,
                       browser_server: "browser.BrowserServer | None" = None) -> Inspection:  # noqa: F821
    """Save the evidence (``save``), write the HTML view (``html``) and build the Browser URL.

    The Browser URL opens Neo4j Browser (``browser_server``, else the one ``sgr neo4j start
    --browser`` serves, if any) with the redraw query of the saved question, or with
    :func:`paths_query` when nothing was saved.
    """
    from sgr.graph import browser

    graph = evidence_subgraph(store, prediction, topic_ids=topic_ids)
    qid = save_evidence(store, question_text, prediction, method, graph=graph) if save else None
    query = redraw_query(qid) if qid else paths_query(graph)
    out_html = None
    if html:
        from sgr.evidence.html import write_html

        out_html = write_html(html, question_text, prediction, graph, question_id=qid, redraw=query)
    server = browser_server or browser.running()
    url = browser.browser_url_for(query, server) if server else None
    return Inspection(query=query, question_id=qid, browser_url=url, html=out_html)
