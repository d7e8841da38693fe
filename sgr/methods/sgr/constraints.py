"""C_q that acts on the answers (SGR §3.1.1: constraints "filter candidate reasoning paths"), read from the graph.

For every answer the graph is asked, in one query, for the facts its own paths carry:

* **dates** — from each CVT node on the answer's paths (and the answer node itself): literal properties whose key
  ends in ``from``/``start_date``/``to``/``end_date``/``date``, and the names of neighbours reached over relations
  whose type ends that way (Freebase keeps dates on CVT siblings); each gives a year range [start, end];
* **types** — the ``types`` list property of the answer node (stored at load time from ``type.object.type`` /
  ``common.topic.notable_types``), when present.

Then, per constraint kind (each is a no-op when the graph has nothing to decide by, so it never empties the answer):

    time Y          keep answers with a range containing Y            (start ≤ Y ≤ end; a missing end is open)
    comparison      before/until Y: start < Y;  after/since Y: start > Y   (Y the question's year)
    ordinal         first/earliest/oldest: the smallest start; last/latest/newest/current/recent: the largest
    type T          keep answers whose types name T (``education.university`` for "university")
    count           the answer is the number of distinct answers (their paths kept as its evidence)

When no answer carries a date, ordinal and time fall back to years written in the answer names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sgr.core.types import Answer
from sgr.graph.store import GraphStore

_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
LATEST = {"last", "latest", "most recent", "newest", "recent", "current"}
EARLIEST = {"first", "earliest", "oldest"}
BEFORE = {"before", "until"}
AFTER = {"after", "since"}
_DATE_KEY = re.compile(r"(^|[._])(from|to|start_date|end_date|date|start|end)$")


@dataclass
class Facts:
    """What the graph says about one answer along its own paths."""

    ranges: list[tuple[int, int | None]] = field(default_factory=list)
    types: list[str] = field(default_factory=list)

    @property
    def start(self) -> int | None:
        return min((a for a, _ in self.ranges), default=None)


def _year(value: Any) -> int | None:
    m = _YEAR.search(str(value)) if value is not None else None
    return int(m.group(1)) if m else None


def _range(pairs: list[tuple[str, Any]]) -> tuple[int, int | None] | None:
    start = end = None
    for key, value in pairs:
        y = _year(value)
        if y is None:
            continue
        k = key.lower()
        if k.endswith(("to", "end_date", "end")):
            end = y if end is None else max(end, y)
        else:
            start = y if start is None else min(start, y)
    if start is None and end is None:
        return None
    return (start if start is not None else end, end)  # type: ignore[return-value]


def answer_facts(store: GraphStore, answers: Sequence[Answer]) -> dict[str, Facts]:
    """Dates and types of each answer (by id) from its paths' CVT nodes and its own node (one read query)."""
    rows_in = [{"id": a.id, "nodes": sorted({n for p in a.paths for n in p.nodes[1:]} | {a.id})}
               for a in answers if a.id]
    if not rows_in:
        return {}
    rows = store.read(
        "UNWIND $rows AS row MATCH (a:Entity {id: row.id}) "
        "CALL (row) { UNWIND row.nodes AS nid MATCH (n:Entity {id: nid}) WHERE n:CVT OR n.id = row.id "
        "  OPTIONAL MATCH (n)-[r]-(d:Entity) WHERE type(r) =~ '(?i).*(from|to|start_date|end_date|date)$' "
        "  RETURN n.id AS node, properties(n) AS props, collect([type(r), d.name]) AS dates } "
        "RETURN row.id AS id, a.types AS types, collect([node, props, dates]) AS facts",
        {"rows": rows_in})
    out: dict[str, Facts] = {}
    for r in rows:
        f = Facts(types=[str(t) for t in (r["types"] or [])] if isinstance(r["types"], list)
                  else ([str(r["types"])] if r["types"] else []))
        for _node, props, dates in r["facts"]:
            pairs = [(k, v) for k, v in (props or {}).items() if _DATE_KEY.search(k) and k not in ("id", "name")]
            pairs += [(t, n) for t, n in dates if t and n]
            rng = _range(pairs)
            if rng is not None:
                f.ranges.append(rng)
        out[r["id"]] = f
    return out


def apply_constraints(store: GraphStore | None, answers: list[Answer], constraints: Sequence[Any],
                      question: str = "") -> tuple[list[Answer], list[str]]:
    """Filter, order or count ``answers`` by C_q (module docstring); returns the answers and one note per
    constraint that changed something."""
    notes: list[str] = []
    if not answers or not constraints:
        return answers, notes
    facts = answer_facts(store, answers) if store is not None else {}
    qyear = _year(question)
    for c in constraints:
        value = (getattr(c, "value", None) or "").lower()
        kind = c.kind
        if kind == "time" and value.isdigit():
            y = int(value)
            keep = [a for a in answers if any(s <= y <= (e if e is not None else 9999)
                                              for s, e in facts.get(a.id or "", Facts()).ranges)]
            if keep and len(keep) < len(answers):
                answers = keep
                notes.append(f"time {y}: kept {len(keep)} answers whose facts hold then")
        elif kind == "comparison" and value in BEFORE | AFTER and qyear is not None:
            dated = [(facts[a.id].start, a) for a in answers if a.id in facts and facts[a.id].start is not None]
            keep = [a for s, a in dated if (s < qyear if value in BEFORE else s > qyear)]
            if keep and len(keep) < len(answers):
                answers = keep
                notes.append(f"comparison '{value} {qyear}': kept {len(keep)} answers")
        elif kind == "ordinal" and (value in LATEST or value in EARLIEST) and len(answers) > 1:
            dated = [(facts[a.id].start, a) for a in answers if a.id in facts and facts[a.id].start is not None]
            source = "graph"
            if len(dated) < 2:
                dated = [(int(m.group(1)), a) for a in answers if (m := _YEAR.search(a.text))]
                source = "name"
            if len(dated) >= 2:
                pick = max(dated, key=lambda x: x[0]) if value in LATEST else min(dated, key=lambda x: x[0])
                answers = [pick[1]]
                notes.append(f"ordinal '{value}': kept the answer dated {pick[0]} ({source})")
        elif kind == "type" and value and value not in ("person", "place", "time") and len(answers) > 1:
            stem = value[:-1] if value.endswith("s") and len(value) > 4 else value
            typed = [a for a in answers if any(stem in t.lower() for t in facts.get(a.id or "", Facts()).types)]
            source = "types"
            if not typed:
                typed = [a for a in answers if re.search(rf"\b{re.escape(stem)}", a.text, re.I)]
                source = "name"
            if typed and len(typed) < len(answers):
                answers = typed
                notes.append(f"type '{value}': kept {len(typed)} answers ({source})")
        elif kind == "count":
            paths = [p for a in answers for p in a.paths[:1]]
            answers = [Answer(text=str(len(answers)), id=None, score=1.0, paths=paths[:10])]
            notes.append(f"count: {len(paths)} distinct answers")
    return answers, notes
