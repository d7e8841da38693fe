"""Is a Cypher query read-only? Neo4j's own plan decides; a text filter refuses the obvious cases first.

Untrusted Cypher (``sgr query``, a model's queries, sgr's compiled ones) runs only when both agree:

* :func:`check_read_query` — a fast first refusal on the query text, with a message that names what is refused:
  ``LOAD CSV``, ``USE``, administration commands (``SHOW`` other than indexes and constraints, ``TERMINATE``,
  ``ALTER`` …) and ``CALL`` of a procedure outside :data:`READ_PROCEDURES`. It lexes the text as Cypher does
  (strings, back-quoted names, ``//`` comments ending at ``\\r`` or ``\\n``, ``/* */``) *before* folding look-alike
  letters (NFKC), so that folding can never move where a string or comment ends.
* :func:`check_plan` — the decision: the ``EXPLAIN`` summary of the query, as Neo4j parsed and planned it, must be
  of query type read (``r``), every operator must be on :data:`READ_OPERATORS` and run on the session's database,
  and every ``ProcedureCall`` must call a procedure of :data:`READ_PROCEDURES`. Whatever spelling got past the text
  filter, a write, a ``SHOW``/``TERMINATE`` command, an administration command (planned on ``system``), a procedure
  call or ``LOAD CSV`` shows up in the plan.

The server adds its own layers: READ access mode for these sessions, only the plugin procedures of
``sgr.graph.server.PROCEDURE_ALLOWLIST`` loaded, no file or network URLs for ``LOAD CSV``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from sgr.core.errors import CypherError

#: Longest query text accepted on the read path (characters); generated queries are far shorter.
MAX_QUERY_CHARS = 100_000

#: Procedures a read may CALL: Neo4j's read-only built-ins that sgr (and Neo4j Browser) use, plus the
#: plugin procedures the embedded server loads (``sgr.graph.server.PROCEDURE_ALLOWLIST``).
READ_PROCEDURES = frozenset({
    "db.index.fulltext.queryNodes", "db.index.fulltext.queryRelationships", "db.relationshipTypes",
    "db.labels", "db.propertyKeys", "db.awaitIndex", "db.awaitIndexes", "db.schema.visualization",
    "db.schema.nodeTypeProperties", "db.schema.relTypeProperties", "db.info", "db.ping", "apoc.meta.stats",
})

#: Operators of Neo4j 5's read plans (the Cypher manual's "Operators in detail", read side): scans and seeks,
#: expands, joins, filters, projections, aggregation, sorting, subquery applies, ``SHOW INDEXES``/``CONSTRAINTS``,
#: ``ProcedureCall`` (each call checked against :data:`READ_PROCEDURES`). Absent on purpose: every write
#: (``Create``, ``Merge``, ``Set*``, ``Delete``, ``Foreach``, ``TransactionApply`` …), ``LoadCSV``, the other
#: ``Show*`` commands, ``TerminateTransactions`` and ``AdministrationCommand``.
READ_OPERATORS = frozenset({
    # leaves
    "AllNodesScan", "NodeByLabelScan", "NodeByIdSeek", "NodeByElementIdSeek", "NodeIndexSeek",
    "NodeUniqueIndexSeek", "NodeIndexSeekByRange", "NodeUniqueIndexSeekByRange", "NodeIndexContainsScan",
    "NodeIndexEndsWithScan", "NodeIndexScan", "MultiNodeIndexSeek", "AssertingMultiNodeIndexSeek",
    "AssertingMultiRelationshipIndexSeek", "IntersectionNodeByLabelsScan", "SubtractionNodeByLabelsScan",
    "UnionNodeByLabelsScan", "NodeCountFromCountStore", "RelationshipCountFromCountStore", "Argument",
    "ArgumentTracker", "Input", *(f"{d}{op}" for d in ("Directed", "Undirected") for op in (
        "RelationshipIndexScan", "RelationshipIndexSeek", "RelationshipUniqueIndexSeek", "RelationshipByIdSeek",
        "RelationshipByElementIdSeek", "RelationshipIndexContainsScan", "RelationshipIndexEndsWithScan",
        "RelationshipIndexSeekByRange", "RelationshipUniqueIndexSeekByRange", "RelationshipTypeScan",
        "AllRelationshipsScan", "UnionRelationshipTypesScan")),
    # traversal
    "Expand(All)", "Expand(Into)", "OptionalExpand(All)", "OptionalExpand(Into)", "VarLengthExpand(All)",
    "VarLengthExpand(Into)", "VarLengthExpand(Pruning)", "VarLengthExpand(Pruning,BFS)",
    "BFSPruningVarLengthExpand(All)", "BFSPruningVarLengthExpand(Into)", "ShortestPath",
    "StatefulShortestPath(All)", "StatefulShortestPath(Into)", "Repeat(Trail)", "Repeat(Walk)", "Trail",
    "NullifyMetadata", "ProjectEndpoints", "AssertSameNode", "AssertSameRelationship", "TriadicSelection",
    "TriadicBuild", "TriadicFilter",
    # rows
    "ProduceResults", "EmptyResult", "Filter", "Limit", "ExhaustiveLimit", "Skip", "Projection", "Distinct",
    "OrderedDistinct", "Sort", "PartialSort", "Top", "Top1WithTies", "PartialTop", "EagerAggregation", "OrderedAggregation",
    "Unwind", "Eager", "CacheProperties", "Optional", "Anti", "Union", "OrderedUnion",
    # joins and subqueries
    "Apply", "SemiApply", "AntiSemiApply", "LetSemiApply", "LetAntiSemiApply", "SelectOrSemiApply",
    "SelectOrAntiSemiApply", "LetSelectOrSemiApply", "LetSelectOrAntiSemiApply", "ConditionalApply",
    "AntiConditionalApply", "RollUpApply", "CartesianProduct", "NodeHashJoin", "NodeLeftOuterHashJoin",
    "NodeRightOuterHashJoin", "ValueHashJoin",
    # schema reads and read-only procedures
    "ShowIndexes", "ShowConstraints", "ProcedureCall",
})

# -- the text filter ---------------------------------------------------------------------------------------------
# One lexer pass over the *raw* text: comments (a `//` comment ends at \r or \n, as in Cypher; an unterminated
# `/*` runs to the end), string literals (backslash escapes) and back-quoted names (`` doubles a backtick).
_LEXEMES = re.compile(r"//[^\r\n]*|/\*.*?(?:\*/|\Z)|'(?:[^'\\]|\\.)*(?:'|\Z)|\"(?:[^\"\\]|\\.)*(?:\"|\Z)|`(?:[^`]|``)*(?:`|\Z)",
                      re.DOTALL)
_LOAD_CSV = re.compile(r"\bLOAD\s+CSV\b", re.IGNORECASE)
_USE = re.compile(r"(?:^|[\s{(;])USE(?:\s+[A-Za-z_]|\s*`)", re.IGNORECASE)
#: What may come before the query itself: `CYPHER` options (a version, key=value pairs), then EXPLAIN or PROFILE.
_PREFIX = re.compile(r"\s*(?:CYPHER(?:\s+\d+(?:\.\d+)?|\s+[\w.]+\s*=\s*[\w.]+)*(?=\s|$)\s*)?(?:(?:EXPLAIN|PROFILE)\b\s*)?",
                     re.IGNORECASE)
_ADMIN = re.compile(r"(SHOW|TERMINATE|GRANT|DENY|REVOKE|ALTER|RENAME|START|STOP|ENABLE|DEALLOCATE|REALLOCATE|DRYRUN|"
                    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:USER|ROLE|DATABASE|ALIAS|COMPOSITE|SERVER)|"
                    r"DROP\s+(?:USER|ROLE|DATABASE|ALIAS|COMPOSITE|SERVER))\b", re.IGNORECASE)
#: The one kind of SHOW a read may run: `SHOW [kind words] INDEX(ES)|CONSTRAINT(S)` (Browser and sgr read the schema).
_SHOW_SCHEMA = re.compile(r"SHOW(?:\s+(?:ALL|RANGE|FULLTEXT|TEXT|POINT|VECTOR|LOOKUP|BTREE|NODE|REL|RELATIONSHIP|UNIQUE|"
                          r"UNIQUENESS|KEY|EXIST|EXISTENCE|EXISTS|PROPERTY|TYPE|PROP))*\s+(?:INDEX|INDEXES|CONSTRAINT|"
                          r"CONSTRAINTS)\b", re.IGNORECASE)
_TERMINATE = re.compile(r"\bTERMINATE\s+(?:TRANSACTION|TRANSACTIONS|QUERY|QUERIES)\b", re.IGNORECASE)
_NAME = r"(?:`(?:[^`]|``)*`|[^\W\d]\w*)"
#: `CALL name…`: whitespace or a back-quote after CALL (`CALL\`dbms\`.x()` is a call too), not a subquery `CALL {`/`(`.
_CALL = re.compile(rf"\bCALL(?:\s+|(?=`))(?!\{{|\()({_NAME}(?:\s*\.\s*{_NAME})*)", re.IGNORECASE)


def _pieces(query: str) -> Iterator[tuple[str, str]]:
    """``(kind, text)`` in order: ``code``, ``comment``, ``string`` or ``name`` (back-quoted)."""
    i = 0
    for m in _LEXEMES.finditer(query):
        if m.start() > i:
            yield "code", query[i:m.start()]
        tok = m.group(0)
        yield ("comment" if tok[0] == "/" else "name" if tok[0] == "`" else "string"), tok
        i = m.end()
    if i < len(query):
        yield "code", query[i:]


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def cypher_code(query: str, *, names: bool = False) -> str:
    """``query`` with comments, string literals and (unless ``names``) back-quoted names blanked; its code NFKC-folded.

    The text is lexed as it stands, then only the code between the lexemes is folded (full-width ``ＬＯＡＤ`` compares
    as ``LOAD``): folding first could turn a full-width backslash into an escape and move where a string ends.
    With ``names`` back-quoted names stay (folded), for reading procedure names.
    """
    out = []
    for kind, text in _pieces(query):
        if kind == "code":
            out.append(_fold(text))
        elif kind == "comment":
            out.append(" ")
        elif kind == "string":
            out.append("''")
        else:
            out.append(_fold(text) if names else "`x`")
    return "".join(out)


def _procedure_name(raw: str) -> str:
    """``db . `index`.fulltext`` → ``db.index.fulltext`` (quotes and spaces out, doubled backticks single)."""
    parts = re.findall(_NAME, raw)
    return ".".join(p[1:-1].replace("``", "`") if p.startswith("`") else p for p in parts)


def check_read_query(query: str) -> None:
    """Refuse what a read must never do, from the text: raise :class:`CypherError` naming it.

    ``LOAD CSV`` (file or network access), ``USE`` (another database, e.g. ``system``), administration commands
    (``SHOW`` other than indexes and constraints, ``TERMINATE``, ``ALTER``, ``GRANT`` …) and ``CALL`` of a procedure
    outside :data:`READ_PROCEDURES`. A first refusal only: :func:`check_plan` decides.
    """
    if len(query) > MAX_QUERY_CHARS:
        raise CypherError(f"the query is {len(query):,} characters long; the limit is {MAX_QUERY_CHARS:,}")
    code = cypher_code(query)
    if _LOAD_CSV.search(code):
        raise CypherError("LOAD CSV is not allowed: sgr's queries may not read files or URLs")
    if _USE.search(code):
        raise CypherError("USE is not allowed: queries run on the configured database only")
    body = code[_PREFIX.match(code).end():]
    m = _ADMIN.match(body)
    if (m and not _SHOW_SCHEMA.match(body)) or _TERMINATE.search(code):
        word = (m.group(1) if m else "TERMINATE").split()[0].upper()
        raise CypherError(f"{word} commands are not allowed: only read queries run")
    for m in _CALL.finditer(cypher_code(query, names=True)):
        name = _procedure_name(m.group(1))
        if name not in READ_PROCEDURES:
            raise CypherError(f"CALL {name} is not allowed: only read procedures sgr uses may be called "
                              f"(db.labels, db.relationshipTypes, db.index.fulltext.queryNodes, … see READ_PROCEDURES)")


def plan_shape(query: str) -> str:
    """What decides whether a query sgr writes itself plans as a read: its code with comments, string literals and
    back-quoted names blanked (:func:`cypher_code`) and its white space single, or the whole text when it ``CALL``s a
    procedure.

    Reading or writing is in the clauses (``CREATE``, ``MERGE``, ``SET``, ``DELETE``, ``FOREACH``, ``LOAD CSV`` …)
    and in the procedures called, never in a relationship type, label, property key or variable name, nor in a
    string: two queries of one shape plan as a read both or neither, provided the lexer reads their strings and
    names as Neo4j does. That holds by construction for the compiler's queries (:mod:`cypher.compile`: every name
    quoted by ``quote_identifier``, every value a parameter or a ``cypher_literal``), whose plan check
    :meth:`sgr.graph.store.GraphStore.run_generated` makes once per shape (``plan_key``); it is not assumed of
    a model's or a user's text, whose check stays per text. A procedure's name may be back-quoted, so a query with a
    ``CALL`` is its own shape.
    """
    if _CALL.search(cypher_code(query, names=True)):
        return query
    return " ".join(cypher_code(query).split())


# -- the plan ----------------------------------------------------------------------------------------------------
def _operators(plan: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(operatorType, arguments)`` of every operator of an EXPLAIN plan (the driver's dict form), depth first."""
    stack = [plan]
    while stack:
        node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        yield str(node.get("operatorType", "")), node.get("args") or {}
        stack.extend(node.get("children") or [])


