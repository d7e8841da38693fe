"""RCR benchmark: relation retrieval (RRA@k) and question answering with rcr beside SGR and SCR.

    NEO4J_URI=bolt://… .venv/bin/python bench/rcr.py [--parts retrieval,kgqa]
        [--epochs 50] [--metaqa-train-per-hop 1000] [--metaqa-test-per-hop 1000]
        [--methods rcr,rcr-ks0,rcr-ks2,sgr,sgr-no-verify,sgr-verify-all,scr] [--webqsp-sample 40] [--metaqa-sample 20] [--seed 0]

**Part ``retrieval``** (no LLM; RCR §5.3.1, Table 5). Both graphs are loaded into one database, so the relation
vocabulary ranked is the union of the WebQSP slice's and the MetaQA KB's ``(:Relation)`` nodes. Two retrievers are
trained with :func:`sgr.retrieval.training.train_model` (10 % of the training questions held out for model selection by
validation RRA@50): on WebQSP train paths, and on a fixed-seed sample of MetaQA dev (``--metaqa-train-per-hop``
per hop). RRA@k for k ∈ {10, 50, 100, 200} is measured on the WebQSP slice (every question with ``ground_paths``)
and on a fixed-seed sample of MetaQA test per hop (``--metaqa-test-per-hop``), trained vs. plain cosine on the same
embeddings, plus the cross-dataset case (trained on WebQSP, tested on MetaQA).

**Part ``kgqa``** (the local LLM). ``rcr`` (K_s = 1), ``rcr-ks0``, ``rcr-ks2``, SGR with and without PRP-RM
verification (``sgr-no-verify`` = SGR with ``max_verify_calls = 0``, so δ and ρ are the fixed prior;
``sgr-verify-all`` = SGR asking PRP-RM for every candidate, ``lazy_verification = False``) and SCR run
through the evaluation harness (:func:`sgr.evaluation.runner.run_eval`, one resumable run folder per pair) on
fixed-seed samples, one graph in the database at a time (``bench/kgqa.py``'s ``ensure_graph``). rcr uses the
retriever trained in part 1 for that dataset. Path recall (§5.1: a generated relation path equals a gold path) is
computed from the predictions' ``extra.relation_paths``.

Output: ``bench/results/rcr.json`` — ``summary`` keys ``webqsp/rra@K``, ``webqsp/rra@K_cosine``,
``webqsp/rra@K_encoder`` (read from ``rcr_encoder.json``, the fine-tuned encoder of ``bench/rcr_encoder.py``),
``metaqa-Nhop/rra@K``, ``metaqa-Nhop/rra@K_cosine``, ``metaqa-Nhop/rra@K_from_webqsp`` and the harness's
``<dataset>/<method>/<metric>`` keys (``hits1_strict``, ``hit``, ``f1``, ``p50_ms``, ``llm_calls_median``,
``prompt_tokens_median``) plus ``<dataset>/<rcr variant>/path_recall``; ``details`` hold sample sizes, seeds,
training histories and run folders; ``provenance`` the commit, date, command and machine (``bench/record.py``).
``bench/results/rcr.md`` is the same as tables. Parts not run keep their previous results when the file was written
at the same commit (one file holds one run; each invocation's provenance is kept); a file of another commit needs
``--fresh`` (or another ``--out``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import finished_config, previous_result, write_report  # noqa: E402
from sgr.core.config import sgr_home  # noqa: E402
from sgr.core.files import sha256_file  # noqa: E402
from sgr.datasets import load_dataset, shared_data_dir  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.retrieval.training import RelationTrainConfig  # noqa: E402

RESULTS = ROOT / "bench" / "results"
KS = (10, 50, 100, 200)
METAQA = ("metaqa-1hop", "metaqa-2hop", "metaqa-3hop")
KGQA_DATASETS = ("webqsp", *METAQA)
RCR_METHODS = ("rcr", "rcr-ks0", "rcr-ks2")
#: SGR with PRP-RM switched off (δ, ρ = the fixed prior) or consulted for every candidate (not only when it can
#: change the outcome), as options of the registered ``sgr`` method.
SGR_VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "sgr-no-verify": ("sgr", {"max_verify_calls": 0}),
    "sgr-verify-all": ("sgr", {"lazy_verification": False}),
}


def _kgqa_module():
    """bench/kgqa.py (graph loading and the harness summary), imported by path."""
    spec = importlib.util.spec_from_file_location("sgr_bench_kgqa", ROOT / "bench" / "kgqa.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ensure_combined(store: GraphStore) -> dict[str, Any]:
    """Make the database hold both graphs (the WebQSP slice and the MetaQA KB): the retrieval vocabulary."""
    from loaders.writer import GraphBatch, record_source, write_graph

    files = {"webqsp": shared_data_dir() / "webqsp" / "webqsp_mini.jsonl",
             "metaqa": shared_data_dir() / "metaqa" / "kb.txt"}
    want = {str(p): sha256_file(p) for p in files.values()}
    have = {r["path"]: r["sha"] for r in store.read("MATCH (s:Source) RETURN s.path AS path, s.sha256 AS sha")}
    if have == want:
        print("[rcr] both graphs already loaded", flush=True)
        return {"loaded_now": False, "graph_version": store.graph_version()}
    print("[rcr] clearing the database and loading the WebQSP slice and the MetaQA KB …", flush=True)
    t0 = time.perf_counter()
    store.clear()
    store.ensure_schema()
    for name, path in files.items():
        batch = GraphBatch()
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                if name == "metaqa":
                    parts = line.rstrip("\n").split("|")
                    if len(parts) == 3:
                        batch.add_triple(*parts)
                else:
                    for h, r, t in json.loads(line)["graph"]:
                        batch.add_triple(h, r, t)
        stats = write_graph(store, batch)
        record_source(store, str(path), want[str(path)], stats.triples)
    return {"loaded_now": True, "seconds": time.perf_counter() - t0, "graph_version": store.graph_version()}


# ---------------------------------------------------------------------------------------------
# part 1: retrieval
# ---------------------------------------------------------------------------------------------
def _train_or_reuse(store: GraphStore, dataset: str, path: Path, cfg, limit: int | None, retrain: bool
                    ) -> dict[str, Any]:
    from sgr.retrieval.training import read_model, train_model

    version = store.graph_version()
    if path.exists() and not retrain:
        _, meta = read_model(path)
        same = (meta.get("graph_version") == version and meta.get("config") == cfg.__dict__
                and meta.get("limit") == limit)
        if same:
            print(f"[rcr] reusing {path} (epoch {meta['best_epoch']}, val {meta['best_val']})", flush=True)
            return meta

    def show(log) -> None:  # noqa: ANN001
        rra = " ".join(f"@{k} {v:.3f}" for k, v in log.val_rra.items())
        print(f"[rcr] {dataset} epoch {log.epoch:3d} loss {log.loss:.4f} val {rra} ({log.seconds:.0f} s)", flush=True)

    trained = train_model(store, dataset, config=cfg, limit=limit, out=path, progress=show)
    import torch

    from sgr.core.checkpoints import load_checkpoint

    blob = load_checkpoint(path, what="relation model")
    blob["meta"]["limit"] = limit
    blob["meta"]["cosine_val"] = {str(k): v for k, v in trained.cosine_val.items()}
    blob["meta"]["history"] = [{"epoch": h.epoch, "loss": h.loss, "val": {str(k): v for k, v in h.val_rra.items()},
                                "seconds": h.seconds} for h in trained.result.history]
    torch.save(blob, path)
    return blob["meta"]


def run_retrieval(store: GraphStore, args: argparse.Namespace, summary: dict[str, float]) -> dict[str, Any]:
    import torch

    from sgr.retrieval.relations import evaluate_retrieval, load_retriever

    torch.set_num_threads(2)
    graph = ensure_combined(store)
    models = args.models_dir
    models.mkdir(parents=True, exist_ok=True)
    cfg = RelationTrainConfig(epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, patience=args.patience,
                              hard_negatives=args.hard_negatives, encoder=args.encoder, seed=args.seed)
    t0 = time.perf_counter()
    meta_w = _train_or_reuse(store, "webqsp", models / "webqsp.pt", cfg, None, args.retrain)
    meta_m = _train_or_reuse(store, "metaqa", models / "metaqa.pt", cfg, args.metaqa_train_per_hop, args.retrain)
    train_s = time.perf_counter() - t0

    cosine = load_retriever(store, "cosine")
    on_webqsp = load_retriever(store, models / "webqsp.pt")
    on_metaqa = load_retriever(store, models / "metaqa.pt")
    evals: dict[str, Any] = {}
    ev = evaluate_retrieval({"trained": on_webqsp, "cosine": cosine}, "webqsp", ks=KS)
    evals["webqsp"] = ev.__dict__
    for k in KS:
        summary[f"webqsp/rra@{k}"] = round(ev.rra["trained"][k], 4)
        summary[f"webqsp/rra@{k}_cosine"] = round(ev.rra["cosine"][k], 4)
    for ds in METAQA:
        ev = evaluate_retrieval({"trained": on_metaqa, "cosine": cosine, "from_webqsp": on_webqsp}, ds,
                                limit=args.metaqa_test_per_hop, seed=args.seed, ks=KS)
        evals[ds] = ev.__dict__
        for k in KS:
            summary[f"{ds}/rra@{k}"] = round(ev.rra["trained"][k], 4)
            summary[f"{ds}/rra@{k}_cosine"] = round(ev.rra["cosine"][k], 4)
            summary[f"{ds}/rra@{k}_from_webqsp"] = round(ev.rra["from_webqsp"][k], 4)
    for ds, ev in evals.items():
        print(f"[rcr] {ds:12s} n={ev['questions']:5d} vocab={ev['vocabulary_size']} ceiling={ev['ceiling']:.3f} "
              + "  ".join(f"{label}: " + " ".join(f"@{k} {v:.3f}" for k, v in row.items())
                          for label, row in ev["rra"].items()), flush=True)
    return {"graph": graph, "train_config": cfg.__dict__, "train_seconds": train_s,
            "metaqa_train_per_hop": args.metaqa_train_per_hop, "metaqa_test_per_hop": args.metaqa_test_per_hop,
            "seed": args.seed, "models": {"webqsp": {"path": str(models / "webqsp.pt"), **_slim(meta_w)},
                                          "metaqa": {"path": str(models / "metaqa.pt"), **_slim(meta_m)}},
            "evaluations": {ds: {**ev, "rra": {lab: {str(k): v for k, v in row.items()}
                                               for lab, row in ev["rra"].items()}} for ds, ev in evals.items()}}


def _slim(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in meta.items() if k not in ("config",)}


# ---------------------------------------------------------------------------------------------
# part 2: question answering through the harness
# ---------------------------------------------------------------------------------------------
def path_recall(run_dir: Path, dataset: str, sample: int | None, seed: int) -> dict[str, Any]:
    """§5.1's Path Recall: share of questions (with gold paths) where a generated relation path equals a gold one."""
    from sgr.evaluation.predictions import read_predictions

    ds = load_dataset(dataset, sample=sample, seed=seed)
    gold = {q.id: {tuple(p) for p in q.gold_paths} for q in ds.questions if q.gold_paths}
    recs = read_predictions(run_dir / "predictions.jsonl")
    hits = n = 0
    walked_hits = 0
    for qid, paths in gold.items():
        rec = recs.get(qid)
        if rec is None:
            continue
        n += 1
        gen = {tuple(p) for p in (rec.get("extra") or {}).get("relation_paths", [])}
        walked = {tuple(p) for p in (rec.get("extra") or {}).get("walked_paths", [])}
        hits += bool(gen & paths)
        walked_hits += bool(walked & paths)
    return {"n": n, "path_recall": hits / n if n else 0.0, "walked_path_recall": walked_hits / n if n else 0.0}


