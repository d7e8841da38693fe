"""KGQA benchmark: every method over the MetaQA test splits and the WebQSP slice, through `sgr eval`.

    NEO4J_URI=bolt://… .venv/bin/python bench/kgqa.py [--methods oracle-paths,neighbors]
        [--datasets metaqa-1hop,metaqa-2hop,metaqa-3hop,webqsp] [--sample N --seed S] [--workers N]

The MetaQA KB and the WebQSP slice are different graphs, so the script loads one into the Neo4j at
``NEO4J_URI`` (with ``loaders.writer``), evaluates every method on the datasets that use it, then
clears the database and loads the other. A graph already loaded by this script (same file, same
sha256, recorded as a ``(:Source)``) is not loaded again. Each (dataset, method) pair is one
``sgr eval`` run folder under ``--runs-dir``, so an interrupted benchmark resumes where it stopped.

Output: ``bench/results/kgqa.json`` — ``summary`` keys ``<dataset>/<method>/<metric>`` with metrics
``hits1_strict``, ``hit`` (lenient), ``f1`` (fractions in [0, 1]), ``p50_ms``, ``llm_calls_median``,
``prompt_tokens_median`` (billed), ``cached_prompt_tokens_median`` (answered from the call cache), plus ``<dataset>/ceiling`` (share of questions with a gold answer within
k undirected hops of a topic entity: k = the hop count on MetaQA, ``--webqsp-hops`` on WebQSP);
``details`` holds each run's full metrics, ``provenance`` the commit, date, command and machine (``bench/record.py``).
Results of methods not run this time are kept when the file was written at the same commit (one file holds one
run; each invocation's provenance is kept); a file of another commit needs ``--fresh`` (or another ``--out``).
``bench/results/kgqa.md`` is the
same as tables. Without ``--sample`` every test question is used (no-LLM methods finish in minutes);
LLM methods should pass a fixed-seed ``--sample`` (e.g. ``--sample 500 --seed 0``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import finished_config, previous_result, write_report  # noqa: E402
from sgr.core.config import sgr_home  # noqa: E402
from sgr.core.files import sha256_file  # noqa: E402
from sgr.datasets import NAMED_DATASETS, shared_data_dir  # noqa: E402
from sgr.evaluation.runner import RunConfig, run_eval  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402

DATASETS = ("metaqa-1hop", "metaqa-2hop", "metaqa-3hop", "webqsp")
GRAPH_OF = {"metaqa-1hop": "metaqa", "metaqa-2hop": "metaqa", "metaqa-3hop": "metaqa", "webqsp": "webqsp"}
SUMMARY_METRICS = ("hits1_strict", "hit", "f1")
RESULTS = ROOT / "bench" / "results"


def graph_files(graph: str) -> list[Path]:
    """The files of a graph: the MetaQA KB; the WebQSP slice with the CWQ dev graph beside it (CWQ dev questions are
    asked against the same store)."""
    data = shared_data_dir()
    if graph == "metaqa":
        return [data / "metaqa" / "kb.txt"]
    return [data / NAMED_DATASETS["webqsp"]["test"], data / NAMED_DATASETS["cwq"]["dev"]]


def ensure_graph(store: GraphStore, graph: str) -> dict[str, Any]:
    """Make the database hold exactly ``graph`` (:func:`graph_files`: ``metaqa``: kb.txt; ``webqsp``: the union of
    the WebQSP slice's and the CWQ dev split's graphs), as ``sgr load`` writes it (a database already holding exactly
    those files, as ``sgr load`` records them, is kept)."""
    from loaders.api import load_files

    paths = graph_files(graph)
    want = sorted((str(p.resolve()), sha256_file(p)) for p in paths)
    sources = sorted((r["path"], r["sha"]) for r in store.read("MATCH (s:Source) RETURN s.path AS path, "
                                                                "s.sha256 AS sha"))
    info = {"graph": graph, "paths": [str(p) for p in paths], "sha256": [s for _, s in want]}
    if [s for _, s in sources] == [s for _, s in want]:
        print(f"[kgqa] {graph}: already loaded ({', '.join(p.name for p in paths)})", flush=True)
        return info | {"loaded_now": False, "graph_version": store.graph_version()}
    print(f"[kgqa] {graph}: clearing the database and loading {', '.join(map(str, paths))} …", flush=True)
    t0 = time.perf_counter()
    store.clear()
    store.ensure_schema()
    report = load_files(store, paths, bulk=False)
    secs = time.perf_counter() - t0
    triples = report.triples
    print(f"[kgqa] {graph}: {triples} triples in {secs:.0f} s", flush=True)
    return info | {"loaded_now": True, "triples": triples, "load_seconds": secs, "graph_version": store.graph_version()}


def summarize_run(dataset: str, method: str, m: dict[str, Any], summary: dict[str, float]) -> None:
    ov, cost = m["overall"], m["cost"]
    for k in SUMMARY_METRICS:
        summary[f"{dataset}/{method}/{k}"] = round(float(ov[k]), 4)
    summary[f"{dataset}/{method}/p50_ms"] = round(float(cost["latency_ms_p50"]), 2)
    summary[f"{dataset}/{method}/llm_calls_median"] = float(cost["llm_calls_median"])
    summary[f"{dataset}/{method}/prompt_tokens_median"] = float(cost["prompt_tokens_median"])
    summary[f"{dataset}/{method}/cached_prompt_tokens_median"] = float(cost.get("cached_prompt_tokens_median", 0.0))
    if "ceiling" in ov:
        summary[f"{dataset}/ceiling"] = round(float(ov["ceiling"]), 4)


def markdown(result: dict[str, Any]) -> str:
    s, details = result["summary"], result["details"]
    lines = ["# KGQA benchmark (`bench/kgqa.py`)", "",
             "Hits@1 (strict) = the top-ranked answer is a gold answer; Hit (lenient) = some gold answer occurs "
             "anywhere in the output, the measure RoG-style papers call Hits@1. Ceiling = share of questions with a "
             "gold answer within k undirected hops of a topic entity in the loaded graph (k = hop count on MetaQA, "
             f"{result['config']['webqsp_hops']} on WebQSP). Scores are fractions of the questions scored.", ""]
    for ds in DATASETS:
        if ds not in details:
            continue
        ceil = s.get(f"{ds}/ceiling")
        extra = ""
        for run in details[ds].values():
            cvt = run["metrics"]["overall"].get("ceiling_cvt")
            if cvt is not None:
                extra = f"; with CVT hops free {cvt:.3f}"
                break
        lines += [f"## {ds}" + (f" — ceiling {ceil:.3f}{extra}" if ceil is not None else ""), "",
                  "| method | questions | Hits@1 (strict) | Hit (lenient) | F1 | exact set | p50 ms | p95 ms | q/s "
                  "| LLM calls (median) | prompt tokens billed / cached (median) | errors |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for method, run in details[ds].items():
            m = run["metrics"]
            ov, c = m["overall"], m["cost"]
            sel = m["dataset"].get("selection") or {}
            n = f"{ov['n']}" + (f" (sample {sel['sample']}, seed {sel['seed']})" if "sample" in sel else "")
            lines.append(f"| {method} | {n} | {ov['hits1_strict']:.3f} | {ov['hit']:.3f} | {ov['f1']:.3f} | "
                         f"{ov['exact_set']:.3f} | {c['latency_ms_p50']:.1f} | {c['latency_ms_p95']:.1f} | "
                         f"{c['questions_per_s']:.1f} | {c['llm_calls_median']:.0f} | {c['prompt_tokens_median']:.0f} / "
                         f"{c.get('cached_prompt_tokens_median', 0.0):.0f} | {m['n_errors']} |")
        lines.append("")
    cfg = result["config"]
    lines += ["## Setup", "",
              f"- run {cfg['finished_at']} on {cfg['machine']}; workers {cfg['workers']}; "
              f"sample {cfg['sample'] or 'all'} (seed {cfg['seed']})",
              "- graphs: " + "; ".join(f"{g['graph']} {g['path']} (graph version {g['graph_version']})"
                                       for g in cfg.get("graphs", [])),
              "- latency = wall time of one `answer()` call as the method's usage meter measured it (one Neo4j on the "
              "same 2-core machine, shared); billed tokens are those of real model calls, cached ones those of calls "
              "answered from the call cache (as first billed); q/s = questions answered / wall-clock seconds of the run's sessions."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--methods", default="oracle-paths,neighbors", help="comma-separated method names")
    ap.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated: " + ", ".join(DATASETS))
    ap.add_argument("--sample", type=int, default=None, help="questions per dataset (fixed-seed sample); default all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--webqsp-hops", type=int, default=2, help="k of the WebQSP reachability ceiling")
    ap.add_argument("--runs-dir", type=Path, default=None, help="run folders (default $SGR_HOME/bench-runs/kgqa)")
    ap.add_argument("--out", type=Path, default=RESULTS / "kgqa.json")
    ap.add_argument("--fresh", action="store_true", help="start the results file afresh (drops methods not run this "
                    "time; needed when it holds a run of another commit: one file holds one run)")
    ap.add_argument("--option", action="append", default=[], help="method option KEY=VALUE (all methods)")
    args = ap.parse_args(argv)

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    unknown = [d for d in datasets if d not in DATASETS]
    if unknown:
        ap.error(f"unknown datasets {unknown}; choose from {DATASETS}")
    options = dict(o.split("=", 1) for o in args.option)
    runs_dir = args.runs_dir or sgr_home() / "bench-runs" / "kgqa"

    previous = previous_result(args.out, fresh=args.fresh)
    details: dict[str, dict[str, Any]] = previous.get("details", {})
    graphs: list[dict[str, Any]] = []

    store = GraphStore.from_settings()
    store.verify()
    for graph in ("metaqa", "webqsp"):
        todo = [d for d in datasets if GRAPH_OF[d] == graph]
        if not todo:
            continue
        graphs.append(ensure_graph(store, graph))
        for ds in todo:
            for method in methods:
                sel = f"sample{args.sample}-seed{args.seed}" if args.sample else "all"
                cfg = RunConfig(dataset=ds, method=method, out=runs_dir / ds / f"{method}__{sel}",
                                sample=args.sample, seed=args.seed, workers=args.workers,
                                hops=args.webqsp_hops if graph == "webqsp" else None, options=options)
                t0 = time.perf_counter()
                res = run_eval(cfg, progress=sys.stderr.isatty())
                if res.interrupted:
                    print("[kgqa] interrupted; rerun to resume", flush=True)
                    sys.exit(130)
                ov = res.metrics["overall"]
                print(f"[kgqa] {ds:12s} {method:14s} n={ov['n']:6d} Hits@1 {ov['hits1_strict']:.3f} "
                      f"Hit {ov['hit']:.3f} F1 {ov['f1']:.3f} ceiling {ov.get('ceiling', float('nan')):.3f} "
                      f"p50 {res.metrics['cost']['latency_ms_p50']:.1f} ms ({time.perf_counter() - t0:.0f} s)",
                      flush=True)
                details.setdefault(ds, {})[method] = {"run_dir": str(res.run_dir), "metrics": res.metrics}
    store.close()

    summary: dict[str, float] = {}
    for ds in DATASETS:
        for method, run in details.get(ds, {}).items():
            summarize_run(ds, method, run["metrics"], summary)
    prev_graphs = {g["graph"]: g for g in previous.get("config", {}).get("graphs", [])}
    prev_graphs.update({g["graph"]: g for g in graphs})
    result = {
        "summary": summary,
        "config": {"methods": methods, "datasets": datasets, "sample": args.sample, "seed": args.seed,
                   "workers": args.workers, "webqsp_hops": args.webqsp_hops, "options": options,
                   "graphs": list(prev_graphs.values()),
                   **finished_config()},
        "details": details,
    }
    write_report(args.out, result, markdown, continues=previous)
    return result


if __name__ == "__main__":
    main()