def _called(details: str) -> str:
    """The procedure a ``ProcedureCall`` operator calls, from its Details (``db.labels() :: (label :: STRING)``)."""
    m = re.match(r"\s*((?:`(?:[^`]|``)*`|[^\s(`])+)\s*\(", details or "")
    return _procedure_name(m.group(1)) if m else (details or "?").strip()


def check_plan(query_type: str | None, plan: Any, database: str) -> None:
    """Refuse unless Neo4j's EXPLAIN of the query is a read: raise :class:`CypherError` naming the reason.

    ``query_type``: the summary's (``r`` read, ``rw``/``w`` writes, ``s`` schema or administration); ``plan``: the
    summary's plan (nested dicts with ``operatorType``, ``args``, ``children``); ``database``: where the session
    runs. Every operator must be on :data:`READ_OPERATORS` and planned for ``database`` (``Operator@database``);
    every ``ProcedureCall`` must call one of :data:`READ_PROCEDURES`.
    """
    if plan is None:
        raise CypherError("Neo4j returned no plan for the query: only read queries run")
    for op, args in _operators(plan):
        name, _, where = op.partition("@")
        if name not in READ_OPERATORS:
            raise CypherError(f"Neo4j plans this query with {name}, which is not a read operator: only read "
                              "queries run")
        if where and where.lower() != database.lower():
            raise CypherError(f"the query would run on database {where!r}: queries run on {database!r} only")
        if name == "ProcedureCall":
            called = _called(str(args.get("Details", "")))
            if called not in READ_PROCEDURES:
                raise CypherError(f"the query calls {called}: only read procedures sgr uses may be called "
                                  "(see READ_PROCEDURES)")
    if query_type != "r":
        kind = {"rw": "reads and writes", "w": "writes", "s": "changes the schema or the system"}.get(
            query_type or "", f"is of type {query_type!r}")
        raise CypherError(f"Neo4j's plan says the query {kind}: only read queries run")