def run_kgqa(store: GraphStore, args: argparse.Namespace, summary: dict[str, float],
             previous: dict[str, Any]) -> dict[str, Any]:
    from sgr.evaluation.runner import RunConfig, run_eval
    from sgr.methods.registry import METHODS

    kgqa = _kgqa_module()
    details: dict[str, Any] = previous.get("kgqa", {}).get("runs", {})
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    graphs = []
    for graph in ("metaqa", "webqsp"):
        todo = [d for d in datasets if kgqa.GRAPH_OF[d] == graph]
        if not todo:
            continue
        graphs.append(kgqa.ensure_graph(store, graph))
        model = args.models_dir / ("webqsp.pt" if graph == "webqsp" else "metaqa.pt")
        for ds in todo:
            sample = args.webqsp_sample if ds == "webqsp" else args.metaqa_sample
            for label in methods:
                method, options = label, {}
                if label in RCR_METHODS:
                    options = {"relation_model": str(model) if model.exists() else "cosine"}
                elif label in SGR_VARIANTS and label not in METHODS:
                    method, options = SGR_VARIANTS[label]
                if method not in METHODS:
                    print(f"[rcr] skipping {label}: not a registered method", flush=True)
                    continue
                out = args.runs_dir / ds / f"{label}__sample{sample}-seed{args.seed}"
                cfg = RunConfig(dataset=ds, method=method, out=out, sample=sample, seed=args.seed,
                                hops=args.webqsp_hops if graph == "webqsp" else None, options=options)
                t0 = time.perf_counter()
                try:
                    res = run_eval(cfg, progress=sys.stderr.isatty())
                except Exception as exc:  # noqa: BLE001 - one method failing must not lose the others
                    print(f"[rcr] {ds} {label} failed: {type(exc).__name__}: {exc}", flush=True)
                    details.setdefault(ds, {})[label] = {"error": f"{type(exc).__name__}: {exc}"}
                    continue
                if res.interrupted:
                    print("[rcr] interrupted; rerun to resume", flush=True)
                    sys.exit(130)
                entry: dict[str, Any] = {"run_dir": str(res.run_dir), "method": method, "options": options,
                                         "sample": sample, "seed": args.seed, "metrics": res.metrics}
                if label in RCR_METHODS:
                    entry["path_recall"] = path_recall(res.run_dir, ds, sample, args.seed)
                details.setdefault(ds, {})[label] = entry
                ov = res.metrics["overall"]
                pr = entry.get("path_recall", {}).get("path_recall")
                print(f"[rcr] {ds:12s} {label:14s} n={ov['n']:4d} Hits@1 {ov['hits1_strict']:.3f} "
                      f"Hit {ov['hit']:.3f} F1 {ov['f1']:.3f}" + (f" PR {pr:.3f}" if pr is not None else "")
                      + f" ({time.perf_counter() - t0:.0f} s)", flush=True)
    for ds, runs in details.items():
        for label, entry in runs.items():
            if "metrics" not in entry:
                continue
            kgqa.summarize_run(ds, label, entry["metrics"], summary)
            if "path_recall" in entry:
                summary[f"{ds}/{label}/path_recall"] = round(entry["path_recall"]["path_recall"], 4)
    return {"runs": details, "graphs": graphs, "webqsp_sample": args.webqsp_sample,
            "metaqa_sample": args.metaqa_sample, "seed": args.seed}


