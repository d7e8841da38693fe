"""Checks of generated Cypher before it runs (SGR §3.4.1: Q_c must be executable on G).

Two layers, both returning structured :class:`Problem` s that :mod:`cypher.repair` shows the model:

1. :func:`static_check` — without Neo4j: the query must be one read-only statement (no ``CREATE``, ``MERGE``,
   ``SET``, ``DELETE``, ``REMOVE``, ``DROP``, ``LOAD CSV``, ``FOREACH``, write procedures …) with a ``RETURN``, and every
   relationship type it names must be in the graph's vocabulary (so a relation the graph does not have never runs).
2. :func:`explain_check` — ``EXPLAIN`` through :meth:`sgr.graph.store.GraphStore.explain`: syntax and semantic errors
   become ``syntax`` problems; Neo4j's notifications (unknown relationship type, label or property, cartesian
   products …) become problems of their own kind.

:func:`validate` runs both (EXPLAIN only when the static check passes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from sgr.core.errors import CypherError

WRITE_CLAUSES = re.compile(
    r"\b(CREATE|MERGE|DELETE|DETACH|SET|REMOVE|DROP|FOREACH|LOAD\s+CSV|GRANT|REVOKE|DENY|ALTER|RENAME|"
    r"START\s+DATABASE|STOP\s+DATABASE|TERMINATE|IN\s+TRANSACTIONS)\b", re.IGNORECASE)
WRITE_PROCEDURES = re.compile(
    r"\b(apoc\.(create|merge|refactor|periodic|load|import|export|trigger|nodes\.delete|do|cypher\.(run)?write|"
    r"atomic|lock|schema\.assert)|db\.(create|drop|clear)|dbms\.)", re.IGNORECASE)
#: Neo4j notification codes → problem kinds
NOTIFICATION_KINDS = {
    "Neo.ClientNotification.Statement.UnknownRelationshipTypeWarning": "unknown_relationship_type",
    "Neo.ClientNotification.Statement.UnknownLabelWarning": "unknown_label",
    "Neo.ClientNotification.Statement.UnknownPropertyKeyWarning": "unknown_property",
    "Neo.ClientNotification.Statement.CartesianProduct": "cartesian_product",
    "Neo.ClientNotification.Statement.UnboundedVariableLengthPattern": "unbounded_path",
}
#: problem kinds that make a query unusable (others are reported but the query may still run)
BLOCKING = {"write", "multiple_statements", "no_return", "empty", "unknown_relationship_type", "unknown_label",
            "unknown_property", "syntax"}
REL_TYPES = re.compile(r"\[\s*(?:[A-Za-z_][A-Za-z0-9_]*)?\s*:\s*([^\]\{\*]+)")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_BACKTICK = re.compile(r"`(?:[^`]|``)*`")


@dataclass
class Problem:
    """One thing wrong with a query: ``kind`` (e.g. ``unknown_relationship_type``), a message for the model."""

    kind: str
    message: str
    detail: str | None = None  # the offending name, when there is one

    @property
    def blocking(self) -> bool:
        return self.kind in BLOCKING


@dataclass
class Validation:
    """The outcome of :func:`validate`: ``ok`` when no problem blocks running the query."""

    query: str
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.query) and not any(p.blocking for p in self.problems)


def _code_only(query: str) -> str:
    """The query with string literals, comments and back-quoted names blanked (keywords inside them are data)."""
    q = _COMMENT.sub(" ", query)
    q = _STRING.sub("''", q)
    return _BACKTICK.sub("`x`", q)


def relationship_types_in(query: str) -> list[str]:
    """Relationship types named in ``[…:TYPE|TYPE…]`` patterns, back-ticks removed, in order of appearance."""
    q = _COMMENT.sub(" ", _STRING.sub("''", query))
    out: list[str] = []
    for m in REL_TYPES.finditer(q):
        for raw in re.split(r"\|:?", m.group(1)):
            t = raw.strip()
            if t.startswith("`") and t.endswith("`") and len(t) >= 2:
                t = t[1:-1].replace("``", "`")
            if t and t not in out:
                out.append(t)
    return out


def static_check(query: str, vocabulary: Iterable[str] | None = None) -> list[Problem]:
    """Read-only, single statement, has ``RETURN``, relationship types from ``vocabulary`` (when given)."""
    if not query.strip():
        return [Problem("empty", "the reply contained no Cypher query")]
    problems: list[Problem] = []
    code = _code_only(query)
    m = WRITE_CLAUSES.search(code)
    if m:
        problems.append(Problem("write", f"the query must only read, but it uses {m.group(1).upper()}", m.group(1)))
    m = WRITE_PROCEDURES.search(code)
    if m:
        problems.append(Problem("write", f"the query calls a procedure that may write: {m.group(0)}", m.group(0)))
    if ";" in code.strip().rstrip(";"):
        problems.append(Problem("multiple_statements", "write exactly one statement (no ';')"))
    if not re.search(r"\bRETURN\b", code, re.IGNORECASE):
        problems.append(Problem("no_return", "the query must end with RETURN"))
    if vocabulary is not None:
        vocab = set(vocabulary)
        for t in relationship_types_in(query):
            if t not in vocab:
                problems.append(Problem("unknown_relationship_type",
                                        f"the graph has no relationship type `{t}`", t))
    return problems


def _notification_problem(note: dict) -> Problem | None:
    code = str(note.get("code") or "")
    kind = NOTIFICATION_KINDS.get(code)
    if kind is None:
        if "Warning" not in str(note.get("severity", "")) and "WARNING" not in str(note.get("severity", "")):
            return None
        kind = "warning"
    desc = str(note.get("description") or note.get("title") or code)
    detail = None
    m = re.search(r"(?:missing \w+ name is|is|name is):?\s*[`']?([^`'\s)]+)[`']?\)?\s*$", desc)
    if m:
        detail = m.group(1)
    return Problem(kind, desc.splitlines()[0][:300], detail)


def explain_check(store, query: str) -> list[Problem]:  # noqa: ANN001 (GraphStore; avoids an import cycle)
    """``EXPLAIN`` the query; syntax errors and Neo4j notifications as problems."""
    try:
        notes = store.explain(query)
    except CypherError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "syntax error"
        return [Problem("syntax", first[:300])]
    out = []
    for n in notes:
        p = _notification_problem(n)
        if p is not None:
            out.append(p)
    return out


def validate(store, query: str, vocabulary: Iterable[str] | None = None) -> Validation:  # noqa: ANN001
    """Static check, then ``EXPLAIN`` when the static check let it through."""
    problems = static_check(query, vocabulary)
    if store is not None and not any(p.blocking for p in problems):
        problems += explain_check(store, query)
    return Validation(query=query, problems=problems)
