"""Deterministic compiler: a scored schema path → one Cypher query (SGR §3.4, Q_c without an LLM).

A *schema path* is the relation-level skeleton of a reasoning path p = (v0, r1, v1, …, rk, vk) (SGR eq. 4):
the seed entity v0 and the steps ``(r_i, direction_i)``, where ``direction`` is ``"out"`` when the stored
relationship points from v_{i-1} to v_i and ``"in"`` otherwise. The compiled query matches exactly that walk
from the seed, never returns the seed itself, and returns every answer node with up to ``paths_per_answer``
supporting walks (node ids and names), so each answer stays grounded.

This is both the fallback of the direct route when the model's Cypher cannot be used and the
``sgr-compiled`` baseline (no LLM at all).

**With C_q** (:class:`cypher.conditions.QueryConstraints`) the same walk is filtered in the query itself: the walks
are collected and each condition keeps the walks that satisfy it — *softly*: when no walk does (the graph has
nothing to decide by), the condition keeps them all, so a constraint never empties the answer. In order: the
second-entity join, a CVT's neighbour named in the question, the type (stored ``types``, else the name for
specific words), the year (time or comparison); then the number (a numeric comparison on the answer's numbers of
the measure); then the ordinal keeps the answers whose walks' start date is the smallest (earliest) or largest
(latest), ties kept — or a numeric superlative keeps those with the largest (smallest) number of the measure;
``count`` returns one row whose ``name`` is ``count(DISTINCT x)`` and whose walks are the counted answers' (their
first walk each). The rows keep the shape ``id, name, path_ids, path_names``, so γ is computed on each
answer's own walks (eq. 10). Without constraints the query text is exactly the plain walk's.

:func:`compile_walk_filter` applies the same conditions to given walks (answers that came from elsewhere: the
model's own Cypher, collaborative votes), so both routes share one implementation of C_q.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cypher.conditions import (UNDATED, QueryConstraints, adjacent_condition, date_key, has_dates, has_numbers,
                               mention_condition, name_condition, name_year, number_condition, number_key,
                               type_condition, year_condition)
from sgr.core.lexicon import GENERIC_TYPES
from sgr.core.text import cypher_literal
from sgr.graph.inverses import InverseRelations
from sgr.graph.readonly import plan_shape
from sgr.graph.store import GraphStore, QueryResult, quote_identifier

Step = tuple[str, str]  # (relationship type, "out" | "in")


def stored_steps(path: str) -> str:
    """``[[type, forward], …]`` of the path expression ``path``: each relationship's stored type and whether it
    points along the walk (the walk may have matched a relation's inverse name, :func:`pattern`)."""
    return (f"[_i IN range(0, size(relationships({path})) - 1) | [type(relationships({path})[_i]), "
            f"startNode(relationships({path})[_i]) = nodes({path})[_i]]]")


@dataclass
class CompiledQuery:
    """A parameterised read query; ``params`` go with it to :meth:`GraphStore.run_generated`."""

    cypher: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def plan_key(self) -> str:
        """Its shape (:func:`sgr.graph.readonly.plan_shape`): the compiler quotes every name and passes or quotes every
        value, so queries of one shape plan as a read both or neither."""
        return plan_shape(self.cypher)

    def run(self, store: GraphStore) -> QueryResult:
        """Run it as generated Cypher (:meth:`GraphStore.run_generated`: read-only, timeout, row cap), its plan check
        made once per shape (:attr:`plan_key`)."""
        return store.run_generated(self.cypher, self.params, plan_key=self.plan_key)

    def inline(self) -> str:
        """The query with its parameters written in (for people, logs and Neo4j Browser)."""
        text = self.cypher
        for k in sorted(self.params, key=len, reverse=True):
            text = text.replace("$" + k, cypher_literal(self.params[k]))
        return text


def pattern(steps: Sequence[Step], seed_var: str = "s", answer_var: str = "x",
            inverses: InverseRelations | None = None) -> str:
    """``(s)-[:`r1`]->(n1)<-[:`r2`]-(x)`` for the given steps (intermediate nodes ``n1 … n{k-1}``). A step whose
    relation has an inverse (:func:`sgr.graph.inverses.inverse_relations`: one fact stored under either of two
    names) matches either name: ``-[:`r`|`r⁻¹`]-`` both ways for a CVT pair, ``-[e{i}:`r`|`r⁻¹`]-`` for a directed
    (entity) pair, whose direction :func:`step_conditions` states."""
    if not steps:
        raise ValueError("a schema path needs at least one step")
    parts = [f"({seed_var}:Entity {{id: $seed}})"]
    for i, (rel, direction) in enumerate(steps, start=1):
        inverse = inverses.get(rel) if inverses else None
        if inverse:
            edge = f"e{i}" if rel in inverses.directed else ""
            arrow = f"-[{edge}:{quote_identifier(rel)}|{quote_identifier(inverse)}]-"
        else:
            rel_q = f"[:{quote_identifier(rel)}]"
            arrow = f"-{rel_q}->" if direction == "out" else f"<-{rel_q}-"
        var = answer_var if i == len(steps) else f"n{i}"
        parts.append(arrow + f"({var}:Entity)")
    return "".join(parts)


def step_conditions(steps: Sequence[Step], seed_var: str = "s", inverses: InverseRelations | None = None
                    ) -> list[str]:
    """The direction of each directed-pair step of :func:`pattern`: its own name points the step's way, its
    inverse's name the other way (``(type(e1) = "r") = (startNode(e1) = s)`` for an outgoing ``r``)."""
    out = []
    for i, (rel, direction) in enumerate(steps, start=1):
        if inverses and rel in inverses.directed:
            prev = seed_var if i == 1 else f"n{i - 1}"
            same = "=" if direction == "out" else "<>"
            out.append(f"(type(e{i}) = {cypher_literal(rel)}) {same} (startNode(e{i}) = {prev})")
    return out


def compile_schema_path(seed_id: str, steps: Sequence[Step], *, limit: int = 200, paths_per_answer: int = 3,
                        constraints: QueryConstraints | None = None,
                        inverses: InverseRelations | None = None) -> CompiledQuery:
    """Compile a schema path from ``seed_id`` into a query returning ``id, name, path_ids, path_names, path_steps``
    (each walk's stored relationship types and directions, :func:`stored_steps`).

    Each row is one answer node (never the seed, never a name-less CVT node) with up to
    ``paths_per_answer`` supporting walks; at most ``limit`` answers, ordered by name for determinism.
    ``constraints``: C_q applied in the query (module docstring); ``inverses``: steps that also match their
    relation's inverse (:func:`pattern`).
    """
    match = pattern(steps, inverses=inverses)
    where = " AND ".join(["x.id <> $seed", "NOT x:CVT", *step_conditions(steps, inverses=inverses)])
    params: dict[str, Any] = {"seed": seed_id, "per": paths_per_answer, "limit": limit}
    if constraints is not None and not constraints.empty:
        head = (f"MATCH p = {match}\n"
                f"WHERE {where}\n"
                f"WITH x, nodes(p) AS ns, {stored_steps('p')} AS rs\n")
        return CompiledQuery(head + _constrained_tail(constraints, params), params)
    cypher = (
        f"MATCH p = {match}\n"
        f"WHERE {where}\n"
        "WITH x, collect(p)[..$per] AS ps\n"
        "RETURN x.id AS id, x.name AS name, "
        "[q IN ps | [n IN nodes(q) | n.id]] AS path_ids, [q IN ps | [n IN nodes(q) | n.name]] AS path_names, "
        f"[q IN ps | {stored_steps('q')}] AS path_steps\n"
        "ORDER BY coalesce(x.name, x.id)\n"
        "LIMIT $limit")
    return CompiledQuery(cypher, params)


def compile_walk_filter(walks: Sequence[tuple[str, Sequence[str]]], constraints: QueryConstraints, *,
                        limit: int = 200, paths_per_answer: int = 3) -> CompiledQuery:
    """C_q over given walks: ``walks`` are ``(answer id, node ids of one walk)`` pairs; the rows are those of
    :func:`compile_schema_path` with the same constraints (only stored nodes count; a walk may be the answer alone)."""
    params: dict[str, Any] = {"walks": [{"id": a, "nodes": list(ns) or [a]} for a, ns in walks],
                              "per": paths_per_answer, "limit": limit}
    head = ("UNWIND $walks AS wk\n"
            "MATCH (x:Entity {id: wk.id})\n"
            "CALL (wk) { UNWIND range(0, size(wk.nodes) - 1) AS i MATCH (n:Entity {id: wk.nodes[i]}) "
            "WITH i, n ORDER BY i RETURN collect(n) AS ns }\n"
            "WITH x, ns, wk WHERE size(ns) = size(wk.nodes)\n"
            "WITH x, ns, null AS rs\n")
    return CompiledQuery(head + _constrained_tail(constraints, params), params)


def compile_checkable(walks: Sequence[tuple[str, Sequence[str]]], measure: str | None) -> CompiledQuery:
    """Whether the graph holds what a literal condition decides by, over given walks (``(answer id, node ids)``):
    one row ``dated`` (a node of some walk carries a date, :func:`cypher.conditions.has_dates`) and ``measured``
    (some answer carries a number of ``measure``, :func:`cypher.conditions.has_numbers`; false without a measure)."""
    params: dict[str, Any] = {"walks": [{"id": a, "nodes": list(ns) or [a]} for a, ns in walks]}
    measured = has_numbers(measure, "_x") if measure else "false"
    cypher = ("UNWIND $walks AS wk\n"
              "MATCH (x:Entity {id: wk.id})\n"
              "CALL (wk) { UNWIND wk.nodes AS i MATCH (n:Entity {id: i}) RETURN collect(n) AS ns }\n"
              f"RETURN any(_w IN collect(ns) WHERE {has_dates('_w')}) AS dated, "
              f"any(_x IN collect(x) WHERE {measured}) AS measured")
    return CompiledQuery(cypher, params)


def _soft(tests: Sequence[str]) -> str:
    """Keep the rows passing the first test that any row passes; all rows when none does."""
    hits = ", ".join(f"[w IN rows WHERE {t}] AS hit{i}" for i, t in enumerate(tests))
    pick = " ".join(f"WHEN size(hit{i}) > 0 THEN hit{i}" for i in range(len(tests)))
    return f"WITH rows, {hits}\nWITH CASE {pick} ELSE rows END AS rows\n"


def _keep_best(cmp: str) -> str:
    """Of ``rows`` ``{x, ps, d}``, keep those whose key ``d`` is the best by ``cmp`` (ties kept; all when no row has
    a key), as ``x, ps``."""
    return (f"WITH rows, reduce(_b = null, w IN rows | CASE WHEN w.d IS NOT NULL AND (_b IS NULL OR w.d {cmp} _b) "
            "THEN w.d ELSE _b END) AS best\n"
            "UNWIND [w IN rows WHERE best IS NULL OR w.d = best] AS w\n"
            "WITH w.x AS x, w.ps AS ps\n")


def _constrained_tail(c: QueryConstraints, params: dict[str, Any]) -> str:
    """Everything after ``WITH x, ns, rs`` (one row per walk: answer node, walk nodes, the walk's stored steps or
    null) for the constraints ``c``; each kept walk travels as ``[ns, rs]``."""
    out = "WITH collect({x: x, ns: ns, rs: rs, dn: [n IN ns WHERE n:CVT OR n = x]}) AS rows\n"
    for i, other in enumerate(c.join_ids):  # the join: the answer meets each other linked entity (when some does)
        params[f"join{i}"] = other
        out += _soft([adjacent_condition("w.x", f"_s:Entity {{id: $join{i}}}")])
    if c.mention_text:
        params["mention"] = c.mention_text
        out += _soft([mention_condition("w.dn", "w.ns")])
    if c.type_name:
        tests = [type_condition(c.type_name, "w.x")]
        if c.type_name not in GENERIC_TYPES:
            tests.append(name_condition(c.type_name, "w.x"))
        out += _soft(tests)
    if c.year is not None:
        out += _soft([year_condition(c.year, c.year_op, "w.dn")])
    if c.number is not None and c.measure:
        out += _soft([number_condition(c.number, c.number_op, c.measure, "w.x")])
    out += "UNWIND rows AS w\nWITH w.x AS x, w.ns AS ns, w.rs AS rs, w.dn AS dn\n"
    if c.ordinal:
        agg, cmp = ("min", "<") if c.ordinal == "earliest" else ("max", ">")
        out += (f"WITH x, collect([ns, rs])[..$per] AS ps, {agg}({date_key(c.ordinal, 'dn')}) AS d\n"
                f"WITH collect({{x: x, ps: ps, d: CASE WHEN d = {cypher_literal(UNDATED[c.ordinal])} "
                f"THEN {name_year('x')} ELSE d END}}) AS rows\n" + _keep_best(cmp))
    elif c.extreme and c.measure:
        out += ("WITH x, collect([ns, rs])[..$per] AS ps\n"
                f"WITH collect({{x: x, ps: ps, d: {number_key(c.extreme, c.measure, 'x')}}}) AS rows\n"
                + _keep_best(">" if c.extreme == "max" else "<"))
    else:
        out += "WITH x, collect([ns, rs])[..$per] AS ps\n"
    if c.count:
        return out + ("WITH x, ps ORDER BY coalesce(x.name, x.id)\n"
                "WITH count(DISTINCT x) AS total, collect(ps[0])[..$limit] AS ws WHERE total > 0\n"
                "RETURN null AS id, toString(total) AS name, [q IN ws | [n IN q[0] | n.id]] AS path_ids, "
                "[q IN ws | [n IN q[0] | n.name]] AS path_names, [q IN ws | q[1]] AS path_steps")
    return out + ("RETURN x.id AS id, x.name AS name, [q IN ps | [n IN q[0] | n.id]] AS path_ids, "
                  "[q IN ps | [n IN q[0] | n.name]] AS path_names, [q IN ps | q[1]] AS path_steps\n"
            "ORDER BY coalesce(x.name, x.id)\n"
            "LIMIT $limit")


def compile_answer_query(seed_name: str, steps: Sequence[Step], cvt: Sequence[int] = ()) -> str:
    """The same walk as a self-contained query in the shape the NL→Cypher prompt teaches
    (``MATCH (e:Entity {name: "…"})-[:`r`]->(x) RETURN DISTINCT x.name AS answer``): used for worked examples.
    ``cvt``: the steps (1-based) that end on a CVT node, written ``(c{i}:CVT)`` as the grammar's CVT hop form."""
    parts = [f"(e:Entity {{name: {cypher_literal(seed_name)}}})"]
    for i, (rel, direction) in enumerate(steps, start=1):
        rel_q = f"[:{quote_identifier(rel)}]"
        var = "x" if i == len(steps) else (f"c{i}:CVT" if i in cvt else f"n{i}")
        parts.append((f"-{rel_q}->" if direction == "out" else f"<-{rel_q}-") + f"({var})")
    return f"MATCH {''.join(parts)} RETURN DISTINCT x.name AS answer"


# -- a profiled graph (a user's own labels and properties, sgr.graph.profile) ----------------------------------------
@dataclass
class PropertyStep:
    """One hop of a property-graph query: along any of ``types`` (``out``: from the previous node) to ``to``."""

    types: tuple[str, ...]
    direction: str
    to: str

    def arrow(self, var: str) -> str:
        rel = f"[{var}:{'|'.join(quote_identifier(t) for t in self.types)}]"
        return f"-{rel}->" if self.direction == "out" else f"<-{rel}-"


@dataclass
class PropertyQuery:
    """A question over a profiled graph as a query: seeds (element ids) joined at the answer ``x`` by ``steps`` (the
    second seed's own ``join`` steps), the answer's name (``name_key``) or a literal (``project``), a condition
    ``(on, property, op, value)`` and an order ``(on, property, descending)`` where ``on`` is ``x`` or ``r`` (the last
    relationship), or a count."""

    seeds: list[str]
    steps: list[PropertyStep]
    name_key: str | None
    project: str | None = None
    join: list[PropertyStep] = field(default_factory=list)
    condition: tuple[str, str, str, Any] | None = None
    order: tuple[str, str, bool] | None = None
    count: bool = False

    def _match(self, params: dict[str, Any], path: bool = False) -> tuple[list[str], list[str], str]:
        """The MATCH lines, the WHERE tests and the answer variable (``p``/``q`` path variables with ``path``)."""
        params["s0"] = self.seeds[0]
        lines = ["MATCH (s0) WHERE elementId(s0) = $s0"]
        x = "s0"
        if self.steps:
            walk, x = "(s0)", "x"
            for i, st in enumerate(self.steps, 1):
                node = "x" if i == len(self.steps) else f"v{i}"
                var = "r" if i == len(self.steps) else f"r{i}"
                walk += f"{st.arrow(var)}({node}:{quote_identifier(st.to)})"
            lines.append(f"MATCH {'p = ' if path else ''}{walk}")
        if len(self.seeds) > 1 and self.join:
            params["s1"] = self.seeds[1]
            walk = "(s1)"
            for i, st in enumerate(self.join, 1):
                walk += st.arrow(f"j{i}") + ("(x)" if i == len(self.join) else f"(w{i})")
            lines.append(f"MATCH {'q = ' if path else ''}{walk}")
        where = [f"NOT elementId({x}) IN $seeds"] if self.steps else []
        if self.steps:
            params["seeds"] = list(self.seeds)
        if "s1" in params:
            where.insert(0, "elementId(s1) = $s1")
        if self.condition is not None:
            on, prop, op, value = self.condition
            where.append(f"{on if self.steps else x}.{quote_identifier(prop)} {op} $value")
            params["value"] = value
        return lines, where, x

    def compile(self, limit: int = 200) -> CompiledQuery:
        """The read query: rows ``answer`` and ``id`` (the answer node's element id; ``key`` too when ordered),
        distinct, by name (after the key when ordered), as sgr's own compiled queries order theirs, at most ``limit``;
        a count is one row ``answer``."""
        params: dict[str, Any] = {"limit": limit}
        lines, where, x = self._match(params)
        if where:
            lines.append("WHERE " + " AND ".join(where))
        shown = f"{x}.{quote_identifier(self.project or self.name_key or 'name')}"
        if self.count:
            lines.append(f"RETURN count(DISTINCT {x}) AS answer")
        elif self.order is not None:
            on, prop, desc = self.order
            key = f"{on if self.steps else x}.{quote_identifier(prop)}"
            lines.append(f"WITH DISTINCT {shown} AS answer, elementId({x}) AS id, {key} AS key WHERE key IS NOT NULL")
            lines.append(f"RETURN answer, id, key ORDER BY key {'DESC' if desc else 'ASC'}, answer LIMIT $limit")
        else:
            lines.append(f"RETURN DISTINCT {shown} AS answer, elementId({x}) AS id ORDER BY answer LIMIT $limit")
        return CompiledQuery("\n".join(lines), params)

    def redraw(self, answer_ids: Sequence[str], limit: int = 100) -> CompiledQuery:
        """A query that draws the walks to the answer nodes ``answer_ids`` (all walks when empty: a count's)."""
        params: dict[str, Any] = {}
        lines, where, x = self._match(params, path=True)
        if self.steps and answer_ids:
            params["answers"] = list(answer_ids)
            where.append(f"elementId({x}) IN $answers")
        if where:
            lines.append("WHERE " + " AND ".join(where))
        shown = ", ".join(v for v, used in (("p", bool(self.steps)), ("q", "s1" in params)) if used) or "s0"
        lines.append(f"RETURN {shown} LIMIT {int(limit)}")
        return CompiledQuery("\n".join(lines), params)

    def walks(self, answer_ids: Sequence[str], names: Mapping[str, str], limit: int = 50) -> CompiledQuery:
        """The walks to the answer nodes ``answer_ids`` (all walks when empty: a count's, a lookup's seed), one row
        per walk: ``ids`` (element ids), ``names`` (each node's naming property, ``names`` label → property; null
        for a compound-value node), ``types`` and ``dirs`` (``out``/``in`` as walked) of its relationships; the
        second seed's walk (``join``) is a row of its own."""
        params: dict[str, Any] = {"names": dict(names), "limit": int(limit)}
        lines, where, x = self._match(params, path=True)
        if not self.steps:
            lines.append("WITH s0 MATCH p = (s0)")
        if self.steps and answer_ids:
            params["answers"] = list(answer_ids)
            where.append(f"elementId({x}) IN $answers")
        if where:
            lines.append("WHERE " + " AND ".join(where))
        variables = ["p"] + (["q"] if "s1" in params else [])
        lines.append(f"WITH [{', '.join(variables)}] AS walks LIMIT $limit UNWIND walks AS w")
        lines.append("RETURN DISTINCT [n IN nodes(w) | elementId(n)] AS ids, "
                     "[n IN nodes(w) | head([l IN labels(n) WHERE $names[l] IS NOT NULL | n[$names[l]]])] AS names, "
                     "[r IN relationships(w) | type(r)] AS types, "
                     "[i IN range(0, size(relationships(w)) - 1) | "
                     "CASE WHEN startNode(relationships(w)[i]) = nodes(w)[i] THEN 'out' ELSE 'in' END] AS dirs")
        return CompiledQuery("\n".join(lines), params)
