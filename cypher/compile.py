"""Deterministic compiler: a scored schema path → one Cypher query (SGR §3.4, Q_c without an LLM).

A *schema path* is the relation-level skeleton of a reasoning path p = (v0, r1, v1, …, rk, vk) (SGR eq. 4):
the seed entity v0 and the steps ``(r_i, direction_i)``, where ``direction`` is ``"out"`` when the stored
relationship points from v_{i-1} to v_i and ``"in"`` otherwise. The compiled query matches exactly that walk
from the seed, never returns the seed itself, and returns every answer node with up to ``paths_per_answer``
supporting walks (node ids and names), so each answer stays grounded.

This is both the fallback of the direct route when the model's Cypher cannot be used and the
``sgr-compiled`` baseline (no LLM at all).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sgr.core.text import cypher_literal
from sgr.graph.store import quote_identifier

Step = tuple[str, str]  # (relationship type, "out" | "in")


@dataclass
class CompiledQuery:
    """A parameterised read query; ``params`` go with it to :meth:`GraphStore.run_generated`."""

    cypher: str
    params: dict[str, Any] = field(default_factory=dict)

    def inline(self) -> str:
        """The query with its parameters written in (for people, logs and Neo4j Browser)."""
        text = self.cypher
        for k in sorted(self.params, key=len, reverse=True):
            text = text.replace("$" + k, cypher_literal(self.params[k]))
        return text


def pattern(steps: Sequence[Step], seed_var: str = "s", answer_var: str = "x") -> str:
    """``(s)-[:`r1`]->(n1)<-[:`r2`]-(x)`` for the given steps (intermediate nodes ``n1 … n{k-1}``)."""
    if not steps:
        raise ValueError("a schema path needs at least one step")
    parts = [f"({seed_var}:Entity {{id: $seed}})"]
    for i, (rel, direction) in enumerate(steps, start=1):
        rel_q = f"[:{quote_identifier(rel)}]"
        arrow = f"-{rel_q}->" if direction == "out" else f"<-{rel_q}-"
        var = answer_var if i == len(steps) else f"n{i}"
        parts.append(arrow + f"({var}:Entity)")
    return "".join(parts)


def compile_schema_path(seed_id: str, steps: Sequence[Step], *, limit: int = 200,
                        paths_per_answer: int = 3) -> CompiledQuery:
    """Compile a schema path from ``seed_id`` into a query returning ``id, name, path_ids, path_names``.

    Each row is one answer node (never the seed, never a name-less CVT node) with up to
    ``paths_per_answer`` supporting walks; at most ``limit`` answers, ordered by name for determinism.
    """
    match = pattern(steps)
    cypher = (
        f"MATCH p = {match}\n"
        "WHERE x.id <> $seed AND NOT x:CVT\n"
        "WITH x, collect(p)[..$per] AS ps\n"
        "RETURN x.id AS id, x.name AS name, "
        "[q IN ps | [n IN nodes(q) | n.id]] AS path_ids, [q IN ps | [n IN nodes(q) | n.name]] AS path_names\n"
        "ORDER BY coalesce(x.name, x.id)\n"
        "LIMIT $limit")
    return CompiledQuery(cypher, {"seed": seed_id, "per": paths_per_answer, "limit": limit})


def compile_answer_query(seed_name: str, steps: Sequence[Step]) -> str:
    """The same walk as a self-contained query in the shape the NL→Cypher prompt teaches
    (``MATCH (e:Entity {name: "…"})-[:`r`]->(x) RETURN DISTINCT x.name AS answer``): used for worked examples."""
    parts = [f"(e:Entity {{name: {cypher_literal(seed_name)}}})"]
    for i, (rel, direction) in enumerate(steps, start=1):
        rel_q = f"[:{quote_identifier(rel)}]"
        var = "x" if i == len(steps) else f"n{i}"
        parts.append((f"-{rel_q}->" if direction == "out" else f"<-{rel_q}-") + f"({var})")
    return f"MATCH {''.join(parts)} RETURN DISTINCT x.name AS answer"
