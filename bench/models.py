"""Benchmark of the models that ship with sgr (``models/``): size, set-up time, a fresh clone's figures, graph-only
tuning, and RCR with them. Writes ``bench/results/models.json`` (:func:`bench.record.write_result`).

    SGR_HOME=… .venv/bin/python bench/models.py STEP [--metaqa-uri bolt://… --webqsp-uri bolt://… --cwq-uri …]

Steps (each keeps its figures in ``$SGR_HOME/bench/models/<step>.json``; ``summary`` assembles them):

* ``shipped`` — ``shipped_mb`` (every file under ``models/``, manifests included) and ``materialise_seconds``
  (``sgr models materialise --force`` into an empty ``SGR_HOME``: both SHA-256 checks, the GGUF written, the
  encoder folded and saved).
* ``from-graph`` — a graph without labelled questions (``sgr llm tune --from-graph``), on MetaQA and on CWQ dev. Three
  path generators each, all served the same way and asked the same way: ``base`` (the packaged model), ``graph_only``
  (tuned on questions written from the graph alone: ``--no-webqsp --metaqa-per-hop 0 --from-graph N``) and
  ``dev_tuned`` (tuned on the benchmark's dev questions with the same settings: MetaQA dev, a seeded 300 per hop;
  CWQ dev's training part). Evaluated with ``sgr`` on a fixed sample no model trained on (MetaQA dev: 50 per hop
  outside the dev samples the dev-tuned and the shipped models saw; CWQ dev: 100 from the held-back base questions
  and the ones built on WebQSP test questions), with what a new graph has: no worked examples or retrieved plans of
  training questions (``exemplars=false``, ``plans=0``), plain cosine relation ranking
  (``relation_retriever=embedding``), the compiled Cypher of the top path for every model (``use_llm_cypher=false``)
  and the decision parameters pinned in ``FROM_GRAPH_OPTIONS`` (μ 0.9, ε 0.6, λ 0.1, γ_min 0: SGR's defaults
  when this step was written, kept so that the model's own path decides where it is confident; under today's
  defaults, μ 0.5, ε 0.5, γ_min 0.3 with ``graph_first``, G_q's compiled path answers first and the three models
  answer alike — a replay of the stored decisions, ``bench/experiments/models.md``). Keys
  ``from_graph/<metaqa-dev|cwq-dev>/<model>/hits1_strict`` (and ``…/path_accuracy``: the first generated path is
  the gold one, the same replies). The four tuning runs share ``FROM_GRAPH_TUNE`` (LoRA, as the shipped generator,
  rank 16 so that each run's weights come back from a GPU machine in one part); ``--bundles DIR`` trains them
  there: the first run writes ``DIR/<version>`` and stops, ``python -m sgr.llm.bundle DIR/<version>
  DIR/<version>-out`` trains each, the second run reads them.
* ``dev-check`` — before the path generator ships: ``sgr`` with it (the decision parameters its manifest carries,
  and ``SGRConfig``'s defaults) and with the packaged model, on the from-graph evaluation samples.
* ``rcr`` — ``rcr`` with the shipped models (the served shipped path generator asked in SGR's schema format, the
  shipped relation encoder) on WebQSP (a seeded sample of 200) and MetaQA 1-hop test (200).
* ``fresh-clone`` — ``git clone`` of HEAD into a new folder, a new ``SGR_HOME`` (no cache of any kind), then what set-up
  does for the models (``sgr models materialise``), ``sgr llm serve`` (its default) and ``bench/sgr.py --methods sgr
  --datasets webqsp,metaqa-3hop`` there; ``fresh_clone/<dataset>/sgr/hits1_strict`` beside ``committed/…`` (the
  README's default row: ``bench/results/sgr_hops.json``, ``bench/sgr.py --methods sgr`` with the shipped models
  at one commit, read again by ``summary``).
* ``summary`` — writes the results file.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import write_result  # noqa: E402
from sgr.core.config import models_dir, sgr_home  # noqa: E402
from sgr.datasets import shared_data_dir  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402

RESULTS = ROOT / "bench" / "results"
#: the committed figures a fresh clone must reproduce: the README's default `sgr` row (the shipped models)
COMMITTED = RESULTS / "sgr_hops.json"
#: the from-graph tuning runs: the same settings for graph-only and dev-tuned
FROM_GRAPH_TUNE = {"method": "lora", "lora_rank": 16, "lora_alpha": 16, "epochs": 4, "batch_size": 16, "lr": 5e-4,
                   "patience": 2, "val_fraction": 0.05, "threads": 4, "seed": 0, "eval_n": 40, "examples": 0}
FROM_GRAPH_QUESTIONS = 900
METAQA_EVAL_PER_HOP = 50
CWQ_EVAL = 100
#: how every path generator is asked in from-graph (see the module docstring); pinned, so that no model's
#: provenance changes its decision parameters
FROM_GRAPH_OPTIONS = {"exemplars": "false", "plans": "0", "relation_retriever": "embedding",
                      "use_llm_cypher": "false", "mu": "0.9", "epsilon": "0.6", "lam": "0.1", "answer_ratio": "0.5",
                      "integrate": "false", "plan_trust": "0.95", "gamma_min": "0"}
RCR_SAMPLE = 200


def parts_dir() -> Path:
    path = sgr_home() / "bench" / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def save_part(name: str, data: dict[str, Any]) -> None:
    (parts_dir() / f"{name}.json").write_text(json.dumps(data, indent=1, default=str))
    print(json.dumps(data.get("summary", {}), indent=1), flush=True)


def load_part(name: str) -> dict[str, Any]:
    path = parts_dir() / f"{name}.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def store_at(uri: str | None) -> GraphStore:
    store = GraphStore(uri) if uri else GraphStore.from_settings()
    store.verify()
    return store


# -- shipped ----------------------------------------------------------------------------------------------
def step_shipped(_args: argparse.Namespace) -> None:
    files = [p for p in models_dir().rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    home = Path(os.environ.get("TMPDIR", "/tmp")) / f"sgr-materialise-{os.getpid()}"
    env = {**os.environ, "SGR_HOME": str(home), "SGR_SHIPPED_MODELS": "1"}
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, str(ROOT / "cli.py"), "models", "materialise", "--force"], env=env,
                         capture_output=True, text=True, cwd=ROOT)
    secs = time.perf_counter() - t0
    shutil.rmtree(home, ignore_errors=True)
    if out.returncode:
        raise SystemExit(f"sgr models materialise failed: {out.stdout}{out.stderr}")
    save_part("shipped", {"summary": {"shipped_mb": round(size / 1e6, 2), "materialise_seconds": round(secs, 1)},
                          "files": {str(p.relative_to(ROOT)): p.stat().st_size for p in sorted(files)},
                          "materialise_output": out.stdout, "load": os.getloadavg()})


# -- serving one model at a time ---------------------------------------------------------------------------
def serve(model: str) -> str:
    """Stop the recorded local server and serve ``model``; returns its alias."""
    from sgr.llm import server

    server.stop()
    info = server.start(model=model, n_threads=1)
    print(f"[models] serving {server.describe(info)}", flush=True)
    return info.model


def evaluate(dataset: str, model: str, label: str, uri: str | None, options: dict[str, str],
             out: Path) -> dict[str, Any]:
    """``sgr`` on ``dataset`` with ``model`` served; the run's overall metrics and its path accuracy."""
    from sgr.evaluation.runner import RunConfig, run_eval
    from sgr.llm.client import reset_shared_llm

    serve(model)
    reset_shared_llm()
    res = run_eval(RunConfig(dataset=dataset, method="sgr", out=out / label, options=options),
                   store_factory=(lambda: GraphStore(uri)) if uri else None, progress=sys.stderr.isatty())
    return {"metrics": res.metrics["overall"], "n": res.metrics["overall"]["n"], "run_dir": str(res.run_dir),
            "path_accuracy": path_accuracy(res.run_dir, dataset)}


