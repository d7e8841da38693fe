"""A GBNF grammar for the read-only Cypher shape of sgr's NL→Cypher stage, built from the question's schema and C_q.

Grammar-constrained decoding (llama.cpp's GBNF, sent as ``grammar`` in the request body) lets a small model write
only queries of this shape::

    MATCH (e:Entity {name: "<topic entity>"})-[:`rel`]-(x1:Entity)-[:`rel`]->(x:Entity)
          [WHERE <condition> [AND <condition>]…]
    RETURN DISTINCT x.name AS answer [LIMIT n]
    | RETURN x.name AS answer ORDER BY <date of the walk> ASC|DESC LIMIT 1          (an ordinal in C_q)

with 1..``max_hops`` relationships (the caller doubles it when relations meet CVT nodes, so a CVT-mediated fact
``(e)-[:a]->(:CVT)-[:b]->(x)`` counts as one hop), each undirected or pointing either way, whose types are ONLY the
given relation types (backtick-quoted, ``|`` alternatives allowed) and whose start nodes are ONLY the given entity
names. So the model cannot write a relationship type or a topic entity the graph lacks (SGR's schema guidance,
Zhang et al. §3.4.1: S_q restricts the query to R_q), nor anything but a read query.

The conditions are a finite list, each a fixed Cypher text written by :mod:`cypher.conditions` (the same text the
compiled query uses): ``x <> e`` (the topic entity is no answer), and from C_q (:class:`QueryConstraints`) the
type (stored ``types``, when the graph has them; the name for specific words), the year (time or comparison, on
the walk's nodes ``x1 … x``) and the second entity (the answer touches it, directly or through a CVT). An ordinal
adds the ``ORDER BY … LIMIT 1`` return. ``count`` adds no form: a counted number is no node that validation could
ground (eq. 10), so SGR counts the validated answers afterwards, in Cypher (:mod:`sgr.methods.sgr.constraints`).
The grammar fixes the form, not the meaning: the model may still pick the wrong relation.
"""

from __future__ import annotations

from collections.abc import Sequence

from cypher.conditions import (GENERIC_TYPES, QueryConstraints, adjacent_condition, date_key, name_condition,
                               type_condition, year_condition)
from sgr.core.text import cypher_literal, gbnf_literal

#: Relationship direction templates: undirected, left-to-right, right-to-left (never ``<-[…]->``).
_DIRECTIONS = ('"-[:" types "]-"', '"-[:" types "]->"', '"<-[:" types "]-"')
MAX_RELATIONSHIPS = 10


def cypher_identifier(name: str) -> str:
    """A backtick-quoted Cypher identifier (relationship type or label)."""
    return "`" + name.replace("`", "``") + "`"


def _alternatives(items: Sequence[str]) -> str:
    return " | ".join(gbnf_literal(i) for i in items)


def conditions(c: QueryConstraints | None, walk: Sequence[str], *, has_types: bool = False) -> list[str]:
    """The WHERE conditions admitted for a walk whose nodes after ``e`` are ``walk`` (``["x1", "x"]``)."""
    out = ["x <> e"]
    if c is None:
        return out
    if c.type_name and has_types:
        out.append(type_condition(c.type_name, "x"))
    if c.type_name and c.type_name not in GENERIC_TYPES:
        out.append(name_condition(c.type_name, "x"))
    if c.year is not None:
        out.append(year_condition(c.year, c.year_op, "[" + ", ".join(walk) + "]"))
    if c.second_name:
        out.append(adjacent_condition("x", f"_s:Entity {{name: {cypher_literal(c.second_name)}}}"))
    return out


def extra_chars(c: QueryConstraints | None, max_hops: int, *, has_types: bool = False) -> int:
    """Characters the longest query's conditions and ordinal return add (to size the model's token budget)."""
    if c is None or c.empty:
        return 0
    walk = [f"x{i}" for i in range(1, max_hops)] + ["x"]
    total = sum(len(t) + 5 for t in conditions(c, walk, has_types=has_types)) + 7
    if c.ordinal:
        total += len(date_key(c.ordinal, "[" + ", ".join(walk) + "]")) + 60
    return total


def cypher_grammar(relation_types: Sequence[str], entity_names: Sequence[str], max_hops: int = 3,
                   constraints: QueryConstraints | None = None, *, has_types: bool = False) -> str:
    """GBNF admitting the read-only query shape above over ``relation_types`` and ``entity_names``.

    ``relation_types`` must be non-empty (the question's candidate relations R_q); with no ``entity_names`` the topic
    node's name is any string literal. ``max_hops`` (1..10) bounds the relationships of the path. ``constraints``:
    C_q, the source of the conditions and of the ordinal form; ``has_types``: the graph stores ``types``.
    """
    rels = list(dict.fromkeys(r for r in relation_types if r))
    if not rels:
        raise ValueError("cypher_grammar needs at least one relation type")
    if not 1 <= max_hops <= MAX_RELATIONSHIPS:
        raise ValueError(f"max_hops must be between 1 and {MAX_RELATIONSHIPS}, got {max_hops}")
    names = list(dict.fromkeys(n for n in entity_names if n))
    entity = _alternatives([cypher_literal(n) for n in names]) if names else "string"
    ordinal = constraints.ordinal if constraints is not None else None

    # One alternative per path length, each with the conditions and sort key over the node variables it binds.
    lines = ['root ::= "MATCH " body']
    bodies = []
    for hops in range(1, max_hops + 1):
        parts = ['"(e:Entity {name: " entity "})"']
        for i in range(1, hops):
            parts += ["rel", f'"(x{i}:Entity)"']
        parts += ["rel", '"(x:Entity)"']
        walk = [f"x{i}" for i in range(1, hops)] + ["x"]
        conds = conditions(constraints, walk, has_types=has_types)
        lines += [f"path{hops} ::= " + " ".join(parts),
                  f"cond{hops} ::= " + _alternatives(conds)]
        ret = "plain"
        if ordinal:
            key = date_key(ordinal, "[" + ", ".join(walk) + "]")
            order = "ASC" if ordinal == "earliest" else "DESC"
            lines.append(f"ret{hops} ::= plain | "
                         + gbnf_literal(f" RETURN x.name AS answer ORDER BY {key} {order} LIMIT 1"))
            ret = f"ret{hops}"
        more = f' (" AND " cond{hops}){{0,{len(conds) - 1}}}' if len(conds) > 1 else ""
        bodies.append(f'path{hops} (" WHERE " cond{hops}{more})? {ret}')
    lines.insert(1, "body ::= " + " | ".join(f"({b})" for b in bodies))
    lines += [
        'plain ::= " RETURN DISTINCT x.name AS answer" limit?',
        "rel ::= " + " | ".join(_DIRECTIONS),
        'types ::= type ("|" type)?',
        "type ::= " + _alternatives([cypher_identifier(r) for r in rels]),
        "entity ::= " + entity,
        'limit ::= " LIMIT " [1-9] [0-9]?',
    ]
    if not names:
        lines += ['string ::= "\\"" char{0,80} "\\""', r'char ::= [^"\\\x00-\x1f] | "\\" ["\\]']
    return "\n".join(lines) + "\n"
