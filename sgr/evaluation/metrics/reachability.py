"""The reachability ceiling: the share of questions with a gold answer within k hops of a topic entity.

A method that only walks the loaded graph from the topic entities cannot answer a question whose
gold answers are not in the graph or lie farther than the hops it walks; the share of questions for
which some gold answer is within ``k`` *undirected* hops of some topic entity is therefore an upper
bound for such methods (the "answer coverage" of retrieval-based KGQA, e.g. SubgraphRAG, Li et al.
2024, §5, and GNN-RAG, Mavromatis & Karypis 2024, Table 1). Report it beside every score.

Computed in Neo4j, batched (``UNWIND`` over questions), with ``shortestPath`` between each resolved
topic node and each resolved answer node (a bidirectional breadth-first search, cheap even through
hubs). Questions without a topic or answer node in the graph are unreachable; an answer that is
itself a topic entity is at distance 0.

CVT collapse (Freebase compound-value nodes, ``:CVT``): with ``collapse_cvt``, a hop *into* a CVT
node does not count, so ``person -> position_held(CVT) -> office`` is one hop. It is computed on the
edge-shortest path of each (topic, answer) pair, searched up to ``2k`` edges: the effective length is
``length(p) - #interior CVT nodes``. Because the edge-shortest path need not be the one with the
fewest non-CVT hops, this collapsed ceiling is a slight under-estimate (never an over-estimate).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sgr.retrieval.entities import EntityLinker
from sgr.graph.store import GraphStore
from sgr.core.types import Question

DEFAULT_K = 2


@dataclass(frozen=True)
class Reachability:
    """Whether one question's gold answers can be reached from its topic entities."""

    question_id: str
    k: int
    reachable: bool  # some gold answer within k undirected edges of some topic entity
    reachable_cvt: bool | None  # same with CVT hops free; None when not computed
    topics_found: int  # topic entities found in the graph
    answers_found: int  # gold answers found in the graph


def graph_has_cvt(store: GraphStore) -> bool:
    return bool(store.read("MATCH (c:CVT) RETURN 1 AS x LIMIT 1"))


def graph_has_bookkeeping_rels(store: GraphStore) -> bool:
    """True when sgr's own ``SGR_*`` relationships (evidence) exist and must be kept out of paths."""
    return any(t.startswith("SGR_") for t in (r["t"] for r in store.read(
        "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType AS t")))


def _query(max_len: int, exclude_sgr: bool, collapse_cvt: bool) -> str:
    where = ("WHERE none(r IN relationships(p) WHERE type(r) STARTS WITH 'SGR_') "
             if exclude_sgr else "")
    head = ("UNWIND $rows AS row OPTIONAL CALL (row) { "
            "MATCH (t:Entity) WHERE t.id IN row.topics "
            "MATCH (a:Entity) WHERE a.id IN row.answers AND a <> t "
            f"MATCH p = shortestPath((t)-[*..{int(max_len)}]-(a)) {where}")
    if collapse_cvt:
        return head + ("RETURN min(length(p)) AS d, "
                       "min(length(p) - size([n IN nodes(p)[1..-1] WHERE n:CVT])) AS eff } "
                       "RETURN row.qid AS qid, d, eff")
    return head + "RETURN length(p) AS d, null AS eff LIMIT 1 } RETURN row.qid AS qid, d, eff"


def reachability(store: GraphStore, questions: Sequence[Question], k: int | None = None,
                 default_k: int = DEFAULT_K, collapse_cvt: bool | None = None,
                 batch_size: int = 100) -> dict[str, Reachability]:
    """Reachability of each question's gold answers within ``k`` hops (``k=None``: the question's own
    hop count, else ``default_k``). ``collapse_cvt=None`` collapses CVT hops when the graph has CVTs."""
    if collapse_cvt is None:
        collapse_cvt = graph_has_cvt(store)
    exclude_sgr = graph_has_bookkeeping_rels(store)
    keys = [s for q in questions for s in (*q.topic_mids, *q.topic_entities, *q.answers)]
    ids = EntityLinker(store).resolve(keys)

    out: dict[str, Reachability] = {}
    pending: dict[int, list[dict[str, object]]] = defaultdict(list)
    meta: dict[str, tuple[int, int, int]] = {}
    for q in questions:
        kq = k if k is not None else (q.hops or default_k)
        topics = sorted({i for s in (*q.topic_mids, *q.topic_entities) for i in ids.get(s, [])})
        answers = sorted({i for s in q.answers for i in ids.get(s, [])})
        meta[q.id] = (kq, len(topics), len(answers))
        if not topics or not answers:
            out[q.id] = Reachability(q.id, kq, False, False if collapse_cvt else None, len(topics), len(answers))
        elif set(topics) & set(answers):
            out[q.id] = Reachability(q.id, kq, True, True if collapse_cvt else None, len(topics), len(answers))
        else:
            pending[kq].append({"qid": q.id, "topics": topics, "answers": answers})

    for kq, rows in pending.items():
        query = _query(2 * kq if collapse_cvt else kq, exclude_sgr, collapse_cvt)
        for i in range(0, len(rows), batch_size):
            for r in store.read(query, {"rows": rows[i:i + batch_size]}):
                _, nt, na = meta[r["qid"]]
                d, eff = r["d"], r["eff"]
                plain = d is not None and d <= kq
                cvt = (eff is not None and eff <= kq) if collapse_cvt else None
                out[r["qid"]] = Reachability(r["qid"], kq, plain, cvt, nt, na)
    return out


def ceiling(results: Sequence[Reachability] | dict[str, Reachability], cvt: bool = False) -> float:
    """Share of reachable questions (0.0 for none)."""
    items = list(results.values()) if isinstance(results, dict) else list(results)
    if not items:
        return 0.0
    return sum(bool(r.reachable_cvt if cvt else r.reachable) for r in items) / len(items)