# ---------------------------------------------------------------------------------------------
def markdown(result: dict[str, Any]) -> str:
    s = result["summary"]
    lines = ["# RCR benchmark", "", "## Relation Retrieval Accuracy (RRA@k)", "",
             "| dataset | retriever | " + " | ".join(f"@{k}" for k in KS) + " |",
             "|---|---|" + "---|" * len(KS)]
    for ds in ("webqsp", *METAQA):
        for suffix, label in (("", "trained"), ("_cosine", "cosine"), ("_from_webqsp", "trained on WebQSP")):
            if f"{ds}/rra@{KS[0]}{suffix}" in s:
                lines.append(f"| {ds} | {label} | " + " | ".join(f"{s[f'{ds}/rra@{k}{suffix}']:.3f}" for k in KS) + " |")
    runs = result.get("kgqa", {}).get("runs", {})
    if runs:
        lines += ["", "## Question answering (fixed-seed samples)", "",
                  "| dataset | method | n | Hits@1 | Hit | F1 | path recall | LLM calls (median) | p50 ms |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for ds, by_method in runs.items():
            for label, e in by_method.items():
                if "metrics" not in e:
                    lines.append(f"| {ds} | {label} | – | error: {e.get('error', '')[:60]} | | | | | |")
                    continue
                ov, cost = e["metrics"]["overall"], e["metrics"]["cost"]
                pr = e.get("path_recall", {}).get("path_recall")
                lines.append(f"| {ds} | {label} | {ov['n']} | {ov['hits1_strict']:.3f} | {ov['hit']:.3f} | "
                             f"{ov['f1']:.3f} | {'' if pr is None else f'{pr:.3f}'} | "
                             f"{cost['llm_calls_median']:.0f} | {cost['latency_ms_p50']:.0f} |")
    return "\n".join(lines) + "\n"


#: The fine-tuned encoders' results files (``bench/rcr_encoder.py``) and the suffix of their keys in ``rcr.json``.
ENCODER_RESULTS = {"rcr_encoder.json": "_encoder", "rcr_encoder_gpu.json": "_encoder_gpu",
                   "rcr_encoder_mpnet.json": "_encoder_mpnet"}


def encoder_lever(summary: dict[str, float]) -> None:
    """``webqsp/rra@K_encoder[_gpu|_mpnet]``: the fine-tuned encoders' test RRA@k from ``bench/rcr_encoder.py``
    (same split, test set and vocabulary): MiniLM trained on this CPU, MiniLM and MPNet (LoRA) trained on a GPU
    machine, when those runs exist; with their median epoch seconds (``webqsp/encoder…_epoch_seconds_cpu|gpu``)."""
    for name, suffix in ENCODER_RESULTS.items():
        path = RESULTS / name
        if not path.exists():
            continue
        figures = json.loads(path.read_text())["summary"]
        summary.update({f"webqsp/rra@{k}{suffix}": round(figures[f"webqsp/rra@{k}"], 4) for k in KS})
        for key, device in (("median_epoch_seconds", "cpu"), ("median_epoch_seconds_gpu", "gpu")):
            if key in figures:
                summary[f"webqsp/{suffix[1:]}_epoch_seconds_{device}"] = round(figures[key], 1)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default="retrieval,kgqa", help="retrieval, kgqa or both")
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--patience", type=int, default=10, help="early stop after N epochs without better val RRA@50")
    ap.add_argument("--hard-negatives", type=int, default=RelationTrainConfig.hard_negatives,
                    help="of the 80 negatives, how many are the heads' top-ranked non-gold relations")
    ap.add_argument("--encoder", default=RelationTrainConfig.encoder, help="frozen encoder: minilm or mpnet")
    ap.add_argument("--metaqa-train-per-hop", type=int, default=1000)
    ap.add_argument("--metaqa-test-per-hop", type=int, default=1000)
    ap.add_argument("--retrain", action="store_true", help="train again even if a matching model exists")
    ap.add_argument("--methods", default="rcr,rcr-ks0,rcr-ks2,sgr,sgr-no-verify,sgr-verify-all,scr")
    ap.add_argument("--datasets", default=",".join(KGQA_DATASETS))
    ap.add_argument("--webqsp-sample", type=int, default=40)
    ap.add_argument("--metaqa-sample", type=int, default=20)
    ap.add_argument("--webqsp-hops", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--models-dir", type=Path, default=None, help="default $SGR_HOME/bench-runs/rcr/models")
    ap.add_argument("--runs-dir", type=Path, default=None, help="default $SGR_HOME/bench-runs/rcr")
    ap.add_argument("--out", type=Path, default=RESULTS / "rcr.json")
    ap.add_argument("--fresh", action="store_true", help="start the results file afresh (needed when it holds a run "
                    "of another commit: one file holds one run)")
    args = ap.parse_args(argv)
    base = sgr_home() / "bench-runs" / "rcr"
    args.models_dir = args.models_dir or base / "models"
    args.runs_dir = args.runs_dir or base
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}

    previous = previous_result(args.out, fresh=args.fresh)
    summary: dict[str, float] = {}
    result: dict[str, Any] = {"summary": summary}
    store = GraphStore.from_settings()
    store.verify()
    if "retrieval" in parts:
        result["retrieval"] = run_retrieval(store, args, summary)
    elif "retrieval" in previous:
        result["retrieval"] = previous["retrieval"]
        summary.update({k: v for k, v in previous.get("summary", {}).items() if "/rra@" in k})
    if "kgqa" in parts:
        result["kgqa"] = run_kgqa(store, args, summary, previous)
    elif "kgqa" in previous:
        result["kgqa"] = previous["kgqa"]
        summary.update({k: v for k, v in previous.get("summary", {}).items() if "/rra@" not in k})
    store.close()
    encoder_lever(summary)
    if "levers" in previous:  # the levers' runs (written beside this benchmark, see the README) are kept
        result["levers"] = previous["levers"]
    result["config"] = {**finished_config(), "encoder": "all-MiniLM-L6-v2 (384-d)", "parts": sorted(parts)}
    result["summary"] = dict(sorted(summary.items()))
    write_report(args.out, result, markdown, continues=previous)
    return result


if __name__ == "__main__":
    main()
