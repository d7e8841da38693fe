"""Composition in two legs, judged on CWQ dev: does answering the entity a question only describes (its bridge)
first, then the question from that entity, beat the default ``sgr``'s one ranked path?

Asked of the CWQ dev questions whose text describes an entity it does not name
(:func:`sgr.core.lexicon.described_nouns`: "What movies has *the artist who recorded Long Live* appeared in?"),
each three ways with the default ``sgr`` and the configured model:

* ``base``: the question as ``sgr ask`` answers it;
* ``continue``: the base answer taken as the bridge, and the question asked again with it as the topic (the text
  unchanged; the entities already linked and the bridge are not answers);
* ``decompose``: the description cut from the text (from "the <noun> who/that/…" to the end of the linked topic's
  mention when the words before it end on an auxiliary that waits for the main verb — "What movies *has* …
  appeared in?" — else to the end of the question) and asked on its own from the linked topic ("what is the artist
  who recorded Long Live?"); its top answer replaces the description ("What movies has Taylor Swift appeared in?"),
  asked with that answer as the topic.

Reports strict Hits@1 of each, the oracle that takes whichever of base and two-leg answer is right, and a rule that
takes the two-leg answer when the base confidence is below ``t`` and the two-leg answer's is higher by more than
``m``: chosen on the even-numbered questions, judged on the odd-numbered ones. Dev data only. Needs Neo4j with the
WebQSP slice and CWQ dev loaded (NEO4J_URI) and the model served (``sgr llm serve``).

    python bench/composition_legs.py                 # every described question (492)
    python bench/composition_legs.py --limit 100     # a first look

Writes ``bench/results/composition_legs.json`` (summary: ``n``, ``base_hits1``, ``continue_hits1``,
``continue_oracle``, ``decompose_fired``, ``decompose_hits1``, ``decompose_oracle``, ``continue_rule_heldout_gain``,
``decompose_rule_heldout_gain``, the held-out half's size) and ``composition_legs.md``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from record import RESULTS, finished_config, served_weights, write_report  # noqa: E402
from sgr.core.errors import SgrError  # noqa: E402
from sgr.core.lexicon import DESCRIBED, asked_noun, described_nouns, singular  # noqa: E402
from sgr.core.types import Answer, Question  # noqa: E402
from sgr.datasets import shared_data_dir  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.methods.base import MethodContext  # noqa: E402
from sgr.methods.registry import create_method  # noqa: E402

#: Words before a description that wait for the main verb after it ("What movies *has* the artist who … appeared
#: in?"); a copula ("What language *is* spoken in the country where …?") does not.
AUXILIARIES = frozenset({"do", "does", "did", "has", "have", "had", "will", "can", "could", "would"})
LEGS = ("continue", "decompose")


def description(question: str, mention: str) -> tuple[int, int] | None:
    """The character span of the first description before the linked ``mention`` ends (module docstring)."""
    skip = asked_noun(question)
    at = question.lower().find(mention.lower())
    if at < 0:
        return None
    for m in DESCRIBED.finditer(question):
        if singular(m.group(1)) == skip or m.start() > at:
            continue
        before = question[:m.start()].split()
        if not before or before[-1].lower() in AUXILIARIES:
            end = at + len(mention)
            while end < len(question) and question[end] in "\"'),":
                end += 1
        else:
            end = len(question.rstrip().rstrip("?"))
        return m.start(), end
    return None


def top(result: Any, skip: Sequence[str] = ()) -> Answer | None:
    return next((a for a in result.prediction.answers if a.id not in skip), None)


def ask_one(answerer: Any, qid: str, text: str, topics: Sequence[str]) -> Any | None:
    try:
        return answerer.run(Question(id=qid, text=text, topic_entities=list(topics)))
    except SgrError:
        return None


def legs(answerer: Any, record: dict[str, Any]) -> dict[str, Any]:
    """One question asked the three ways (module docstring)."""
    q, gold = record["question"], set(record["answer"])
    row: dict[str, Any] = {"id": record["id"], "type": record["type"], "question": q}
    base = ask_one(answerer, record["id"], q, [])
    if base is None:
        return row
    b = top(base)
    row.update(base=b.text if b else None, base_ok=bool(b and b.text in gold), base_conf=base.prediction.confidence)
    if b is None or b.id is None:  # a literal answer is no topic to ask from
        return row
    linked = [e.id for e in base.entities]
    again = ask_one(answerer, record["id"] + "-continue", q, [b.id])
    a = top(again, [*linked, b.id]) if again is not None else None
    row.update(continue_answer=a.text if a else None, continue_ok=bool(a and a.text in gold),
               continue_conf=again.prediction.confidence if again is not None else None)
    span = description(q, base.entities[0].mention)
    if span is None:
        return row
    s, e = span
    sub_question = f"what is {q[s:e]}?"
    sub = ask_one(answerer, record["id"] + "-bridge", sub_question, [base.entities[0].id])
    bridge = top(sub) if sub is not None else None
    if bridge is None or bridge.id is None:
        return row
    main = q[:s] + bridge.text + q[e:]
    second = ask_one(answerer, record["id"] + "-decompose", main, [bridge.id])
    d = top(second, [*linked, bridge.id]) if second is not None else None
    row.update(sub_question=sub_question, bridge=bridge.text, main_question=main,
               decompose_answer=d.text if d else None, decompose_ok=bool(d and d.text in gold),
               decompose_conf=second.prediction.confidence if second is not None else None)
    return row


def rule(t: float, m: float, leg: str) -> Callable[[dict[str, Any]], bool]:
    """Take the two-leg answer when the base confidence is below ``t`` and the leg's exceeds it by more than ``m``."""
    return lambda r: (f"{leg}_ok" in r and (r.get("base_conf") or 0.0) < t
                      and (r.get(f"{leg}_conf") or 0.0) - (r.get("base_conf") or 0.0) > m)


