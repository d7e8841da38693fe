"""Why SGR misses: every strict Hits@1 miss of ``bench/sgr.py`` runs in one class, with examples.

    .venv/bin/python bench/sgr_misses.py --uri bolt://… RUN_DIR [RUN_DIR …] [--examples 8] \
        [--out bench/results/sgr_misses.json]

A RUN_DIR is one ``sgr eval`` run folder (``predictions.jsonl``), e.g. ``<runs-dir>/webqsp/sgr+rcr__sample500-seed0``;
its label in the output is ``<dataset folder>/<method folder>``. ``--uri`` is the Neo4j of the runs' graph (only
read: it counts the graph's date facts). Each question with a gold answer whose top answer is not gold is in one
class of :mod:`sgr.evaluation.misses` (the ``misses`` of each run's ``metrics.json``): no answer, ranked (``tied``
of them share the top answer's score), path end (a relation path the decision did not choose) or absent;
``tied_hits`` are the hits whose top answer shares its score with an answer that is not gold.

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
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import write_result  # noqa: E402
from sgr.core.lexicon import DATE_KEY, DATE_VALUE  # noqa: E402
from sgr.evaluation.misses import CLASSES, classify, example_text, summarize_misses  # noqa: E402
from sgr.evaluation.predictions import read_predictions  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.methods.sgr.constraints import query_constraints  # noqa: E402
from sgr.methods.sgr.schema import constraint_text, rule_constraints  # noqa: E402

MANY_GOLD = 50


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
    ms = summarize_misses(recs, n_examples)
    many = [r for r in recs if len(r["gold"]) > MANY_GOLD]
    f1_cost = sum(1.0 - float(r.get("scores", {}).get("f1", 0.0)) for r in many) / len(recs)
    summary = {"questions": ms.n, "misses": ms.misses, **{c: getattr(ms, c) for c in CLASSES}, "tied": ms.tied,
               "tied_hits": ms.tied_hits, "temporal": sum(temporal(r) for r in recs if classify(r) is not None),
               "many_gold": len(many), "many_gold_f1_cost": round(f1_cost, 4)}
    return summary, ms.examples


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
            out += [f"- {cls}: {example_text(e)}" + (" (tied)" if e.get("tied") else "") for e in items[:per_class]]
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
    write_result(args.out, result)
    md = (f"# Why SGR misses (`bench/sgr_misses.py`)\n\n{table(summary, labels)}\n\n"
          f"{args.graph}: {summary[f'{args.graph}/date_facts']} date facts.\n\n{example_lines(examples)}")
    args.out.with_suffix(".md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