def evaluate_once(step: str, part: dict[str, Any], key: str, dataset: Path, model: str, label: str,
                  uri: str | None, options: dict[str, str], out: Path) -> None:
    """:func:`evaluate` into ``part["runs"][key]`` unless the step's part holds it already, saved as it lands (a
    step resumes where it stopped)."""
    runs = part.setdefault("runs", {})
    if key not in runs:
        runs[key] = evaluate(str(dataset), model, label, uri, options, out)
        save_part(step, part)


def path_accuracy(run_dir: Path, dataset: str) -> float | None:
    """Share of questions whose model's first relation path (``extra.model_paths``) is one of the question's gold
    paths (MetaQA: the qtype's path); None when the dataset knows no gold path (CWQ)."""
    from sgr.datasets import load_dataset
    from sgr.evaluation.predictions import read_predictions

    gold = {q.id: [tuple(p) for p in q.gold_paths] for q in load_dataset(dataset).questions if q.gold_paths}
    if not gold:
        return None
    preds = read_predictions(run_dir / "predictions.jsonl")
    hits = sum(bool(((p.get("extra") or {}).get("model_paths") or []))
               and tuple(p["extra"]["model_paths"][0]["relations"]) in gold[qid]
               for qid, p in preds.items() if qid in gold)
    n = sum(qid in gold for qid in preds)
    return round(hits / n, 4) if n else None


