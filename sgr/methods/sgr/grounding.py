"""Grounding the values a Cypher query returns: rows → (node id, text), and a shortest path from the topic
entities to an answer node that G_q does not reach (so every answer carries a path)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sgr.core.types import ReasoningPath
from sgr.graph.store import GraphStore, quote_identifier
from sgr.methods.sgr.reasoning import Candidate


def row_values(rows: Sequence[dict[str, Any]], name_keys: Sequence[str] = ("name",)) -> list[tuple[str | None, str]]:
    """(node id or None, text) of the first column of each row; nodes give (id, name) — the first of ``name_keys``
    they have (a profiled graph's naming properties) —, lists are flattened."""
    out: list[tuple[str | None, str]] = []

    def add(v: Any) -> None:
        if v is None:
            return
        if isinstance(v, dict):
            name = next((v[k] for k in name_keys if v.get(k) is not None), None)
            if "id" in v or name is not None:
                out.append((v.get("id"), str(name or v.get("id"))))
            return
        if isinstance(v, (list, tuple)):
            for x in v:
                add(x)
            return
        out.append((None, str(v)))

    for row in rows:
        if not row:
            continue
        first = row.get("answer", next(iter(row.values())))
        add(first)
    seen: set[tuple[str | None, str]] = set()
    return [x for x in out if not (x in seen or seen.add(x))]


@dataclass(frozen=True)
class NodeKeys:
    """How a graph's nodes are matched, identified and named in Cypher (``{v}``: the variable): sgr's ``:Entity``
    shape by ``id`` and ``name``; a profiled graph by ``elementId`` and its naming properties (:meth:`for_names`)."""

    label: str = ":Entity"
    id: str = "{v}.id"
    name: str = "{v}.name"

    @classmethod
    def for_names(cls, properties: Sequence[str]) -> "NodeKeys":
        names = ", ".join(f"{{v}}.{quote_identifier(p)}" for p in dict.fromkeys(properties)) or "null"
        return cls("", "elementId({v})", f"coalesce({names})")

    def of(self, part: str, v: str) -> str:
        return getattr(self, part).replace("{v}", v)


ENTITY_KEYS = NodeKeys()


def ground_by_shortest_path(store: GraphStore, seeds: Sequence[str], targets: Sequence[str],
                            max_len: int = 4, keys: NodeKeys = ENTITY_KEYS) -> dict[str, ReasoningPath]:
    """A shortest undirected path from some seed to each target node (for answers found outside G_q)."""
    targets = [t for t in targets if t not in set(seeds)]  # a topic entity is no answer of its own path
    if not seeds or not targets:
        return {}
    rows = store.read(
        f"UNWIND $targets AS tid MATCH (x{keys.label}) WHERE {keys.of('id', 'x')} = tid "
        f"CALL (x) {{ UNWIND $seeds AS sid MATCH (s{keys.label}) WHERE {keys.of('id', 's')} = sid AND s <> x "
        f"  MATCH p = shortestPath((s)-[*..{int(max_len)}]-(x)) RETURN p ORDER BY length(p) LIMIT 1 }} "
        f"RETURN {keys.of('id', 'x')} AS id, [n IN nodes(p) | {keys.of('id', 'n')}] AS ids, "
        f"[n IN nodes(p) | {keys.of('name', 'n')}] AS names, "
        "[r IN relationships(p) | type(r)] AS rels, "
        "[i IN range(0, size(relationships(p)) - 1) | "
        "  CASE WHEN startNode(relationships(p)[i]) = nodes(p)[i] THEN 'out' ELSE 'in' END] AS dirs",
        {"targets": list(targets)[:50], "seeds": list(seeds)})
    return {r["id"]: ReasoningPath(nodes=r["ids"], relations=r["rels"], score=0.0, names=r["names"],
                                   directions=r["dirs"], source="shortest-path") for r in rows}


def ground_values(store: GraphStore, values: Sequence[tuple[str | None, str]], subgraph: Any,
                  topic_ids: Sequence[str], max_len: int) -> list[Candidate]:
    """Candidates for Cypher result values: each value's node(s) (by id, else by exact name — G_q's names first)
    with its paths in G_q (``subgraph``, may be None), else a shortest path from ``topic_ids`` of at most
    ``max_len`` relationships; a value that no path grounds is dropped."""
    by_name: dict[str, list[str]] = {}
    if subgraph is not None:
        for nid, nm in subgraph.names.items():
            if nm:
                by_name.setdefault(nm, []).append(nid)
    unknown = [text for nid, text in values if nid is None and text not in by_name]
    found: dict[str, list[str]] = {}
    if unknown:
        for r in store.read("UNWIND $names AS n MATCH (e:Entity {name: n}) RETURN n, e.id AS id LIMIT 2000",
                            {"names": unknown[:500]}):
            found.setdefault(r["n"], []).append(r["id"])
    ids: list[tuple[str, str]] = []
    for nid, text in values:
        if nid is not None:
            ids.append((nid, text))
        else:
            ids += [(i, text) for i in by_name.get(text, []) or found.get(text, [])]
    cands = [Candidate(nid, text, subgraph.paths_to(nid) if subgraph is not None else [])
             for nid, text in dict.fromkeys(ids)]
    missing = [c.key for c in cands if not c.paths]
    if missing:
        grounded = ground_by_shortest_path(store, list(topic_ids), missing, max_len=max_len)
        for c in cands:
            if not c.paths and c.key in grounded:
                c.paths = [grounded[c.key]]
    return [c for c in cands if c.paths]
