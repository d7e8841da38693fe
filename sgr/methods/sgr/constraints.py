"""C_q that acts (SGR §3.1.1: constraints "filter candidate reasoning paths"): SGR's constraints → the typed
:class:`cypher.conditions.QueryConstraints` that Cypher applies, and the post-filter for answers whose query did not.

:func:`query_constraints` is the one translation (values the rules or the model found → conditions):

    type T          T the question's type word (``university``); ``who`` → person, ``where`` → location
                    (those two act through stored ``types`` only); ``when``/time: none
    time Y          a date range on the walk contains Y — unless a comparison takes the year:
    comparison      before/until Y: a date on the walk starts before Y; after/since Y: after Y
    ordinal         first/earliest/oldest → earliest start; last/latest/newest/most recent/recent/current → latest
    count           the answer is the number of distinct answers
    second entity   a second linked entity the answer must touch (conjunctions), when the caller names one

Where C_q acts (one way each): the compiled query of a schema path applies every condition but ``count`` in
Cypher (:func:`cypher.compile.compile_schema_path`, called by ``SGRAnswerer.run_compiled``). The post-filter
:func:`apply_constraints` runs the SAME conditions in Cypher over the final answers' own walks
(:func:`cypher.compile.compile_walk_filter`) — for answers that came from the model's own Cypher or the
collaborative votes, and for ``count``, which counts the validated answers (so each counted answer was validated on
its own walk first). Numeric comparisons (more than, over …) and numeric superlatives (largest …) have no graph
reading here and act nowhere. In these two queries every condition is soft: when no answer satisfies it, it keeps
them all. The model's NL→Cypher grammar offers the same condition texts as ``WHERE`` alternatives (and the ordinal as
``ORDER BY … LIMIT 1``), which act as written when the model chooses them (:mod:`cypher.grammar`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

from cypher.compile import compile_walk_filter
from cypher.conditions import QueryConstraints
from sgr.core.types import Answer
from sgr.graph.store import GraphStore

_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
LATEST = {"last", "latest", "most recent", "newest", "recent", "current"}
EARLIEST = {"first", "earliest", "oldest"}
BEFORE = {"before", "until"}
AFTER = {"after", "since"}
#: the question's generic type words → the word stored types carry
GENERIC = {"person": "person", "place": "location"}


def stores_types(store: GraphStore) -> bool:
    """Whether the graph knows the ``types`` property (a condition on it would otherwise be an EXPLAIN warning)."""
    rows = store.read("CALL db.propertyKeys() YIELD propertyKey WHERE propertyKey = 'types' RETURN count(*) AS n")
    return bool(rows and rows[0]["n"])


def query_constraints(constraints: Sequence[Any], question: str = "", *, count: bool = True,
                      second_id: str | None = None, second_name: str | None = None) -> QueryConstraints:
    """The conditions Cypher can apply for SGR's ``constraints`` (module docstring); ``count=False`` leaves the
    count out (it is applied after validation)."""
    type_name = year = ordinal = None
    op = "in"
    has_count = False
    qyear = _YEAR.search(question)
    for c in constraints:
        value = (getattr(c, "value", None) or "").lower().strip()
        if c.kind == "type" and type_name is None and value and value != "time":
            word = GENERIC.get(value, value)
            word = word[:-1] if word.endswith("s") and len(word) > 4 and value not in GENERIC else word
            type_name = word if word.isalpha() else None
        elif c.kind == "time" and year is None and value.isdigit():
            year = int(value)
        elif c.kind == "comparison" and value in BEFORE | AFTER:
            op = "before" if value in BEFORE else "after"
        elif c.kind == "ordinal" and ordinal is None and value in EARLIEST | LATEST:
            ordinal = "earliest" if value in EARLIEST else "latest"
        elif c.kind == "count":
            has_count = True
    if op != "in" and year is None and qyear:
        year = int(qyear.group(1))
    if year is None:
        op = "in"
    return QueryConstraints(type_name=type_name, year=year, year_op=op, ordinal=ordinal, count=count and has_count,
                            second_id=second_id, second_name=second_name)


def apply_constraints(store: GraphStore | None, answers: list[Answer], constraints: Sequence[Any] | QueryConstraints,
                      question: str = "", *, limit: int = 200) -> tuple[list[Answer], list[str]]:
    """Filter, order or count ``answers`` by C_q in Cypher over their own walks (module docstring); returns the
    answers (their paths cut to the walks that satisfy C_q) and one note when something changed."""
    qc = constraints if isinstance(constraints, QueryConstraints) else query_constraints(constraints, question)
    if not answers or qc.empty or store is None:
        return answers, []
    walks: list[tuple[str, list[str]]] = []
    for a in answers:
        if a.id:
            walks += [(a.id, list(p.nodes)) for p in a.paths if p.nodes] or [(a.id, [a.id])]
    if not walks:
        return answers, []
    query = compile_walk_filter(walks, qc, limit=max(limit, len(answers)), paths_per_answer=10)
    rows = store.run_generated(query.cypher, query.params).rows
    kinds = ", ".join(qc.kinds)
    if not rows:
        return answers, [f"{kinds}: the constrained query returned nothing; answers kept"]
    if qc.count:
        by_walk = {tuple(p.nodes): p for a in answers for p in a.paths}
        paths = [by_walk[tuple(ids)] for ids in rows[0]["path_ids"] if tuple(ids) in by_walk]
        return ([Answer(text=str(rows[0]["name"]), id=None, score=1.0, paths=paths[:10])],
                [f"{kinds}: {rows[0]['name']} distinct answers"])
    kept = {r["id"]: {tuple(ids) for ids in r["path_ids"]} for r in rows}
    with_id = [a for a in answers if a.id]
    if set(kept) == {a.id for a in with_id}:
        return answers, []
    out = []
    for a in answers:
        if a.id in kept:
            own = [p for p in a.paths if tuple(p.nodes) in kept[a.id]]
            out.append(dataclasses.replace(a, paths=own or a.paths))
    return out, [f"{kinds} in Cypher: kept {len(out)} of {len(answers)} answers"]