# -- from-graph ---------------------------------------------------------------------------------------------
def tune(graph_version: str, uri: str | None, bundles: Path | None, **data: Any) -> Path | None:
    """``sgr llm tune`` against the store at ``uri``, keyed ``graph_version``; returns the exported GGUF. With
    ``bundles``: the training runs elsewhere (a GPU machine) — the bundle is written to ``bundles/<version>`` and
    None returned until its run's output is in ``bundles/<version>-out``, which is then read."""
    from sgr.methods.sgr.tuning import tune_from_options

    weights = sgr_home() / "tune" / graph_version / "model.gguf"
    if weights.is_file():
        return weights
    if uri:
        os.environ["NEO4J_URI"] = uri
    where: dict[str, Any] = {}
    if bundles is not None:
        out = bundles / f"{graph_version}-out"
        where = {"bundle": bundles / graph_version, "from_bundle": out if out.is_dir() else None}
    prov = tune_from_options(graph_version=graph_version, **data, **FROM_GRAPH_TUNE, **where)
    return Path(prov["weights"]) if "weights" in prov else None


def metaqa_eval_files() -> tuple[list[Path], dict[str, Any]]:
    """MetaQA dev: ``METAQA_EVAL_PER_HOP`` questions per hop outside the seeded samples the dev-tuned model (300 per
    hop) and the shipped one (100 per hop) trained on, written as ``{k}hop_dev_eval.tsv`` (+ ``_qtype.txt``)."""
    from sgr.methods.sgr.tuning import metaqa_dev_examples

    trained = {e.id for n in (FROM_GRAPH_QUESTIONS // 3, 100) for e in metaqa_dev_examples(n, seed=0)}
    files, info = [], {}
    for hop in (1, 2, 3):
        src = shared_data_dir() / "metaqa" / f"{hop}hop_dev.tsv"
        lines = src.read_text(encoding="utf-8").splitlines()
        qtypes = (src.with_name(f"{hop}hop_dev_qtype.txt")).read_text(encoding="utf-8").splitlines()
        free = [i for i in range(len(lines)) if f"{src.stem}:{i + 1}" not in trained]
        pick = sorted(random.Random(1000 + hop).sample(free, METAQA_EVAL_PER_HOP))
        out = parts_dir() / f"{hop}hop_dev_eval.tsv"
        out.write_text("\n".join(lines[i] for i in pick) + "\n", encoding="utf-8")
        out.with_name(f"{hop}hop_dev_eval_qtype.txt").write_text("\n".join(qtypes[i] for i in pick) + "\n")
        files.append(out)
        info[f"{hop}hop"] = {"lines": [i + 1 for i in pick], "excluded_trained": len(lines) - len(free)}
    return files, info


def cwq_eval_file(store: GraphStore) -> tuple[Path, dict[str, Any]]:
    """CWQ dev: ``CWQ_EVAL`` questions no model trained on: the held-back base questions of the shipped split and
    the questions built on WebQSP test questions (never trained on)."""
    from sgr.retrieval.supervision import WEBQSP_TRAIN_PREFIX, base_question, cwq_dev_examples

    split = cwq_dev_examples(store)
    held = set(split.info["held_bases"])
    src = shared_data_dir() / "cwq" / "cwq_dev.jsonl"
    recs = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines() if line.strip()]
    free = [r for r in recs if base_question(r["id"]) in held or not r["id"].startswith(WEBQSP_TRAIN_PREFIX)]
    pick = sorted(random.Random(0).sample(range(len(free)), CWQ_EVAL))
    out = parts_dir() / "cwq_dev_eval.jsonl"
    out.write_text("".join(json.dumps(free[i]) + "\n" for i in pick), encoding="utf-8")
    chosen = [free[i] for i in pick]
    return out, {"questions": len(chosen), "held_back_webqtrn": sum(r["id"].startswith("WebQTrn") for r in chosen),
                 "on_webqsp_test": sum(r["id"].startswith("WebQTest") for r in chosen), "from": len(free)}


def step_from_graph(args: argparse.Namespace) -> None:
    from sgr.llm.server import model_path

    part = load_part("from-graph")
    runs = part.setdefault("runs", {})
    # MetaQA: the KB alone
    mq_uri, cwq_uri, bundles = args.metaqa_uri, args.cwq_uri, args.bundles
    models = {
        "metaqa-graph-only": tune("metaqa-graph-only", mq_uri, bundles, webqsp=False, metaqa_per_hop=0,
                                  from_graph=FROM_GRAPH_QUESTIONS),
        "metaqa-dev-tuned": tune("metaqa-dev-tuned", mq_uri, bundles, webqsp=False,
                                 metaqa_per_hop=FROM_GRAPH_QUESTIONS // 3),
        "cwq-graph-only": tune("cwq-graph-only", cwq_uri, bundles, webqsp=False, metaqa_per_hop=0,
                               from_graph=FROM_GRAPH_QUESTIONS),
        "cwq-dev-tuned": tune("cwq-dev-tuned", cwq_uri, bundles, webqsp=False, metaqa_per_hop=0, cwq=True)}
    waiting = [v for v, w in models.items() if w is None]
    if waiting:
        raise SystemExit(f"bundles written under {bundles}: train each (`python -m sgr.llm.bundle {bundles}/V "
                         f"{bundles}/V-out`) for V in {', '.join(waiting)}, then run this step again")
    graph_only, dev_tuned = models["metaqa-graph-only"], models["metaqa-dev-tuned"]
    files, info = metaqa_eval_files()
    part["metaqa_eval"] = info
    for label, model in (("base", str(model_path())), ("graph_only", str(graph_only)), ("dev_tuned", str(dev_tuned))):
        for f in files:
            hop = f.name[0]
            evaluate_once("from-graph", part, f"metaqa-dev/{label}/{f.stem}", f, model, f"metaqa-{label}-{hop}hop",
                          mq_uri, {**FROM_GRAPH_OPTIONS, "hops": hop}, parts_dir() / "runs")
    # CWQ dev: the WebQSP slice + CWQ dev graph
    with store_at(cwq_uri) as store:
        cwq_file, part["cwq_eval"] = cwq_eval_file(store)
    graph_only, dev_tuned = models["cwq-graph-only"], models["cwq-dev-tuned"]
    for label, model in (("base", str(model_path())), ("graph_only", str(graph_only)), ("dev_tuned", str(dev_tuned))):
        evaluate_once("from-graph", part, f"cwq-dev/{label}", cwq_file, model, f"cwq-{label}", cwq_uri,
                      FROM_GRAPH_OPTIONS, parts_dir() / "runs")
    summary: dict[str, float] = {}
    for ds in ("metaqa-dev", "cwq-dev"):
        for label in ("base", "graph_only", "dev_tuned"):
            rs = [r for k, r in runs.items() if k.startswith(f"{ds}/{label}")]
            if not rs:
                continue
            n = sum(r["n"] for r in rs)
            summary[f"from_graph/{ds}/{label}/hits1_strict"] = round(
                sum(r["metrics"]["hits1_strict"] * r["n"] for r in rs) / n, 4)
            accs = [(r["path_accuracy"], r["n"]) for r in rs if r["path_accuracy"] is not None]
            if accs:
                summary[f"from_graph/{ds}/{label}/path_accuracy"] = round(sum(a * m for a, m in accs) /
                                                                          sum(m for _, m in accs), 4)
            summary[f"from_graph/{ds}/{label}/questions"] = n
    part["summary"] = summary
    save_part("from-graph", part)


# -- rcr ---------------------------------------------------------------------------------------------------
def step_rcr(args: argparse.Namespace) -> None:
    from sgr.evaluation.runner import RunConfig, run_eval
    from sgr.llm.client import reset_shared_llm

    part = load_part("rcr")
    alias = serve("shipped")
    reset_shared_llm()
    kgqa = _kgqa()
    for ds, uri in (("webqsp", args.webqsp_uri), ("metaqa-1hop", args.metaqa_uri)):
        with store_at(uri) as store:
            part.setdefault("graphs", {})[ds] = kgqa.ensure_graph(store, kgqa.GRAPH_OF[ds])
        res = run_eval(RunConfig(dataset=ds, method="rcr", sample=RCR_SAMPLE, seed=0,
                                 out=parts_dir() / "runs" / f"rcr-{ds}", hops=2 if ds == "webqsp" else None),
                       store_factory=(lambda u=uri: GraphStore(u)) if uri else None, progress=sys.stderr.isatty())
        part.setdefault("runs", {})[ds] = {"overall": res.metrics["overall"], "cost": res.metrics["cost"],
                                           "run_dir": str(res.run_dir), "model": alias}
        save_part("rcr", part)
    part["summary"] = {f"rcr/{ds}/hits1_strict": round(r["overall"]["hits1_strict"], 4)
                       for ds, r in part["runs"].items()} | {
        f"rcr/{ds}/questions": r["overall"]["n"] for ds, r in part["runs"].items()}
    save_part("rcr", part)


def _kgqa():  # noqa: ANN202 - the module bench/kgqa.py
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_kgqa", ROOT / "bench" / "kgqa.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


# -- fresh clone -------------------------------------------------------------------------------------------
FRESH_DATASETS = ("webqsp", "metaqa-3hop")


def step_fresh_clone(args: argparse.Namespace) -> None:
    """See the module docstring; ``--fresh-dir`` is the clone's parent (emptied first)."""
    base = Path(args.fresh_dir)
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    clone, home = base / "sgr", base / "home"
    run = lambda cmd, **kw: subprocess.run(cmd, check=True, **kw)  # noqa: E731
    run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)])
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=clone, capture_output=True,
                            text=True).stdout.strip()
    (clone / ".venv").symlink_to(Path(os.path.realpath(ROOT / ".venv")))  # the same Python environment
    env = {**os.environ, "SGR_HOME": str(home), "PYTHONPATH": str(clone), "SGR_SHIPPED_MODELS": "1",
           "SGR_SHARED_DATA": str(shared_data_dir())}
    for k in ("SGR_LLM_BASE_URL", "SGR_LLM_MODEL", "SGR_RELATION_MODEL", "NEO4J_URI", "SGR_CACHE_DIR"):
        env.pop(k, None)
    py, sgr = str(clone / ".venv" / "bin" / "python"), [str(clone / ".venv" / "bin" / "python"), str(clone / "cli.py")]
    t0 = time.perf_counter()
    run(["mvn", "-q", "-B", "-o", "-f", "java/pom.xml", "package", "-DskipTests"], cwd=clone, env=env)
    run(sgr + ["models", "materialise"], cwd=clone, env=env)
    setup_s = time.perf_counter() - t0
    run(sgr + ["neo4j", "start"], cwd=clone, env=env)
    try:
        run(sgr + ["llm", "serve"], cwd=clone, env=env)
        status = subprocess.run(sgr + ["llm", "status"], cwd=clone, env=env, capture_output=True, text=True).stdout
        out = base / "sgr.json"
        run([py, "bench/sgr.py", "--methods", "sgr", "--datasets", ",".join(FRESH_DATASETS), "--sample",
             str(args.metaqa_sample), "--webqsp-sample", str(args.webqsp_sample), "--hops-per-dataset",
             "--no-linking", "--out", str(out)], cwd=clone, env=env)
    finally:
        subprocess.run(sgr + ["llm", "stop"], cwd=clone, env=env)
        subprocess.run(sgr + ["neo4j", "stop"], cwd=clone, env=env)
    fresh = json.loads(out.read_text())["summary"]
    summary = {f"fresh_clone/{ds}/sgr/hits1_strict": fresh.get(f"{ds}/sgr/hits1_strict") for ds in FRESH_DATASETS}
    save_part("fresh-clone", {"summary": summary, "clone_commit": commit, "setup_seconds": round(setup_s, 1),
                              "llm_status": status, "fresh": {k: v for k, v in fresh.items() if "/sgr/" in k}})


