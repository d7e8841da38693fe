"""SGR benchmark: the full method and its ablations on MetaQA and the WebQSP slice, through `sgr eval`.

    .venv/bin/python bench/sgr.py --metaqa-uri bolt://… --webqsp-uri bolt://… \
        [--methods sgr,sgr-base,sgr-compiled,sgr-no-schema,cypher-only,llm-only] \
        [--datasets metaqa-1hop,metaqa-2hop,metaqa-3hop,webqsp,webqsp-all,cwq-dev,cwq-dev-all] \
        [--sample 100 --webqsp-sample 150 --cwq-sample 500 --seed 0]
    .venv/bin/python bench/sgr.py --linking-only --webqsp-uri bolt://…

Each (dataset, method) pair is one `sgr eval` run folder (:func:`sgr.evaluation.runner.run_eval`, resumable) under
``--runs-dir``; the graphs are loaded as ``bench/kgqa.py`` loads them (one Neo4j per graph: the MetaQA KB and the
WebQSP slice are different graphs; ``NEO4J_URI`` serves both when the per-graph URIs are not given, reloading in
between). ``webqsp-all`` runs every WebQSP test question (1,628, no sample) under its own label. The LLM is the configured one (``SGR_LLM_BASE_URL``/``SGR_LLM_MODEL`` or ``sgr llm serve``) with its call
cache on, so reruns are free and methods that send the same prompt (``sgr``, ``sgr-direct``, ``cypher-only`` share
the schema and NL→Cypher calls) pay once. ``--hops-per-dataset`` gives MetaQA's k-hop questions ``hops=k``
(``--hops`` of ``sgr ask``; the expansion depth is a method setting, the scored paths still pick the length).
``sgr`` is full SGR as a user gets it: the served tuned weights — the path generator that ships with sgr
(``models/schema-lm``, what ``sgr llm serve`` serves by default) or a model of ``sgr llm tune`` (``--model tuned``) —
asked with the schema prompt they were trained on, and the default relation retriever (the shipped relation encoder
unless a model was trained for the graph); ``sgr-base`` the same method with the packaged base model
(``sgr llm serve --model base``); each runs only when the configured model is its own (run them in two invocations with the same ``--out``: the results file
accumulates, at one commit only — one file holds one run; a file of another commit needs ``--fresh`` or another
``--out``, and each invocation's provenance is kept). ``config.llm`` records which weights answered. A label ending in
``+rcr`` (``sgr-base+rcr``, ``sgr-compiled+rcr``, ``sgr+rcr``) is its method with RCR's trained relation model as the
relation retriever (``--relation-model FILE``, e.g. ``sgr relations train --method encoder`` on WebQSP: it ranks
the candidate relations of S_q, breaks linking ties and pre-filters the graph grammar). ``sgr+scr`` is ``sgr`` whose
voting paths are SCR's beam paths (``path_retriever=scr``, ``--scr-model FILE``: the stepwise ``best.pt`` of
``bench/scr.py``, trained on MetaQA dev); MetaQA only — SCR's WebQSP model trains on part of the slice's test
questions.

``cwq-dev`` is a fixed sample (``--cwq-sample``, seed 0) of Complex WebQuestions' dev split and ``cwq-dev-all`` all
1,180 of it, asked against the WebQSP store (which holds the CWQ dev graph beside the slice's); their summary adds
``<ds>/<method>/<type>/hits1_strict`` for CWQ's four kinds (composition, conjunction, comparative, superlative).

It also measures **entity linking** on WebQSP and CWQ dev (:func:`sgr.evaluation.linking.linking_accuracy`): every
question linked from its text alone (no dataset topics) against the gold topic entities: ``linking/<dataset>/accuracy``
= share whose first linked entity is a gold topic, ``linking/<dataset>/all_topics_found`` = share with every gold
topic among the linked ones.

Output: ``bench/results/sgr.json`` — ``summary`` keys ``<dataset>/<method>/<metric>`` (``hits1_strict``, ``hit``,
``f1``, ``p50_ms``, ``llm_calls_median``, ``prompt_tokens_median``, ``route_llm_share`` = share of answered questions
whose answers came from the model's own route (its Cypher, or a relation path it proposed under the graph grammar,
compiled, validated or voted; ``extra.route_source`` of each prediction), ``route_plan_share`` (… from a retrieved
plan the model did not propose), ``collaborative_share``), ``<dataset>/ceiling``,
``webqsp/<method>/constraint_hits1_strict`` (strict Hits@1 on the questions whose schema carries a constraint,
``constraint_questions`` of them), ``linking/<dataset>/*``;
``details`` with each run's metrics and the route shares; ``paired`` (``--paired LABEL``): an unfinished run scored as
it stands, every finished method on the same questions (keys ``<dataset>/paired_<label>/<method>/<metric>``, and
``<dataset>/paired_<label>/questions``); ``provenance`` (``bench/record.py``); ``bench/results/sgr.md`` as tables.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # before bench/ (this file's folder), so `sgr` is the package, not this script

import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_kgqa", ROOT / "bench" / "kgqa.py")
kgqa = importlib.util.module_from_spec(_spec)  # graph loading and summary keys shared with the KGQA benchmark
_spec.loader.exec_module(kgqa)

from bench.record import finished_config, previous_result, served_weights, write_report  # noqa: E402
from sgr.core.config import sgr_home  # noqa: E402
from sgr.methods.registry import method_options  # noqa: E402
from sgr.evaluation.predictions import read_predictions  # noqa: E402
from sgr.evaluation.runner import RunConfig, run_eval  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402

DATASETS = ("metaqa-1hop", "metaqa-2hop", "metaqa-3hop", "webqsp", "webqsp-all", "cwq-dev", "cwq-dev-all")
#: bench dataset labels run on another dataset: ``webqsp-all`` is every WebQSP test question (no sample); ``cwq-dev``
#: a fixed sample of CWQ's dev split (``--cwq-sample``), ``cwq-dev-all`` all of it — asked against the WebQSP store,
#: which holds the CWQ dev graph beside the slice's (:func:`kgqa.graph_files`)
DATASET_OF = {"webqsp-all": "webqsp", "cwq-dev": "cwq", "cwq-dev-all": "cwq"}
GRAPH_OF = {**kgqa.GRAPH_OF, "webqsp-all": "webqsp", "cwq-dev": "webqsp", "cwq-dev-all": "webqsp"}
METHODS = ("sgr", "sgr-base", "sgr-compiled", "sgr-no-schema", "cypher-only", "llm-only")
#: bench labels run as another registered method: ``sgr-base`` is ``sgr`` with the packaged base model; a label
#: ending in ``+rcr`` is its method with RCR's trained relation model (``--relation-model``) as relation retriever
RUN_AS = {"sgr-base": "sgr", "sgr+rcr": "sgr", "sgr-base+rcr": "sgr", "sgr-compiled+rcr": "sgr-compiled",
          "sgr+scr": "sgr"}
#: the served weights a label needs (``sgr llm serve --model tuned`` names its model ``…-tuned-<hash>``); a label
#: whose weights are not the configured model's is skipped with a message, so one run never mixes them
NEEDS_MODEL = {"sgr": "tuned", "sgr-base": "base", "sgr+rcr": "tuned", "sgr-base+rcr": "base", "sgr+scr": "tuned"}
#: labels whose trained part saw the graph's test questions: SCR's WebQSP model trains on 80 % of the slice, which
#: is all test questions, so ``sgr+scr`` runs on MetaQA only (its SCR trains on MetaQA dev)
NOT_ON = {"sgr+scr": ("webqsp", "webqsp-all")}
RESULTS = ROOT / "bench" / "results"


def served_kind() -> str | None:
    """``tuned`` or ``base`` for the configured model's name, None when no model is reachable."""
    from sgr.core.errors import LLMError
    from sgr.llm.client import shared_llm
    from sgr.llm.server import is_tuned

    try:
        return "tuned" if is_tuned(shared_llm().name) else "base"
    except LLMError:
        return None