def hits(rows: Sequence[dict[str, Any]], take: Callable[[dict[str, Any]], bool], leg: str) -> int:
    """Questions right when the two-leg answer is taken where ``take`` says so, and the base answer elsewhere."""
    return sum(bool(r[f"{leg}_ok"] if f"{leg}_ok" in r and take(r) else r.get("base_ok", False)) for r in rows)


def base_hits(rows: Sequence[dict[str, Any]]) -> int:
    return sum(bool(r.get("base_ok")) for r in rows)


def oracle_hits(rows: Sequence[dict[str, Any]], leg: str) -> int:
    """Questions right by the base answer or the leg's, whichever is right."""
    return sum(bool(r.get("base_ok") or r.get(f"{leg}_ok")) for r in rows)


GRID = [(t, m) for t in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.01) for m in (-1.0, 0.0, 0.1, 0.2)]


def held_out_rule(rows: Sequence[dict[str, Any]], leg: str) -> dict[str, Any]:
    """The grid's best rule on the even-numbered rows, and its gain over base on the odd-numbered ones."""
    train, test = rows[0::2], rows[1::2]
    never = base_hits(train)
    t, m = max(GRID, key=lambda g: (hits(train, rule(*g, leg), leg) - never, -g[0], g[1]))
    return {"t": t, "m": m, "train_gain": hits(train, rule(t, m, leg), leg) - never,
            "heldout_gain": hits(test, rule(t, m, leg), leg) - base_hits(test), "heldout_n": len(test)}


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    out: dict[str, Any] = {"n": n, "base_hits1": base_hits(rows) / n}
    for leg in LEGS:
        out[f"{leg}_fired"] = sum(f"{leg}_ok" in r for r in rows)
        out[f"{leg}_hits1"] = hits(rows, lambda r: True, leg) / n
        out[f"{leg}_oracle"] = oracle_hits(rows, leg) / n
        chosen = held_out_rule(rows, leg)
        out[f"{leg}_rule"] = f"t={chosen['t']}, m={chosen['m']}"
        out[f"{leg}_rule_heldout_gain"] = chosen["heldout_gain"]
        out[f"{leg}_rule_train_gain"] = chosen["train_gain"]
        out["heldout_n"] = chosen["heldout_n"]
    return out


def by_type(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    kinds = sorted({r["type"] for r in rows})
    return {k: {"n": len(g), "base": base_hits(g), **{leg: hits(g, lambda r: True, leg) for leg in LEGS},
                **{f"{leg}_oracle": oracle_hits(g, leg) for leg in LEGS}}
            for k in kinds for g in [[r for r in rows if r["type"] == k]]}


def markdown(result: dict[str, Any]) -> str:
    s, kinds = result["summary"], result["by_type"]
    lines = [f"# Composition in two legs (CWQ dev, {s['n']} questions that describe an entity)", "",
             "| answer | strict Hits@1 | oracle with base | two-leg answers | rule held out: gain on "
             f"{s['heldout_n']} |", "|---|---|---|---|---|",
             f"| base (`sgr`) | {s['base_hits1']:.3f} | | | |"]
    for leg in LEGS:
        lines.append(f"| {leg} always | {s[f'{leg}_hits1']:.3f} | {s[f'{leg}_oracle']:.3f} | {s[f'{leg}_fired']} | "
                     f"{s[f'{leg}_rule_heldout_gain']:+d} ({s[f'{leg}_rule']}; {s[f'{leg}_rule_train_gain']:+d} "
                     "where chosen) |")
    lines += ["", "| kind | n | base | continue | its oracle | decompose | its oracle |",
              "|---|---|---|---|---|---|---|"]
    lines += [f"| {k} | {v['n']} | {v['base']} | {v['continue']} | {v['continue_oracle']} | {v['decompose']} | "
              f"{v['decompose_oracle']} |" for k, v in kinds.items()]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=shared_data_dir() / "cwq" / "cwq_dev.jsonl")
    ap.add_argument("--limit", type=int, default=0, help="ask only the first N described questions (seed 7 order)")
    ap.add_argument("--out", type=Path, default=RESULTS / "composition_legs.json")
    args = ap.parse_args(argv)
    records = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = [r for r in records if described_nouns(r["question"])]
    random.Random(7).shuffle(records)
    records = records[:args.limit or None]
    rows = []
    with GraphStore.from_settings() as store:
        answerer = create_method("sgr", MethodContext(store=store))
        for i, rec in enumerate(records, 1):
            rows.append(legs(answerer, rec))
            if i % 25 == 0:
                print(f"{i}/{len(records)}", file=sys.stderr, flush=True)
    result = {"summary": summarise(rows), "by_type": by_type(rows),
              "config": {"data": str(args.data), "method": "sgr", "weights": served_weights(), "order": "seed 7",
                         "grid": GRID, **finished_config()},
              "rows": rows}
    write_report(args.out, result, markdown)


if __name__ == "__main__":
    main()