def committed_figures() -> dict[str, Any]:
    """``committed/<dataset>/sgr/hits1_strict`` from :data:`COMMITTED`, with the commit it was measured at."""
    committed = json.loads(COMMITTED.read_text())
    summary: dict[str, Any] = {f"committed/{ds}/sgr/hits1_strict": committed["summary"].get(f"{ds}/sgr/hits1_strict")
                               for ds in FRESH_DATASETS}
    summary["committed/commit"] = (committed.get("provenance") or {}).get("commit")
    return summary


# -- dev-check ------------------------------------------------------------------------------------------
#: SGRConfig's decision defaults, tried against the parameters the shipped manifest carries
DEV_CHECK_DEFAULTS = {"mu": "0.5", "epsilon": "0.5", "lam": "0.3"}


def step_dev_check(args: argparse.Namespace) -> None:
    """``sgr`` with the shipped path generator before it ships, on dev questions no model trained on (the from-graph
    evaluation samples: MetaQA dev 50 a hop, CWQ dev 100): with the decision parameters its manifest carries
    (``shipped-carried``), with ``SGRConfig``'s defaults (``shipped-defaults``), and the packaged model (``base``);
    the default options otherwise. Keys ``dev_check/<metaqa-dev|cwq-dev>/<label>/hits1_strict``."""
    from sgr.llm import shipped
    from sgr.llm.server import model_path

    part = load_part("dev-check")
    runs = part.setdefault("runs", {})
    gguf = str(shipped.materialise(model_path()))
    files, part["metaqa_eval"] = metaqa_eval_files()
    with store_at(args.cwq_uri) as store:
        cwq_file, part["cwq_eval"] = cwq_eval_file(store)
    for label, model, opts in (("shipped-carried", gguf, {}), ("shipped-defaults", gguf, DEV_CHECK_DEFAULTS),
                               ("base", str(model_path()), {})):
        for f in files:
            evaluate_once("dev-check", part, f"metaqa-dev/{label}/{f.stem}", f, model, f"dev-mq-{label}-{f.name[0]}",
                          args.metaqa_uri, {**opts, "hops": f.name[0]}, parts_dir() / "dev-runs")
        evaluate_once("dev-check", part, f"cwq-dev/{label}", cwq_file, model, f"dev-cwq-{label}", args.cwq_uri, opts,
                      parts_dir() / "dev-runs")
    part["summary"] = {f"dev_check/{k}/hits1_strict": round(r["metrics"]["hits1_strict"], 4)
                       for k, r in runs.items()}
    save_part("dev-check", part)