def label_options(method: str, relation_model: Path | None = None, scr_model: Path | None = None) -> dict[str, str]:
    """Options a label adds, explicit here so that each run folder records them: for the tuned weights, what
    ``sgr`` changes by itself for them (:func:`sgr.methods.sgr.config.tuned_overrides`); for a ``+rcr`` label,
    ``relation_retriever`` = the model file of ``--relation-model``; for ``+scr``, SCR's beam paths as the voting
    paths (``path_retriever=scr``) from the checkpoint of ``--scr-model``."""
    from sgr.llm.client import shared_llm
    from sgr.methods.sgr.config import SGRConfig, tuned_overrides

    opts: dict[str, str] = {}
    if NEEDS_MODEL.get(method) == "tuned":
        opts |= {k: str(v).lower() for k, v in tuned_overrides(SGRConfig(), {}, shared_llm().name).items()}
    if method.endswith("+rcr"):
        if relation_model is None or not relation_model.is_file():
            raise SystemExit(f"{method} needs --relation-model FILE (a model of `sgr relations train`), "
                             f"got {relation_model}")
        opts["relation_retriever"] = str(relation_model.resolve())
    if method.endswith("+scr"):
        if scr_model is None or not scr_model.is_file():
            raise SystemExit(f"{method} needs --scr-model FILE (a best.pt of `sgr scr train` or bench/scr.py), "
                             f"got {scr_model}")
        opts |= {"path_retriever": "scr", "scr_checkpoint": str(scr_model.resolve())}
    return opts


