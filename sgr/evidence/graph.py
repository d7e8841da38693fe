"""The evidence subgraph of a prediction, read from Neo4j, and the one Cypher query that draws it.

A method's :class:`~sgr.core.types.Prediction` names its evidence as reasoning paths
``v0 -r1-> v1 … -rk-> vk`` (entity ids, relation types, stored directions) plus ranked answers.

* :func:`evidence_subgraph` — the union of the paths' nodes and edges, looked up in the store
  (names, ``:CVT``, and whether each edge really exists there). Each node gets one role, by
  priority ``answer > topic > path``: answers are the prediction's answer entities, topic nodes the
  paths' start nodes (plus any given topic ids), path nodes everything else on a path. ``rank`` is
  the answer's rank for answers and the best (1-based) rank of a path through the node otherwise;
  ``score`` is the matching answer or path score.
* :func:`redraw_query` — the one query that draws evidence (Neo4j Browser, any driver): literal
  Cypher, no parameters, so it fits in a Browser URL. It returns the exact data relationships of the
  paths (not every relationship among the entities), the entities on no path, and, for saved
  evidence, the ``(:SgrQuestion)-[:SGR_EVIDENCE]->(entity)`` links (:mod:`sgr.evidence.saved`).

On a user's own graph (a prediction of :mod:`sgr.methods.sgr.profiled`: :func:`is_profiled`) nodes are named by
their element ids and by the naming property of their label in the graph profile (:mod:`sgr.graph.profile`); a node
of a label without one is a compound-value node, drawn as sgr draws a ``:CVT``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sgr.core.text import cypher_literal
from sgr.core.types import Answer, Prediction, ReasoningPath
from sgr.graph.profile import profile_for
from sgr.graph.store import EVIDENCE_REL, GraphStore

ROLE_TOPIC, ROLE_PATH, ROLE_ANSWER = "topic", "path", "answer"
ROLES = (ROLE_TOPIC, ROLE_PATH, ROLE_ANSWER)
_ROLE_PRIORITY = {ROLE_ANSWER: 0, ROLE_TOPIC: 1, ROLE_PATH: 2}
#: Label and relationship type of saved evidence (written by :mod:`sgr.evidence.saved`).
LABEL = "SgrQuestion"
REL = EVIDENCE_REL  # one name for the link, defined by the store


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

    @property
    def missing(self) -> list[str]:
        """Ids the prediction names that are not entities of the store."""
        return [n.id for n in self.nodes if not n.in_graph]

    def triples(self) -> list[tuple[str, str, str]]:
        return [(e.source, e.type, e.target) for e in self.edges]


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


def is_profiled(prediction: Prediction) -> bool:
    """Whether ``prediction`` answers over a user's own graph (its ids are element ids; :mod:`sgr.graph.profile`)."""
    return prediction.extra.get("profile") == "property"


#: The nodes a prediction names, with their names and whether they are compound-value nodes: sgr's own shape, and a
#: profiled graph (element ids; ``$names``: label → naming property, none for a compound-value label).
NODES = {False: "MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id AS id, e.name AS name, e:CVT AS cvt",
         True: "MATCH (e) WHERE elementId(e) IN $ids WITH e, [l IN labels(e) WHERE $names[l] IS NOT NULL | "
               "e[$names[l]]] AS named RETURN elementId(e) AS id, head(named) AS name, size(named) = 0 AS cvt"}
#: The stored edges among triples ``[head, type, tail]``, matched in their stored direction.
EDGES = {False: "MATCH (h:Entity {id: t[0]})-[r]->(x:Entity {id: t[2]}) WHERE type(r) = t[1]",
         True: "MATCH (h) WHERE elementId(h) = t[0] MATCH (h)-[r]->(x) WHERE elementId(x) = t[2] AND type(r) = t[1]"}


def answer_ids(store: GraphStore, answers: list[Answer], profiled: bool = False) -> list[tuple[Answer, str | None]]:
    """Each answer with its entity id: ``Answer.id``, else its text when that is an entity id (on sgr's own graphs;
    a profiled graph's answers carry their node's element id, a literal none)."""
    texts = [a.text for a in answers if not a.id and not profiled]
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

    profiled = is_profiled(prediction)
    answers = answer_ids(store, prediction.answers, profiled)
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
        names = ({lb: lp.name_property for lb, lp in profile_for(store).labels.items() if lp.name_property}
                 if profiled else {})
        info = {r["id"]: r for r in store.read(NODES[profiled], {"ids": ids, "names": names})}
    existing: set[tuple[str, str, str]] = set()
    if edges:
        rows = store.read(f"UNWIND $triples AS t {EDGES[profiled]} RETURN DISTINCT t[0] AS h, t[1] AS r, t[2] AS t",
                          {"triples": [list(k) for k in edges]})
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


def _list_literal(items: Sequence[Any]) -> str:
    """A Cypher list literal with one item per line (short lines read well, and stay whole, in Browser's editor)."""
    if not items:
        return "[]"
    return "[\n" + ",\n".join("  " + cypher_literal(x) for x in items) + "\n]"


def redraw_query(*, question_id: str | None = None, triples: Iterable[Sequence[str]] = (),
                 node_ids: Iterable[str] = (), profiled: bool = False) -> str:
    """The one literal Cypher query that draws evidence: one column ``p`` of paths.

    Its core matches each evidence edge ``t = [head id, relation type, tail id]`` exactly, in its stored
    direction, so the drawing shows the relations the method used (not every relation among the entities):
    ``MATCH p = (:Entity {id: t[0]})-[r]->(:Entity {id: t[2]}) WHERE type(r) = t[1]``. The edges come from

    * saved evidence (``question_id``): the question node's ``triple_heads/types/tails`` (as
      :func:`sgr.evidence.saved.save_evidence` wrote them), after the question's ``SGR_EVIDENCE`` links, so
      the query stays a few lines long whatever the size of the evidence;
    * unsaved evidence: ``triples`` (:meth:`EvidenceGraph.triples`) as literals, one per line, after which
      the ``node_ids`` on no edge (lone answers or topics) are drawn too.

    On a profiled graph (``profiled``) the ids are element ids: ``MATCH p = (h)-[r]->(x) WHERE elementId(h) = t[0]
    …``.
    """
    parts = []
    if question_id is not None:
        q = f"(q:{LABEL} {{id: {cypher_literal(question_id)}}})"
        parts.append(f"MATCH p = {q}-[:{REL}]->({'' if profiled else ':Entity'})\nRETURN p")
        source = (f"MATCH {q}\n"
                  "UNWIND range(0, size(q.triple_types) - 1) AS i\n"
                  "WITH [q.triple_heads[i], q.triple_types[i], q.triple_tails[i]] AS t\n")
        lone: list[str] = []
    else:
        edges = [list(t) for t in triples]
        source = f"UNWIND {_list_literal(edges)} AS t\n"
        lone = sorted(set(node_ids) - {x for t in edges for x in (t[0], t[2])})
    if profiled:
        parts.append(source + "MATCH p = (h)-[r]->(x)\n"
                              "WHERE elementId(h) = t[0] AND elementId(x) = t[2] AND type(r) = t[1]\n"
                              "RETURN p")
    else:
        parts.append(source + "MATCH p = (:Entity {id: t[0]})-[r]->(:Entity {id: t[2]})\n"
                              "WHERE type(r) = t[1]\n"
                              "RETURN p")
    if lone:
        node = "(e) WHERE elementId(e)" if profiled else "(e:Entity) WHERE e.id"
        parts.append(f"MATCH p = {node} IN {_list_literal(lone)}\nRETURN p")
    return "\nUNION ALL\n".join(parts)
