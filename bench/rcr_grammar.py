"""RCR's path reply under its own grammar and under SGR's graph grammar, side by side (issue 41's RCR figure).

    python bench/rcr_grammar.py --webqsp-uri bolt://… --metaqa-uri bolt://… [--runs-dir DIR] [--out FILE]

``rcr`` with the weights ``sgr llm serve`` serves (the shipped path generator by default), on the samples of
``bench/models.py rcr`` (WebQSP test and MetaQA 1-hop test, 200 each, seed 0; report only: the default was chosen on
dev questions, ``bench/experiments/models.md``), once per arm (:data:`ARMS`): ``relations`` (any path over the K_r
retrieved relations, RCR §4.2), ``graph-max`` (only the relation paths that exist from the linked topics, up to
``max_hops`` deep) and ``graph`` (the same, as deep as SGR goes for the question: the default with tuned weights).
The runs resume from ``--runs-dir``. Writes ``bench/results/rcr_grammar.json``: summary keys
``rcr/<dataset>/<arm>/hits1_strict``, ``…/f1``, ``…/questions``, and ``rcr/<dataset>/hits1_strict`` for the default.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.models import RCR_SAMPLE  # noqa: E402
from bench.record import write_result  # noqa: E402
from sgr.core.config import sgr_home  # noqa: E402
from sgr.evaluation.runner import RunConfig, run_eval  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402

#: arm → RCR options; ``graph`` is the default with tuned weights
ARMS = {"relations": {"path_grammar": "relations"}, "graph-max": {"path_grammar": "graph", "path_depth": "max"},
        "graph": {"path_grammar": "graph"}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--webqsp-uri", required=True, help="bolt URI of a store with the WebQSP slice")
    ap.add_argument("--metaqa-uri", required=True, help="bolt URI of a store with the MetaQA KB")
    ap.add_argument("--runs-dir", type=Path, default=None, help="run folders (default $SGR_HOME/bench/rcr-grammar)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "rcr_grammar.json")
    args = ap.parse_args()
    runs = args.runs_dir or sgr_home() / "bench" / "rcr-grammar"
    summary: dict[str, float] = {}
    details: dict[str, dict] = {}
    for ds, uri in (("webqsp", args.webqsp_uri), ("metaqa-1hop", args.metaqa_uri)):
        for arm, options in ARMS.items():
            res = run_eval(RunConfig(dataset=ds, method="rcr", sample=RCR_SAMPLE, seed=0, out=runs / f"{ds}-{arm}",
                                     hops=2 if ds == "webqsp" else None, ceiling=False, options=dict(options)),
                           store_factory=lambda u=uri: GraphStore(u), progress=sys.stderr.isatty())
            o = res.metrics["overall"]
            summary[f"rcr/{ds}/{arm}/hits1_strict"] = round(o["hits1_strict"], 4)
            summary[f"rcr/{ds}/{arm}/f1"] = round(o["f1"], 4)
            summary[f"rcr/{ds}/{arm}/questions"] = o["n"]
            details[f"{ds}/{arm}"] = {"overall": o, "cost": res.metrics.get("cost"), "run_dir": str(res.run_dir)}
        summary[f"rcr/{ds}/hits1_strict"] = summary[f"rcr/{ds}/graph/hits1_strict"]
    write_result(args.out, {"summary": summary, "runs": details})
    print(summary)


if __name__ == "__main__":
    main()