def plan_note(run: dict[str, Any]) -> str:
    """`` (plan 0.12)`` when retrieved plans carried some answers of a run, else nothing."""
    share = run.get("routes", {}).get("route_plan_share")
    return f" (plan {share:.2f})" if share else ""


def route_shares(run_dir: Path) -> dict[str, Any]:
    """Routes, LLM cost and cache hits of a run, from its predictions.jsonl."""
    preds = read_predictions(run_dir / "predictions.jsonl")
    routes = Counter((p.get("route") or "none") for p in preds.values())
    calls = [p.get("usage", {}).get("llm_calls", 0) for p in preds.values()]
    toks = [p.get("usage", {}).get("prompt_tokens", 0) for p in preds.values()]
    n = max(1, len(preds))
    answered = [p for p in preds.values() if p.get("answers")]
    sources = Counter((p.get("extra") or {}).get("route_source") or "none" for p in answered)
    constrained = [p for p in preds.values() if (p.get("extra") or {}).get("constraints") and p.get("scores")]
    rounds = [len((p.get("extra") or {}).get("rounds") or []) for p in preds.values()]
    return {"routes": {k: round(v / n, 4) for k, v in routes.items()},
            "route_sources": {k: round(v / max(1, len(answered)), 4) for k, v in sources.items()},
            # the share of answered questions whose answers came from the model's own route (its paths or Cypher)
            "route_llm_share": round(sources.get("model", 0) / max(1, len(answered)), 4),
            # … and from a retrieved plan (the nearest training question's path) that the model did not propose
            "route_plan_share": round(sources.get("plan", 0) / max(1, len(answered)), 4),
            "collaborative_share": round(routes.get("collaborative", 0) / n, 4),
            "constraint_questions": len(constrained),
            "constraint_hits1_strict": round(statistics.fmean(p["scores"]["hits1_strict"] for p in constrained), 4)
            if constrained else None,
            "llm_calls_median": statistics.median(calls) if calls else 0,
            "rounds_max": max(rounds, default=0),
            "llm_calls_mean": round(statistics.fmean(calls), 3) if calls else 0.0,
            "llm_calls_max": max(calls, default=0),
            "prompt_tokens_p90": sorted(toks)[int(0.9 * (len(toks) - 1))] if toks else 0}


