"""Which CWQ dev questions their own evidence determines, and how a run answers each kind.

    .venv/bin/python bench/cwq_determined.py RUN_DIR [RUN_DIR …] [--out bench/results/cwq_determined.json]

The CWQ dev graph holds each question's published evidence triples (``graph`` of ``cwq_dev.jsonl``), and these often
lack what a question's other condition needs. Each dev question is in the first stratum that holds, read from its
own record only (names compared normalised; no run output is read):

* ``no_gold`` — no gold answer is named in its evidence (it may still be reached through the rest of the store);
* ``topic_missing`` — a topic entity of the dataset is named nowhere in its evidence (a conjunction's second
  entity, the start of a composition);
* ``literal`` — its SPARQL compares or orders by a literal (a date, a number, an id; :data:`cwq_misses.LITERAL`), and
  the graph holds no literal;
* ``determined`` — the rest: the evidence holds the answer, every topic entity and nothing the condition needs beyond
  its triples.

For each RUN_DIR (an ``sgr eval`` run folder of CWQ dev questions): strict Hits@1 per stratum and per stratum and CWQ
type. Output: ``summary`` keys ``dev/<stratum>/share`` (of all 1,180 dev questions), ``<label>/<stratum>/n``,
``<label>/<stratum>/hits1``, ``<label>/<stratum>/<type>/hits1``, ``<label>/hits1``; ``<label>`` is the run folder's
name under its dataset folder (``--label`` to name them).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cwq_misses import LITERAL, TYPES  # noqa: E402
from bench.record import write_result  # noqa: E402
from sgr.core.config import shared_data_dir  # noqa: E402
from sgr.core.text import normalize  # noqa: E402
from sgr.evaluation.predictions import read_predictions  # noqa: E402

STRATA = ("no_gold", "topic_missing", "literal", "determined")


def stratum(record: dict[str, Any]) -> str:
    """The first stratum of the module docstring that holds for one ``cwq_dev.jsonl`` record."""
    names = {normalize(x) for h, _, t in record["graph"] for x in (h, t)}
    if not any(normalize(a) in names for a in [*record["a_entity"], *record["answer"]]):
        return "no_gold"
    if not all(normalize(q) in names for q in record["q_entity"]):
        return "topic_missing"
    if LITERAL.search(record["sparql"].split("WHERE", 1)[-1]):
        return "literal"
    return "determined"


def strata(path: Path) -> dict[str, str]:
    """Question id → stratum, for every question of the dev file."""
    with path.open(encoding="utf-8") as f:
        return {(r := json.loads(line))["id"]: stratum(r) for line in f if line.strip()}


def run_figures(label: str, preds: dict[str, dict], kind: dict[str, str], summary: dict[str, float]) -> None:
    """Strict Hits@1 of one run per stratum, and per stratum and CWQ type, into ``summary``."""
    n: Counter = Counter()
    hits: Counter = Counter()
    for qid, p in preds.items():
        if p.get("scores") is None or qid not in kind:
            continue
        h = float(p["scores"]["hits1_strict"])
        for key in ("", f"/{kind[qid]}", f"/{kind[qid]}/{p.get('qtype')}"):
            n[key] += 1
            hits[key] += h
    summary[f"{label}/hits1"] = round(hits[""] / n[""], 4) if n[""] else 0.0
    for s in STRATA:
        summary[f"{label}/{s}/n"] = n[f"/{s}"]
        summary[f"{label}/{s}/hits1"] = round(hits[f"/{s}"] / n[f"/{s}"], 4) if n[f"/{s}"] else None
        for t in TYPES:
            if n[f"/{s}/{t}"]:
                summary[f"{label}/{s}/{t}/hits1"] = round(hits[f"/{s}/{t}"] / n[f"/{s}/{t}"], 4)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="sgr eval run folders of CWQ dev questions")
    ap.add_argument("--label", action="append", default=[], help="a name per run folder (default: its name)")
    ap.add_argument("--cwq", type=Path, default=None, help="the dev file (default: the shared cwq_dev.jsonl)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "cwq_determined.json")
    args = ap.parse_args(argv)
    kind = strata(args.cwq or shared_data_dir() / "cwq" / "cwq_dev.jsonl")
    total = Counter(kind.values())
    summary: dict[str, Any] = {f"dev/{s}/share": round(total[s] / len(kind), 4) for s in STRATA}
    summary["dev/questions"] = len(kind)
    labels = args.label + [r.name for r in args.runs[len(args.label):]]
    for label, run in zip(labels, args.runs):
        run_figures(label, read_predictions(run / "predictions.jsonl"), kind, summary)
    write_result(args.out, {"summary": summary, "runs": {lab: str(r) for lab, r in zip(labels, args.runs)}})
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
