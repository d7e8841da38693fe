"""A GBNF grammar for the read-only Cypher shape of sgr's NL→Cypher stage, built from the question's schema.

Grammar-constrained decoding (llama.cpp's GBNF, sent as ``grammar`` in the request body) lets a small model write
only queries of this shape::

    MATCH (e:Entity {name: "<topic entity>"})-[:`rel`]-(x1:Entity)-[:`rel`]->(x:Entity)
          [, (e2:Entity {name: "<topic entity>"})-[:`rel`]-(x)]
          [WHERE <condition> [AND <condition>]…]
    RETURN DISTINCT x.name AS answer [LIMIT n]

with 1..``max_hops`` relationships, each either undirected or pointing either way, whose types are ONLY the given
relation types (backtick-quoted, ``|`` alternatives allowed) and whose start nodes are ONLY the given entity names.
So the model cannot write a relationship type or a topic entity the graph lacks (SGR's schema guidance, Zhang et
al. §3.4.1: S_q restricts the query to R_q), nor anything but a read query. Conditions compare a node's ``name``
with a string (``=``, ``<>``, ``CONTAINS``, ``STARTS WITH``) or exclude the topic entity (``x <> e``). The grammar
fixes the form, not the meaning: the model may still pick the wrong relation.

SGR's NL→Cypher stage sends this grammar through :func:`cypher.translate.grammar_for`, which by default keeps only
the path alternatives (no ``WHERE``, no second pattern): free-string conditions made constrained decoding about
7× slower on the local model, which never used them.
"""

from __future__ import annotations

from collections.abc import Sequence

from sgr.core.text import cypher_literal, gbnf_literal

#: Relationship direction templates: undirected, left-to-right, right-to-left (never ``<-[…]->``).
_DIRECTIONS = ('"-[:" types "]-"', '"-[:" types "]->"', '"<-[:" types "]-"')


def cypher_identifier(name: str) -> str:
    """A backtick-quoted Cypher identifier (relationship type or label)."""
    return "`" + name.replace("`", "``") + "`"


def _alternatives(items: Sequence[str]) -> str:
    return " | ".join(gbnf_literal(i) for i in items)


def cypher_grammar(relation_types: Sequence[str], entity_names: Sequence[str], max_hops: int = 3) -> str:
    """GBNF admitting the read-only query shape above over ``relation_types`` and ``entity_names``.

    ``relation_types`` must be non-empty (the question's candidate relations R_q); with no ``entity_names`` the topic
    node's name is any string literal. ``max_hops`` (1..5) bounds the relationships in the main path.
    """
    rels = list(dict.fromkeys(r for r in relation_types if r))
    if not rels:
        raise ValueError("cypher_grammar needs at least one relation type")
    if not 1 <= max_hops <= 5:
        raise ValueError(f"max_hops must be between 1 and 5, got {max_hops}")
    names = list(dict.fromkeys(n for n in entity_names if n))
    entity = _alternatives([cypher_literal(n) for n in names]) if names else "string"

    # One alternative per (path length, second pattern or not), each with the node variables it binds, so a
    # WHERE condition can only name a variable the MATCH defined.
    lines = ['root ::= "MATCH " body " RETURN DISTINCT x.name AS answer" limit?']
    bodies = []
    for hops in range(1, max_hops + 1):
        parts = ['"(e:Entity {name: " entity "})"']
        for i in range(1, hops):
            parts += ["rel", f'"(x{i}:Entity)"']
        parts += ["rel", '"(x:Entity)"']
        node_vars = ["x", "e"] + [f"x{i}" for i in range(1, hops)]
        lines += [
            f"path{hops} ::= " + " ".join(parts),
            f"var{hops} ::= " + _alternatives(node_vars),
            f"varb{hops} ::= " + _alternatives(node_vars + ["e2"]),
            f'cond{hops} ::= "x <> e" | var{hops} ".name " op " " string',
            f'condb{hops} ::= "x <> e" | "x <> e2" | varb{hops} ".name " op " " string',
        ]
        bodies.append(f'path{hops} (" WHERE " cond{hops} (" AND " cond{hops})?)?')
        bodies.append(f'path{hops} second (" WHERE " condb{hops} (" AND " condb{hops})?)?')
    lines.insert(1, "body ::= " + " | ".join(f"({b})" for b in bodies))
    lines += [
        'second ::= ", (e2:Entity {name: " entity "})" rel "(x)"',
        "rel ::= " + " | ".join(_DIRECTIONS),
        'types ::= type ("|" type)?',
        "type ::= " + _alternatives([cypher_identifier(r) for r in rels]),
        "entity ::= " + entity,
        'op ::= "=" | "<>" | "CONTAINS" | "STARTS WITH"',
        'limit ::= " LIMIT " [1-9] [0-9]?',
        'string ::= "\\"" char{0,80} "\\""',
        r'char ::= [^"\\\x00-\x1f] | "\\" ["\\]',
    ]
    return "\n".join(lines) + "\n"