def constraint_hits(ds: str, runs: dict[str, Any], summary: dict[str, float], previous: dict[str, float]) -> None:
    """``<ds>/<method>/constraint_hits1_strict``: strict Hits@1 of each method on one question set, the questions
    whose schema carries a constraint in any run of the dataset (their number is ``<ds>/constraint_questions``).
    When a recorded run's folder is not on this machine, the figures of ``previous`` (the results file's summary)
    are kept as they were."""
    if any(not (Path(run["run_dir"]) / "predictions.jsonl").is_file() for run in runs.values()):
        summary.update({k: v for k, v in previous.items() if k.startswith(f"{ds}/")
                        and (k == f"{ds}/constraint_questions" or k.endswith("/constraint_hits1_strict"))})
        return
    preds = {m: read_predictions(Path(run["run_dir"]) / "predictions.jsonl") for m, run in runs.items()}
    ids = {qid for ps in preds.values() for qid, p in ps.items() if (p.get("extra") or {}).get("constraints")}
    if not ids:
        return
    summary[f"{ds}/constraint_questions"] = len(ids)
    for m, ps in preds.items():
        got = [ps[q]["scores"]["hits1_strict"] for q in ids if q in ps and ps[q].get("scores")]
        if got:
            summary[f"{ds}/{m}/constraint_hits1_strict"] = round(statistics.fmean(got), 4)


def paired(label: str, run_dir: Path, others: dict[str, Any]) -> dict[str, Any]:
    """An unfinished run of ``label`` scored as it stands, with every finished method (``others``) on the same
    questions (the scored ones ``label`` has answered so far): strict Hits@1, Hit, F1, the model's route, p50."""
    mine = {q: p for q, p in read_predictions(run_dir / "predictions.jsonl").items() if p.get("scores")}
    runs = {label: mine, **{m: read_predictions(Path(r["run_dir"]) / "predictions.jsonl") for m, r in others.items()}}
    ids = [q for q in mine if all(q in ps and ps[q].get("scores") for ps in runs.values())]
    out: dict[str, Any] = {"questions": len(ids), "run_dir": str(run_dir), "methods": {}}
    for m, ps in runs.items():
        got = [ps[q] for q in ids]
        answered = [p for p in got if p.get("answers")]
        secs = [p.get("usage", {}).get("total_seconds") for p in got if p.get("usage", {}).get("total_seconds")]
        out["methods"][m] = {
            **{k: round(statistics.fmean(p["scores"][k] for p in got), 4) if got else None
               for k in ("hits1_strict", "hit", "f1")},
            "route_llm_share": round(sum((p.get("extra") or {}).get("route_source") == "model" for p in answered)
                                     / max(1, len(answered)), 4),
            "p50_ms": round(1000 * statistics.median(secs), 1) if secs else None,
            "llm_calls_median": statistics.median(p.get("usage", {}).get("llm_calls", 0) for p in got) if got else 0}
    return out


def linking_accuracy(store: GraphStore, dataset: str) -> dict[str, Any]:
    """Entity linking from the question text alone against the gold topic entities of every question of
    ``dataset`` (:func:`sgr.evaluation.linking.linking_accuracy`, relation evidence from SGR's default retriever)."""
    from sgr.datasets import load_dataset
    from sgr.evaluation.linking import linking_accuracy as measure
    from sgr.retrieval.relations import sgr_retriever

    t0 = time.perf_counter()
    res = measure(store, load_dataset(dataset).questions, sgr_retriever(store, None) or sgr_retriever(store, "cosine"),
                  max_misses=25)
    return res.summary() | {"seconds": round(time.perf_counter() - t0, 1), "examples_missed": res.misses}


