"""A GBNF grammar for the read-only Cypher shape of sgr's NL→Cypher stage, built from the question's schema and C_q.

Grammar-constrained decoding (llama.cpp's GBNF, sent as ``grammar`` in the request body) lets a small model write
only queries of this shape::

    MATCH (e:Entity {name: "<topic entity>"})-[:`rel`]-(x1:Entity)-[:`rel`]->(x:Entity)
          [WHERE <condition> [AND <condition>]…]
    RETURN DISTINCT x.name AS answer [LIMIT n]
    | RETURN x.name AS answer ORDER BY <date of the walk> ASC|DESC LIMIT 1          (an ordinal in C_q)
    | RETURN x.name AS answer ORDER BY <the answer's number> DESC|ASC LIMIT 1      (a numeric superlative)

with 1..``max_hops`` hops, each undirected or pointing either way; a hop is one relationship to an ``(x_i:Entity)``,
or — over the relations that meet CVT nodes — two through a ``(c_i:CVT)`` node, so a CVT-mediated fact
``(e)-[:a]->(c1:CVT)-[:b]->(x)`` counts as one hop (and cannot be faked by chaining entity relations). Relationship
types are ONLY the given ones (backtick-quoted, ``|`` alternatives allowed), the start node's name ONLY one of the
given entity names. So the model cannot write a relationship type or a topic entity the graph lacks (SGR's schema guidance,
Zhang et al. §3.4.1: S_q restricts the query to R_q), nor anything but a read query.

The conditions are a finite list, each a fixed Cypher text written by :mod:`cypher.conditions` (the same text the
compiled query uses): ``x <> e`` (the topic entity is no answer), and from C_q (:class:`QueryConstraints`) the
type (stored ``types``, when the graph has them; the name for specific words), the year (time or comparison, on
the walk's nodes ``c1, x1 … x``), the second entity (the answer touches it, directly or through a CVT) and the number
(a numeric comparison on the answer's numbers of the measure). An ordinal or a numeric superlative adds its
``ORDER BY … LIMIT 1`` return. ``count`` adds no form: a counted number is no node that validation could
ground (eq. 10), so SGR counts the validated answers afterwards, in Cypher (:mod:`sgr.methods.sgr.constraints`).
The grammar fixes the form, not the meaning: the model may still pick the wrong relation.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

from cypher.conditions import (QueryConstraints, adjacent_condition, date_key, name_condition,
                               number_condition, number_key, type_condition, year_condition)
from sgr.core.lexicon import GENERIC_TYPES
from sgr.core.text import cypher_literal, gbnf_literal

#: Relationship direction templates: undirected, left-to-right, right-to-left (never ``<-[…]->``).
_DIRECTIONS = ('"-[:" {t} "]-"', '"-[:" {t} "]->"', '"<-[:" {t} "]-"')


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
    if c.number is not None and c.measure:
        out.append(number_condition(c.number, c.number_op, c.measure, "x"))
    return out


def ordered_returns(c: QueryConstraints | None, walk: Sequence[str]) -> list[str]:
    """The ``ORDER BY … LIMIT 1`` returns admitted for a walk: the ordinal's (the walk's start date) and the numeric
    superlative's (the answer's number of the measure; answers without one sort last)."""
    if c is None:
        return []
    out = []
    if c.ordinal:
        key = date_key(c.ordinal, "[" + ", ".join(walk) + "]")
        out.append(f" RETURN x.name AS answer ORDER BY {key} {'ASC' if c.ordinal == 'earliest' else 'DESC'} LIMIT 1")
    if c.extreme and c.measure:
        last = "-1.0E308" if c.extreme == "max" else "1.0E308"
        out.append(f" RETURN x.name AS answer ORDER BY coalesce({number_key(c.extreme, c.measure, 'x')}, {last}) "
                   f"{'DESC' if c.extreme == 'max' else 'ASC'} LIMIT 1")
    return out


def walks(max_hops: int, cvt: bool) -> list[list[tuple[str, str]]]:
    """Every admitted walk shape after ``e``: per hop ``("x{i}", "Entity")``, or a CVT node ``("c{i}", "CVT")`` then the
    entity (when ``cvt``); the last entity is ``x``."""
    shapes = []
    for hops in range(1, max_hops + 1):
        for mask in product((False, True) if cvt else (False,), repeat=hops):
            shape = []
            for i, through in enumerate(mask, start=1):
                shape += [(f"c{i}", "CVT")] if through else []
                shape.append(("x" if i == hops else f"x{i}", "Entity"))
            shapes.append(shape)
    return shapes


#: Characters per token the budget assumes: SmolLM2's tokenizer gives 2.2–2.8 on these queries (relation names
#: included, measured with the server's tokenizer), so half the characters bounds the tokens.
CHARS_PER_TOKEN = 2


def longest_query(relation_types: Sequence[str], entity_names: Sequence[str], max_hops: int = 3,
                  constraints: QueryConstraints | None = None, *, cvt_relations: Sequence[str] = (),
                  has_types: bool = False) -> str:
    """The longest query :func:`cypher_grammar` admits over the same arguments: every relationship slot with its
    two longest types, every condition, the longer return. The NL→Cypher stage sizes the model's completion budget
    from it (:func:`token_budget`), so a constrained reply is never cut before its ``RETURN``."""
    rels = sorted(dict.fromkeys(r for r in relation_types if r), key=len, reverse=True)
    cvt_rels = sorted((r for r in dict.fromkeys(cvt_relations) if r in rels), key=len, reverse=True)
    names = [cypher_literal(n) for n in entity_names if n] or ['"' + "x" * 80 + '"']
    slot = {kind: "-[:" + "|".join(cypher_identifier(r) for r in pool[:2]) + "]->"
            for kind, pool in (("Entity", rels), ("CVT", cvt_rels))}
    best = ""
    for shape in walks(max_hops, bool(cvt_rels)):
        walk = [v for v, _ in shape]
        text = "MATCH (e:Entity {name: " + max(names, key=len) + "})"
        for k, (var, label) in enumerate(shape):
            through = label == "CVT" or (k and shape[k - 1][1] == "CVT")
            text += slot["CVT" if through else "Entity"] + f"({var}:{label})"
        text += " WHERE " + " AND ".join(conditions(constraints, walk, has_types=has_types))
        returns = [" RETURN DISTINCT x.name AS answer LIMIT 99"] + ordered_returns(constraints, walk)
        best = max(best, text + max(returns, key=len), key=len)
    return best


def token_budget(query: str) -> int:
    """Completion tokens that cover ``query`` (and a short preamble)."""
    return len(query) // CHARS_PER_TOKEN + 8


def cypher_grammar(relation_types: Sequence[str], entity_names: Sequence[str], max_hops: int = 3,
                   constraints: QueryConstraints | None = None, *, cvt_relations: Sequence[str] = (),
                   has_types: bool = False) -> str:
    """GBNF admitting the read-only query shape above over ``relation_types`` and ``entity_names``.

    ``relation_types`` must be non-empty (the question's candidate relations R_q); with no ``entity_names`` the topic
    node's name is any string literal. ``max_hops`` (1..5) bounds the hops of the path; ``cvt_relations`` (those of
    R_q that meet CVT nodes) may form a hop through a ``(c:CVT)`` node. ``constraints``: C_q, the source of the
    conditions and of the ordinal form; ``has_types``: the graph stores ``types``.
    """
    rels = list(dict.fromkeys(r for r in relation_types if r))
    if not rels:
        raise ValueError("cypher_grammar needs at least one relation type")
    if not 1 <= max_hops <= 5:
        raise ValueError(f"max_hops must be between 1 and 5, got {max_hops}")
    cvt_rels = [r for r in dict.fromkeys(cvt_relations) if r in rels]
    names = list(dict.fromkeys(n for n in entity_names if n))
    entity = _alternatives([cypher_literal(n) for n in names]) if names else "string"

    # One alternative per walk shape, each with the conditions and sort key over the node variables it binds.
    lines = ['root ::= "MATCH " body']
    bodies = []
    for f, shape in enumerate(walks(max_hops, bool(cvt_rels)), start=1):
        parts = ['"(e:Entity {name: " entity "})"']
        for k, (var, label) in enumerate(shape):
            parts += ["crel" if label == "CVT" or (k and shape[k - 1][1] == "CVT") else "rel", f'"({var}:{label})"']
        walk = [v for v, _ in shape]
        conds = conditions(constraints, walk, has_types=has_types)
        lines += [f"path{f} ::= " + " ".join(parts),
                  f"cond{f} ::= " + _alternatives(conds)]
        ret = "plain"
        ordered = ordered_returns(constraints, walk)
        if ordered:
            lines.append(f"ret{f} ::= plain | " + _alternatives(ordered))
            ret = f"ret{f}"
        more = f' (" AND " cond{f}){{0,{len(conds) - 1}}}' if len(conds) > 1 else ""
        bodies.append(f'path{f} (" WHERE " cond{f}{more})? {ret}')
    lines.insert(1, "body ::= " + " | ".join(f"({b})" for b in bodies))
    lines += [
        'plain ::= " RETURN DISTINCT x.name AS answer" limit?',
        "rel ::= " + " | ".join(d.format(t="types") for d in _DIRECTIONS),
        'types ::= type ("|" type)?',
        "type ::= " + _alternatives([cypher_identifier(r) for r in rels]),
        "entity ::= " + entity,
        'limit ::= " LIMIT " [1-9] [0-9]?',
    ]
    if cvt_rels:
        lines += ["crel ::= " + " | ".join(d.format(t="ctypes") for d in _DIRECTIONS),
                  'ctypes ::= ctype ("|" ctype)?',
                  "ctype ::= " + _alternatives([cypher_identifier(r) for r in cvt_rels])]
    if not names:
        lines += ['string ::= "\\"" char{0,80} "\\""', r'char ::= [^"\\\x00-\x1f] | "\\" ["\\]']
    return "\n".join(lines) + "\n"
