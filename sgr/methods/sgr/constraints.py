"""C_q that acts (SGR §3.1.1: constraints "filter candidate reasoning paths"): SGR's constraints → the typed
:class:`cypher.conditions.QueryConstraints` that Cypher applies, and the post-filter for answers whose query did not.

:func:`query_constraints` is the one translation (values the rules or the model found → conditions):

    type T          T the question's type word (``university``); ``who`` → person, ``where`` → location
                    (those two act through stored ``types`` only); ``when``/time: none
    time Y          a date range on the walk contains Y — unless a comparison takes the year:
    comparison      before/until Y: a date on the walk starts before Y; after/since Y: after Y
    ordinal         first/earliest/oldest → earliest start; last/latest/newest/youngest/most recent/recent/current/
                    currently/now/today → latest
    superlative     largest/biggest/smallest (area or population), tallest/highest/lowest (height, elevation),
                    longest/shortest, deepest, richest, most/least populous → the largest/smallest number of
                    that measure on the answer (:data:`SUPERLATIVES`)
    number          more than/over/at least/less than/under N <unit> → the answer's number of the unit's measure
                    compared with N (:data:`UNITS`; "million" etc. scale N; no unit word: no condition)
    count           the answer is the number of distinct answers
    second entity   the other linked entities the answer must each touch (conjunctions: a join), when the caller
                    names them
    mention         (``mention=True``) a CVT of the walk touches a node the question names outside the linked
                    mentions: "who plays Timon's voice in The Lion King" → the performance of the character Timon

Where C_q acts (one way each): the compiled query of a schema path applies every condition but ``count`` in
Cypher (:func:`cypher.compile.compile_schema_path`, called by ``SGRAnswerer.run_compiled``). The post-filter
:func:`apply_constraints` runs the SAME conditions in Cypher over the final answers' own walks
(:func:`cypher.compile.compile_walk_filter`) — for answers that came from the model's own Cypher or the
collaborative votes, and for ``count``, which counts the validated answers (so each counted answer was validated on
its own walk first). In these two queries every condition is soft: when no answer satisfies it, it keeps
them all. The model's NL→Cypher grammar offers the same condition texts as ``WHERE`` alternatives (and the ordinal as
``ORDER BY … LIMIT 1``), which act as written when the model chooses them (:mod:`cypher.grammar`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from cypher.compile import compile_checkable, compile_walk_filter
from cypher.conditions import QueryConstraints, mention_words
from sgr.core.lexicon import (AFTER, BEFORE, EARLIEST, GENERIC, LATEST, NUMBER, NUMBER_LITERAL,
                              NUMBER_OPS, POPULOUS, SCALE, SUPERLATIVES, UNITS, YEAR)
from sgr.core.types import Answer
from sgr.graph.store import GraphStore


def stores_types(store: GraphStore) -> bool:
    """Whether the graph knows the ``types`` property (a condition on it would otherwise be an EXPLAIN warning)."""
    rows = store.read("CALL db.propertyKeys() YIELD propertyKey WHERE propertyKey = 'types' RETURN count(*) AS n")
    return bool(rows and rows[0]["n"])


def query_constraints(constraints: Sequence[Any], question: str = "", *, count: bool = True,
                      join_ids: Sequence[str] = (), second_name: str | None = None,
                      mention: bool = False) -> QueryConstraints:
    """The conditions Cypher can apply for SGR's ``constraints`` (module docstring); ``count=False`` leaves the
    count out (it is applied after validation); ``mention``: a CVT of the walk should touch a node that ``question``
    (the cue text: linked mentions masked) names."""
    type_name = year = ordinal = extreme = measure = None
    op = "in"
    has_count = False
    qyear = YEAR.search(question)
    for c in constraints:
        value = (getattr(c, "value", None) or "").lower().strip()
        if c.kind == "type" and type_name is None and value and value != "time":
            word = GENERIC.get(value, value)
            if value not in GENERIC and len(word) > 4:  # plural → singular: cities → city, films → film
                word = word[:-3] + "y" if word.endswith("ies") else word[:-1] if word.endswith("s") and not word.endswith("ss") else word
            type_name = word if word.isalpha() else None
        elif c.kind == "time" and year is None and value.isdigit():
            year = int(value)
        elif c.kind == "comparison" and value in BEFORE | AFTER:
            op = "before" if value in BEFORE else "after"
        elif c.kind == "ordinal" and ordinal is None and value in EARLIEST | LATEST:
            ordinal = "earliest" if value in EARLIEST else "latest"
        elif c.kind == "count":
            has_count = True
        elif c.kind == "ordinal" and extreme is None and value in SUPERLATIVES:
            extreme, measure = SUPERLATIVES[value]
    if op != "in" and year is None and qyear:
        year = int(qyear.group(1))
    if year is None:
        op = "in"
    if extreme is None and POPULOUS.search(question):
        extreme, measure = SUPERLATIVES[POPULOUS.search(question).group(0).lower()]
    number, number_op, number_measure = numeric_comparison(question)
    if extreme is None and number is not None:
        measure = number_measure
    elif number_measure != measure:
        number = None  # one measure per query: the superlative's
    mention_text = mention_words(question) if mention and question.strip() else None
    return QueryConstraints(type_name=type_name, year=year, year_op=op, ordinal=ordinal, count=count and has_count,
                            join_ids=tuple(join_ids), second_name=second_name, mention_text=mention_text,
                            measure=measure, number=number,
                            number_op=number_op, extreme=extreme)


def numeric_comparison(question: str) -> tuple[float | None, str, str | None]:
    """``(N, op, measure)`` of "more than 5 million people" in ``question``; ``(None, ">", None)`` when there is
    none or no word names the measure."""
    m = NUMBER.search(question)
    if not m or (m.group(4) or "").lower() not in UNITS:
        return None, ">", None
    value = float(m.group(2).replace(",", "")) * SCALE.get((m.group(3) or "").lower(), 1.0)
    return value, NUMBER_OPS[m.group(1).lower()], UNITS[m.group(4).lower()]


def constrained_walks(store: GraphStore, walks: Sequence[tuple[str, Sequence[str]]],
                      qc: QueryConstraints) -> set[tuple[str, ...]] | None:
    """The walks ``(answer id, node ids)`` that satisfy C_q (``count`` aside), as node-id tuples — every walk when
    none does (the conditions are soft); None when C_q has nothing to apply or there are no walks."""
    qc = dataclasses.replace(qc, count=False)
    if qc.empty or not walks:
        return None
    query = compile_walk_filter(walks, qc, limit=len({a for a, _ in walks}), paths_per_answer=len(walks))
    return {tuple(ids) for r in query.run(store).rows for ids in r["path_ids"]}


def other_entities(linked: Sequence[str], seed: str) -> tuple[str, ...]:
    """The linked entities a walk from ``seed`` should meet (C_q's join: a conjunction's other entities)."""
    return tuple(dict.fromkeys(e for e in linked if e != seed))


def voting_walks(store: GraphStore, walks: Sequence[Sequence[str]], linked: Sequence[str],
                 mention_text: str | None) -> tuple[set[tuple[str, ...]], list[str]]:
    """The walks (node ids from a linked entity) that meet another entity of ``linked`` (their answer or a CVT of
    the walk touches it: C_q's join, :data:`~cypher.conditions.JOIN_KIND`), then, of those, the ones that touch the
    question's mention (:func:`constrained_walks`), and the kinds that held — each a soft condition that kept a strict
    subset of a seed's walks; only the walks of seeds where a condition held are kept, every walk when it held
    nowhere."""
    kept: set[tuple[str, ...]] = set()
    kinds: list[str] = []
    for seed in dict.fromkeys(w[0] for w in walks):
        mine = {tuple(w) for w in walks if w[0] == seed}
        held = False
        for qc in (QueryConstraints(join_ids=other_entities(linked, seed)),
                   QueryConstraints(mention_text=mention_text)):
            met = constrained_walks(store, [(w[-1], list(w)) for w in mine], qc)
            if met is not None and met < mine:  # a strict subset: some walks met the condition
                mine, held = met, True
                kinds += [k for k in qc.kinds if k not in kinds]
        if held:
            kept |= mine
    return (kept, kinds) if kept else ({tuple(w) for w in walks}, [])


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
    rows = query.run(store).rows
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


def unchecked_constraints(store: GraphStore | None, answers: Sequence[Answer], constraints: Sequence[Any],
                          question: str) -> list[str]:
    """The question's constraints that nothing checked, one note each (the trace's "could not be checked"):

    * a comparison, ordinal or superlative the rules found that no condition expresses (no year, date order or
      known measure: "an ISO numeric greater than 132"), and a number the question states that no condition uses
      ("a long term unemployment rate of 15.5");
    * a time, comparison or ordinal condition when no node of the answers' walks carries a date, and a numeric
      condition when no answer carries a number of its measure — the soft conditions then kept every answer.

    ``question`` is the cue text (entity mentions masked); ``answers`` the final ones with their walks."""
    qc = query_constraints(constraints, question, count=False)
    notes: list[str] = []
    for c in constraints:
        if c.kind == "comparison" and qc.year is None and qc.number is None:
            notes.append(f"comparison {c.text!r}: no date or known measure to compare")
        elif c.kind == "ordinal" and qc.ordinal is None and qc.extreme is None:
            notes.append(f"ordinal {c.text!r}: no date order or known measure to rank by")
    for m in NUMBER_LITERAL.finditer(question):  # a stated number: the numeric condition uses it, a year the date one
        if qc.number is None and not YEAR.fullmatch(m.group(0)):
            notes.append(f"value {m.group(0)!r}: no property of the graph is compared with it")
    dated = qc.year is not None or qc.ordinal is not None
    if store is None or not answers or not (dated or qc.measure):
        return notes
    walks = [(a.id, list(p.nodes)) for a in answers if a.id for p in (a.paths or [])] or \
        [(a.id, [a.id]) for a in answers if a.id]
    if not walks:
        return notes
    query = compile_checkable(walks, qc.measure)
    row = (query.run(store).rows or [{}])[0]
    if dated and not row.get("dated"):
        what = "ordinal" if qc.ordinal else ("time" if qc.year_op == "in" else "comparison")
        notes.append(f"{what}: no date on the answers' walks, so it kept every answer")
    if qc.measure and not row.get("measured"):
        notes.append(f"{'superlative' if qc.extreme else 'comparison'} on {qc.measure.replace('|', '/')}: "
                     "no answer carries that number, so it kept every answer")
    return notes


def settle_constraints(store: GraphStore, pred: Any, schema: Any, asked: Sequence[Any], *, limit: int,
                       in_cypher: bool) -> None:
    """C_q after the decision, on ``pred`` (a :class:`sgr.core.types.Prediction`) in place: the conditions the answers'
    query did not apply (``in_cypher``: a compiled route applied them all but ``count``; the voting paths met the
    mention before they voted), then the notes of what nothing checked (:func:`unchecked_constraints`) over the
    constraints the question ``asked`` — a later round that relaxed them leaves them all unchecked."""
    if pred.answers:
        qc = query_constraints(schema.constraints, schema.cue_text, mention=pred.route != "collaborative")
        if in_cypher:
            qc = QueryConstraints(count=qc.count)
        pred.answers, notes = apply_constraints(store, pred.answers, qc, limit=limit)
        if notes:
            pred.extra.setdefault("constraints_applied", []).extend(notes)
    if asked:
        unchecked = unchecked_constraints(store, pred.answers, asked, schema.cue_text)
        if list(schema.constraints) != list(asked):
            unchecked.append(f"{', '.join(c.kind for c in asked)}: relaxed to find any answer")
        if unchecked:
            pred.extra["constraints_unchecked"] = unchecked