def markdown(result: dict[str, Any]) -> str:
    s, details, cfg = result["summary"], result["details"], result["config"]
    lines = ["# SGR benchmark (`bench/sgr.py`)", "",
             "SGR (Zhang et al., *Stepwise Reasoning Enhancement for LLMs via External Subgraph Generation*) with the "
             f"local model `{cfg.get('llm', '?')}`. Hits@1 (strict) = the top answer is gold; Hit (lenient) = some gold "
             "answer occurs in the output; F1 over answer sets. Ceiling = share of questions with a gold answer within "
             "k undirected hops of a topic entity (k = hop count on MetaQA, 2 on WebQSP). `% ceiling` = Hits@1 / "
             "ceiling.", ""]
    for ds in DATASETS:
        if ds not in details:
            continue
        ceil = s.get(f"{ds}/ceiling")
        lines += [f"## {ds}" + (f" — ceiling {ceil:.3f}" if ceil is not None else ""), "",
                  "| method | questions | Hits@1 (strict) | % ceiling | Hit (lenient) | F1 | p50 ms | LLM calls (median) "
                  "| prompt tokens (median) | routes | model's route | constraint Q: n, Hits@1 | errors |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for method, run in details[ds].items():
            m = run["metrics"]
            ov, c = m["overall"], m["cost"]
            sel = m["dataset"].get("selection") or {}
            n = f"{ov['n']}" + (f" (sample {sel['sample']}, seed {sel['seed']})" if "sample" in sel else "")
            pct = f"{100 * ov['hits1_strict'] / ceil:.0f}%" if ceil else "-"
            routes = ", ".join(f"{k} {v:.0%}" for k, v in sorted(run.get("routes", {}).get("routes", {}).items()))
            lines.append(f"| {method} | {n} | {ov['hits1_strict']:.3f} | {pct} | {ov['hit']:.3f} | {ov['f1']:.3f} | "
                         f"{c['latency_ms_p50']:.0f} | {c['llm_calls_median']:.0f} | {c['prompt_tokens_median']:.0f} | "
                         f"{routes} | {run.get('routes', {}).get('route_llm_share', '-')}{plan_note(run)} | "
                         f"{run.get('routes', {}).get('constraint_questions', '-')}, "
                         f"{run.get('routes', {}).get('constraint_hits1_strict', '-')} | {m['n_errors']} |")
        lines.append("")
    for ds, labels in result.get("paired", {}).items():
        for label, pr in labels.items():
            lines += [f"## {ds}: `{label}` unfinished — every method on the {pr['questions']} questions it has answered",
                      "", "| method | Hits@1 (strict) | Hit (lenient) | F1 | model's route | p50 ms | LLM calls (median) |",
                      "|---|---|---|---|---|---|---|"]
            for m, f in pr["methods"].items():
                lines.append(f"| {m} | {f['hits1_strict']:.3f} | {f['hit']:.3f} | {f['f1']:.3f} | "
                             f"{f['route_llm_share']:.2f} | {f['p50_ms'] if f['p50_ms'] is not None else '-'} | "
                             f"{f['llm_calls_median']:.0f} |")
            lines.append("")
    for ds, link in (result.get("linking") or {}).items():
        if link and "all_topics_found" in link:
            lines += [f"## Entity linking on {ds}", "",
                      f"From the question text alone (no dataset topics), over {link['questions']} questions: the "
                      f"first linked entity is a gold topic entity **{link['accuracy']:.3f}**; every gold topic among "
                      f"the linked {link['all_topics_found']:.3f} ({link['seconds']} s).", ""]
    lines += ["## Setup", "",
              f"- run {cfg['finished_at']} on {cfg['machine']}; samples: "
              + (f"MetaQA {cfg['sample']} per hop, " if any(d.startswith("metaqa") for d in details) else "")
              + f"WebQSP {cfg['webqsp_sample']} (seed {cfg['seed']}); options {cfg['options']}; `sgr-base` = `sgr` "
              "with the packaged base model, `sgr` = as a user gets it (the shipped path generator or a model of `sgr llm tune`, "
              "with its schema prompt; the default relation retriever)",
              "- graphs: " + "; ".join(f"{g['graph']} (graph version {g['graph_version']})" for g in cfg.get("graphs", [])),
              "- latency = wall time of one `answer()` (2 shared CPU cores; the LLM server shares them)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--sample", type=int, default=100, help="MetaQA questions per hop (fixed-seed sample)")
    ap.add_argument("--webqsp-sample", type=int, default=150, help="WebQSP questions (fixed-seed sample)")
    ap.add_argument("--cwq-sample", type=int, default=500, help="CWQ dev questions (fixed-seed sample)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--metaqa-uri", default=None, help="Neo4j holding the MetaQA KB (default NEO4J_URI)")
    ap.add_argument("--webqsp-uri", default=None, help="Neo4j holding the WebQSP slice (default NEO4J_URI)")
    ap.add_argument("--hops-per-dataset", action="store_true", help="MetaQA k-hop questions get hops=k")
    ap.add_argument("--runs-dir", type=Path, default=None, help="run folders (default $SGR_HOME/bench-runs/sgr)")
    ap.add_argument("--out", type=Path, default=RESULTS / "sgr.json")
    ap.add_argument("--option", action="append", default=[], help="method option KEY=VALUE (all methods)")
    ap.add_argument("--relation-model", type=Path, default=None,
                    help="RCR's trained relation model for the +rcr labels (sgr relations train --method encoder)")
    ap.add_argument("--scr-model", type=Path, default=None,
                    help="SCR's trained checkpoint for the +scr label (MetaQA: bench/scr.py's stepwise best.pt)")
    ap.add_argument("--paired", default="", help="labels whose runs are scored as they stand (unfinished), with "
                    "the finished methods on the same questions, instead of being run to the end")
    ap.add_argument("--linking-only", action="store_true", help="only measure entity linking (WebQSP, CWQ dev)")
    ap.add_argument("--no-linking", action="store_true", help="skip the linking measurement")
    ap.add_argument("--fresh", action="store_true", help="start the results file afresh (needed when it holds a run "
                    "of another commit: one file holds one run)")
    args = ap.parse_args(argv)

    methods = [m for m in args.methods.split(",") if m]
    unfinished = [m for m in args.paired.split(",") if m]
    datasets = [d for d in args.datasets.split(",") if d]
    if unknown := [d for d in datasets if d not in DATASETS]:
        ap.error(f"--datasets: unknown {', '.join(unknown)} (known: {', '.join(DATASETS)})")
    options = dict(o.split("=", 1) for o in args.option)
    runs_dir = args.runs_dir or sgr_home() / "bench-runs" / "sgr"
    previous = previous_result(args.out, fresh=args.fresh)
    details: dict[str, dict[str, Any]] = previous.get("details", {})
    pairs: dict[str, dict[str, Any]] = previous.get("paired", {})
    graphs: list[dict[str, Any]] = []
    linking = previous.get("linking") if isinstance(previous.get("linking"), dict) and \
        "accuracy" not in previous.get("linking", {}) else {}
    uris = {"metaqa": args.metaqa_uri or os.environ.get("NEO4J_URI"),
            "webqsp": args.webqsp_uri or os.environ.get("NEO4J_URI")}

    for graph in ("metaqa", "webqsp"):
        todo = [] if args.linking_only else [d for d in datasets if GRAPH_OF[d] == graph]
        want_linking = graph == "webqsp" and not args.no_linking and (
            any(d.startswith(("webqsp", "cwq")) for d in datasets) or args.linking_only)
        if not todo and not want_linking:
            continue
        uri = uris[graph]
        store = GraphStore(uri) if uri else GraphStore.from_settings()
        store.verify()
        graphs.append(kgqa.ensure_graph(store, graph))
        if want_linking:
            for name, dataset in (("webqsp", "webqsp"), ("cwq-dev", "cwq")):
                linking[name] = linking_accuracy(store, dataset)
                print(f"[sgr] linking on {name}: accuracy {linking[name]['accuracy']:.3f}", flush=True)
        for ds in todo:
            n = (None if ds.endswith("-all") else args.webqsp_sample if ds == "webqsp" else
                 args.cwq_sample if ds == "cwq-dev" else args.sample)
            sel = f"sample{n}-seed{args.seed}" if n else "all"
            for method in methods:
                if method in unfinished:
                    continue
                if method in NEEDS_MODEL and (kind := served_kind()) != NEEDS_MODEL[method]:
                    print(f"[sgr] {ds} {method}: skipped — it needs the {NEEDS_MODEL[method]} model served, the "
                          f"configured one is {kind or 'unreachable'}", flush=True)
                    continue
                if ds in NOT_ON.get(method, ()):
                    print(f"[sgr] {ds} {method}: skipped — its trained part saw this dataset's test questions",
                          flush=True)
                    continue
                run_as = RUN_AS.get(method, method)
                opts = {**label_options(method, args.relation_model, args.scr_model), **options}
                if args.hops_per_dataset and ds.startswith("metaqa") and "hops" in method_options(run_as):
                    opts.setdefault("hops", ds[len("metaqa-")])  # llm-only has no expansion depth
                cfg = RunConfig(dataset=DATASET_OF.get(ds, ds), method=run_as, out=runs_dir / ds / f"{method}__{sel}",
                                sample=n, seed=args.seed, hops=2 if graph == "webqsp" else None, options=opts)
                t0 = time.perf_counter()
                res = run_eval(cfg, store_factory=(lambda u=uri: GraphStore(u)) if uri else None,
                               progress=sys.stderr.isatty())
                if res.interrupted:
                    print("[sgr] interrupted; rerun to resume", flush=True)
                    sys.exit(130)
                ov = res.metrics["overall"]
                print(f"[sgr] {ds:12s} {method:14s} n={ov['n']:4d} Hits@1 {ov['hits1_strict']:.3f} Hit {ov['hit']:.3f} "
                      f"F1 {ov['f1']:.3f} ceiling {ov.get('ceiling', float('nan')):.3f} "
                      f"calls {res.metrics['cost']['llm_calls_median']} ({time.perf_counter() - t0:.0f} s)", flush=True)
                details.setdefault(ds, {})[method] = {"run_dir": str(res.run_dir), "metrics": res.metrics,
                                                      "routes": route_shares(res.run_dir), "options": opts}
            for label in unfinished:  # scored as they stand, with the finished methods on the same questions
                finished = {m: r for m, r in details.get(ds, {}).items() if m not in unfinished}
                pairs.setdefault(ds, {})[label] = paired(label, runs_dir / ds / f"{label}__{sel}", finished)
                details.get(ds, {}).pop(label, None)
                print(f"[sgr] {ds:12s} {label:14s} unfinished: scored on {pairs[ds][label]['questions']} questions "
                      f"with {', '.join(finished)}", flush=True)
        store.close()

    summary: dict[str, float] = {}
    for ds in DATASETS:
        for method, run in details.get(ds, {}).items():
            kgqa.summarize_run(ds, method, run["metrics"], summary)
            r = run.get("routes", {})
            if "route_llm_share" in r:
                summary[f"{ds}/{method}/route_llm_share"] = r["route_llm_share"]
                summary[f"{ds}/{method}/route_plan_share"] = r.get("route_plan_share", 0.0)
                summary[f"{ds}/{method}/collaborative_share"] = r["collaborative_share"]
        if ds.startswith("webqsp"):
            constraint_hits(ds, details.get(ds, {}), summary, previous.get("summary", {}))
        if ds.startswith("cwq"):  # CWQ's four kinds of question
            for method, run in details.get(ds, {}).items():
                for kind, figs in (run["metrics"].get("by_type") or {}).items():
                    summary[f"{ds}/{method}/{kind}/hits1_strict"] = round(float(figs["hits1_strict"]), 4)
    for ds, labels in pairs.items():
        for label, pr in labels.items():
            summary[f"{ds}/paired_{label}/questions"] = pr["questions"]
            for m, figs in pr["methods"].items():
                for k, v in figs.items():
                    if v is not None:
                        summary[f"{ds}/paired_{label}/{m}/{k}"] = v
    for name, link in (linking or {}).items():
        summary[f"linking/{name}/accuracy"] = link["accuracy"]
        summary[f"linking/{name}/all_topics_found"] = link["all_topics_found"]
    prev_graphs = {g["graph"]: g for g in previous.get("config", {}).get("graphs", [])}
    prev_graphs.update({g["graph"]: g for g in graphs})
    result = {
        "summary": summary,
        "config": {"methods": methods, "datasets": datasets, "sample": args.sample, "webqsp_sample": args.webqsp_sample,
                   "cwq_sample": args.cwq_sample,
                   "seed": args.seed, "options": options, "hops_per_dataset": args.hops_per_dataset,
                   "llm": served_weights(), "graphs": list(prev_graphs.values()),
                   **finished_config()},
        "linking": linking,
        "details": details,
        "paired": pairs,
    }
    write_report(args.out, result, markdown, continues=previous)
    return result


if __name__ == "__main__":
    main()