# -- summary -----------------------------------------------------------------------------------------------
def step_summary(_args: argparse.Namespace) -> None:
    parts = {name: load_part(name) for name in ("shipped", "dev-check", "fresh-clone", "from-graph", "rcr")}
    summary: dict[str, Any] = {}
    for p in parts.values():
        summary.update(p.get("summary", {}))
    summary.update(committed_figures())  # beside the fresh clone's: the committed row as it stands now
    manifests = {p.parent.name: json.loads(p.read_text()) for p in sorted(models_dir().glob("*/manifest.json"))}
    write_result(RESULTS / "models.json", {
        "summary": summary,
        "shipped": {name: {"files": m["files"], "validation": (m.get("validation") or {}).get("summary"),
                           "made_by": m.get("made_by")} for name, m in manifests.items()},
        "config": {"from_graph_tune": FROM_GRAPH_TUNE, "from_graph_questions": FROM_GRAPH_QUESTIONS,
                   "from_graph_options": FROM_GRAPH_OPTIONS, "metaqa_eval_per_hop": METAQA_EVAL_PER_HOP,
                   "cwq_eval": CWQ_EVAL, "rcr_sample": RCR_SAMPLE},
        "parts": {name: {k: v for k, v in p.items() if k != "summary"} for name, p in parts.items()},
    })
    print(json.dumps(summary, indent=1))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=("shipped", "dev-check", "from-graph", "rcr", "fresh-clone",
                                         "summary"))
    ap.add_argument("--metaqa-uri", default=None, help="Neo4j holding the MetaQA KB")
    ap.add_argument("--webqsp-uri", default=None, help="Neo4j holding the WebQSP slice (bench/sgr.py's graph)")
    ap.add_argument("--cwq-uri", default=None, help="Neo4j holding the WebQSP slice and CWQ dev")
    ap.add_argument("--bundles", type=Path, default=None,
                    help="from-graph: train through tuning bundles in this folder (on a GPU machine) instead of here")
    ap.add_argument("--fresh-dir", default="/tmp/sgr-fresh-clone", help="fresh-clone: where to clone")
    ap.add_argument("--webqsp-sample", type=int, default=500)
    ap.add_argument("--metaqa-sample", type=int, default=300)
    args = ap.parse_args(argv)
    {"shipped": step_shipped, "dev-check": step_dev_check, "from-graph": step_from_graph, "rcr": step_rcr, "fresh-clone": step_fresh_clone,
     "summary": step_summary}[args.step](args)


if __name__ == "__main__":
    main()
