"""Grounding the values a Cypher query returns: rows → (node id, text), and a shortest path from the topic
entities to an answer node that G_q does not reach (so every answer carries a path)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sgr.core.types import ReasoningPath
from sgr.graph.store import GraphStore


def row_values(rows: Sequence[dict[str, Any]]) -> list[tuple[str | None, str]]:
    """(node id or None, text) of the first column of each row; nodes give (id, name), lists are flattened."""
    out: list[tuple[str | None, str]] = []

    def add(v: Any) -> None:
        if v is None:
            return
        if isinstance(v, dict):
            if "id" in v or "name" in v:
                out.append((v.get("id"), str(v.get("name") or v.get("id"))))
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


def ground_by_shortest_path(store: GraphStore, seeds: Sequence[str], targets: Sequence[str],
                            max_len: int = 4) -> dict[str, ReasoningPath]:
    """A shortest undirected path from some seed to each target node (for answers found outside G_q)."""
    targets = [t for t in targets if t not in set(seeds)]  # a topic entity is no answer of its own path
    if not seeds or not targets:
        return {}
    rows = store.read(
        "UNWIND $targets AS tid MATCH (x:Entity {id: tid}) "
        "CALL (x) { UNWIND $seeds AS sid MATCH (s:Entity {id: sid}) WHERE s <> x "
        f"  MATCH p = shortestPath((s)-[*..{int(max_len)}]-(x)) RETURN p ORDER BY length(p) LIMIT 1 }} "
        "RETURN x.id AS id, [n IN nodes(p) | n.id] AS ids, [n IN nodes(p) | n.name] AS names, "
        "[r IN relationships(p) | type(r)] AS rels, "
        "[i IN range(0, size(relationships(p)) - 1) | "
        "  CASE WHEN startNode(relationships(p)[i]) = nodes(p)[i] THEN 'out' ELSE 'in' END] AS dirs",
        {"targets": list(targets)[:50], "seeds": list(seeds)})
    return {r["id"]: ReasoningPath(nodes=r["ids"], relations=r["rels"], score=0.0, names=r["names"],
                                   directions=r["dirs"], source="shortest-path") for r in rows}
