"""Why SGR misses: every strict Hits@1 miss of ``bench/sgr.py`` runs in one class, with examples.

    .venv/bin/python bench/sgr_misses.py --uri bolt://… RUN_DIR [RUN_DIR …] [--examples 8] \
        [--out bench/results/sgr_misses.json]

A RUN_DIR is one ``sgr eval`` run folder (``predictions.jsonl``), e.g. ``<runs-dir>/webqsp/sgr+rcr__sample500-seed0``;
its label in the output is ``<dataset folder>/<method folder>``. ``--uri`` is the Neo4j of the runs' graph (only
read: it counts the graph's date facts). Each question with a gold answer whose top answer is not gold goes to the
first class that holds:

    no answer     the run answered nothing
    ranked        a gold answer is in the answer list, not first; ``tied`` of them share the top answer's score
                  (inside a tie the order is the name's)
    path end      a gold answer ends one of the run's recorded reasoning paths but is not among the answers: a
                  relation path the decision did not choose
    absent        no gold answer among the answers or at a path's end

``tied_hits`` counts the hits whose top answer shares its score with an answer that is not gold: the name put it
first, so ``tied`` and ``tied_hits`` together are the questions a tie decided.

Across the classes: ``temporal`` = misses whose C_q holds a time (a year, before/after a year) or an ordinal
(first/last/latest/now…; :func:`sgr.methods.sgr.constraints.query_constraints`). Those conditions read dates on the
walk (:mod:`cypher.conditions`); ``date_facts`` counts the graph's date facts (relationships and properties whose
key is a date key and whose value starts with a year), so a graph without any cannot act on them.
``many_gold_f1_cost`` = the F1 lost on questions with more than 50 gold answers, over all scored questions.

Output: ``summary`` keys ``<label>/<name>`` (``questions``, ``misses``, ``no_answer``, ``ranked``, ``tied``,
``tied_hits``, ``path_end``, ``absent``, ``temporal``, ``many_gold``, ``many_gold_f1_cost``) and
``<graph>/date_facts``; ``examples``: per label and class, the first ``--examples`` misses (question, gold, top
answers); a table on stdout and in ``bench/results/sgr_misses.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cypher.conditions import DATE_KEY, DATE_VALUE  # noqa: E402
from sgr.core.text import normalize, normalize_set  # noqa: E402
from sgr.evaluation.predictions import read_predictions  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.methods.sgr.constraints import query_constraints  # noqa: E402
from sgr.methods.sgr.schema import constraint_text, rule_constraints  # noqa: E402

CLASSES = ("no_answer", "ranked", "path_end", "absent")
MANY_GOLD = 50


def classify(rec: dict[str, Any]) -> tuple[str, bool] | None:
    """``(class, tied)`` of a miss (module docstring); None for a hit or a question without gold answers."""
    gold = normalize_set(rec.get("gold") or [])
    answers = rec.get("answers") or []
    if not gold or (answers and normalize(answers[0]["text"]) in gold):
        return None
    if not answers:
        return "no_answer", False
    rank = next((i for i, a in enumerate(answers) if normalize(a["text"]) in gold), None)
    if rank is not None:
        return "ranked", abs(answers[rank]["score"] - answers[0]["score"]) < 1e-9
    ends = {normalize(p["names"][-1] or p["nodes"][-1]) for p in rec.get("paths") or [] if p.get("nodes")}
    return ("path_end" if ends & gold else "absent"), False


def tied_hit(rec: dict[str, Any]) -> bool:
    """A hit whose top answer shares its score with an answer that is not gold (the name put it first)."""
    gold = normalize_set(rec.get("gold") or [])
    answers = rec.get("answers") or []
    return bool(gold and answers and normalize(answers[0]["text"]) in gold) and any(
        abs(a["score"] - answers[0]["score"]) < 1e-9 and normalize(a["text"]) not in gold for a in answers[1:])


def temporal(rec: dict[str, Any]) -> bool:
    """C_q of the question holds a year or an ordinal (the conditions that read dates)."""
    text = rec["question"]
    qc = query_constraints(rule_constraints(constraint_text(text, rec.get("topic_entities") or [])), text)
    return qc.year is not None or qc.ordinal is not None


def date_facts(store: GraphStore) -> int:
    """The graph's date facts as the conditions read them (:func:`cypher.conditions.dates`): relationships and node
    properties whose key is a date key and whose value (the neighbour's name) starts with a year."""
    p = {"k": DATE_KEY, "v": DATE_VALUE}
    rels = store.read("MATCH ()-[r]->(m) WHERE type(r) =~ $k AND m.name =~ $v RETURN count(r) AS n", p)
    props = store.read("MATCH (n) UNWIND keys(n) AS k WITH n, k WHERE k =~ $k AND toString(n[k]) =~ $v "
                       "RETURN count(*) AS n", p)
    return int(rels[0]["n"]) + int(props[0]["n"])


def analyse(run_dir: Path, n_examples: int) -> tuple[dict[str, float], dict[str, list[dict[str, Any]]]]:
    """The summary figures and the examples of one run folder."""
    recs = [r for r in read_predictions(run_dir / "predictions.jsonl").values() if r.get("gold")]
    if not recs:
        raise SystemExit(f"{run_dir}: no scored predictions (predictions.jsonl missing or empty)")
    counts: Counter[str] = Counter()
    examples: dict[str, list[dict[str, Any]]] = {c: [] for c in CLASSES}
    f1_cost = 0.0
    for rec in recs:
        if len(rec["gold"]) > MANY_GOLD:
            counts["many_gold"] += 1
            f1_cost += 1.0 - float(rec.get("scores", {}).get("f1", 0.0))
        found = classify(rec)
        if found is None:
            counts["tied_hits"] += tied_hit(rec)
            continue
        cls, tied = found
        counts[cls] += 1
        counts["tied"] += tied
        counts["temporal"] += temporal(rec)
        if len(examples[cls]) < n_examples:
            examples[cls].append({"id": rec["id"], "question": rec["question"], "gold": rec["gold"][:3],
                                  "top": [a["text"] for a in (rec.get("answers") or [])[:3]],
                                  **({"tied": True} if tied else {})})
    summary = {"questions": len(recs), "misses": sum(counts[c] for c in CLASSES), **{c: counts[c] for c in CLASSES},
               **{k: counts[k] for k in ("tied", "tied_hits", "temporal", "many_gold")},
               "many_gold_f1_cost": round(f1_cost / len(recs), 4)}
    return summary, examples


def table(summary: dict[str, float], labels: list[str]) -> str:
    cols = ("questions", "misses", "no_answer", "ranked", "tied", "tied_hits", "path_end", "absent", "temporal",
            "many_gold", "many_gold_f1_cost")
    lines = ["| run | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    lines += [f"| {lab} | " + " | ".join(str(summary[f"{lab}/{c}"]) for c in cols) + " |" for lab in labels]
    return "\n".join(lines)


def example_lines(examples: dict[str, Any], per_class: int = 3) -> str:
    """The first ``per_class`` examples of each run and class as markdown bullets."""
    out = []
    for label, by_class in examples.items():
        out.append(f"## {label}\n")
        for cls, items in by_class.items():
            out += [f"- {cls}: {e['question']} → {', '.join(e['top']) or '(none)'} (gold: {', '.join(e['gold'])})"
                    + (" (tied)" if e.get("tied") else "") for e in items[:per_class]]
        out.append("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="sgr eval run folders (each with predictions.jsonl)")
    ap.add_argument("--uri", required=True, help="the Neo4j of the runs' graph (read only)")
    ap.add_argument("--graph", default="webqsp", help="the graph's name in the summary key <graph>/date_facts")
    ap.add_argument("--examples", type=int, default=8, help="examples kept per run and class")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "sgr_misses.json")
    args = ap.parse_args()
    summary: dict[str, float] = {}
    examples: dict[str, Any] = {}
    labels = []
    for run in args.runs:
        label = f"{run.resolve().parent.name}/{run.resolve().name}"
        figures, ex = analyse(run, args.examples)
        summary |= {f"{label}/{k}": v for k, v in figures.items()}
        examples[label] = ex
        labels.append(label)
    store = GraphStore(args.uri)
    try:
        summary[f"{args.graph}/date_facts"] = date_facts(store)
    finally:
        store.close()
    result = {"summary": summary, "examples": examples,
              "config": {"runs": [str(r) for r in args.runs], "examples": args.examples, "many_gold": MANY_GOLD,
                         "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    md = (f"# Why SGR misses (`bench/sgr_misses.py`)\n\n{table(summary, labels)}\n\n"
          f"{args.graph}: {summary[f'{args.graph}/date_facts']} date facts.\n\n{example_lines(examples)}")
    args.out.with_suffix(".md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
