"""SCR benchmark: train on MetaQA dev / the WebQSP 80 % part, test on MetaQA test / the WebQSP 20 % part.

The stages (prepare, train, eval in this order; every stage can be rerun, caches make reruns cheap):

``prepare --dataset metaqa|webqsp [--load]``
    Needs Neo4j (``NEO4J_URI``, e.g. ``SGR_HOME=/tmp/sgr-scr sgr neo4j start``). ``--load`` empties the store
    and loads the dataset's graph with :mod:`loaders.writer` (the MetaQA KB, or the union of the WebQSP
    slice's per-question graphs). Then every G_q the later stages need (train, validation, test) is cut
    and cached on disk (:class:`sgr.methods.scr.data.SubgraphCache`, keyed by graph version), and the
    reachability ceiling of the test questions is computed with :mod:`sgr.evaluation.metrics.reachability`
    (MetaQA: k = the question's hops; WebQSP: k = 2 with CVT hops free). After ``prepare`` the two
    graphs need not be loaded: ``train`` and ``eval`` read the cache only.

``train --dataset metaqa|webqsp [--only RUN]``
    :func:`sgr.methods.scr.train.run_training` once per run of ``TRAIN[dataset]``: the stepwise model (``scr``,
    ``scr-greedy``), the single-step ablation model (``scr-single-step``) and, on MetaQA, the stepwise model under
    the paper's shortest-walk supervision (``scr@stepwise-shortest``; the served one follows the gold relation
    path). Small CPU config (MiniLM, top-2 encoder layers).

``seeds --dataset metaqa|webqsp [--seeds 1,2]``
    The served stepwise run trained again with other seeds (run-to-run variance): validation and test Hits@1 of
    every seed's model beside the served one (seed 0), in ``bench/results/scr_seeds.json``.

``eval``
    Batched inference over the test samples (``--per-hop`` questions per MetaQA hop, seed 0; the whole
    WebQSP held-out part), scored with :mod:`sgr.evaluation.metrics.scores`; per-question latency on CPU
    (one question at a time) on a fixed sample; ``scr+llm`` on a small sample when ``--llm-n`` > 0 and
    an LLM is reachable. Writes ``bench/results/scr.json`` (summary keys ``<dataset>/<method>/<metric>``,
    ``<dataset>/scr/path_recall``, ``<dataset>/ceiling``, and ``provenance`` by ``bench/record.py``) and
    ``bench/results/scr.md``. ``--add-llm`` and ``--latency-only`` add to a ``scr.json`` of the same commit only
    (one file holds one run).

Datasets in the summary: ``metaqa-1hop``, ``metaqa-2hop``, ``metaqa-3hop`` (test samples), ``webqsp``
(the held-out 20 %: :func:`sgr.methods.scr.data.split_of`, sha256 of ``scr-split:<id>``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.record import previous_result, write_result  # noqa: E402
from sgr.core.config import cache_dir, sgr_home  # noqa: E402
from sgr.datasets import shared_data_dir  # noqa: E402
from sgr.evaluation.cost import percentile  # noqa: E402
from sgr.evaluation.metrics.scores import score_answers  # noqa: E402
from sgr.methods.scr.data import SubgraphSource, reachable  # noqa: E402
from sgr.methods.scr.presets import preset, test_questions, training_questions  # noqa: E402
from sgr.core.types import Prediction, Question  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
DATASETS = ("metaqa", "webqsp")
#: The training runs of each dataset, in order (small CPU config: MiniLM, top-2 encoder layers trained; up to eight
#: epochs for the served WebQSP model, three for the others, the best kept by validation Hits@1, patience 2 — an
#: epoch takes half a minute (WebQSP) to two minutes per 1,000 MetaQA questions per hop on the 2-core machine; the
#: served MetaQA model trains on 3,000 per hop, 7 to 12 minutes an epoch: the earlier six-epoch run peaked at epoch 5
#: with validation within 0.007 of epoch 3). ``stepwise`` serves ``scr``/``scr-greedy``/``scr+llm``;
#: ``single-step`` serves ``scr-single-step``; ``scr@KIND`` serves run KIND. ``subset``: first N training questions
#: per hop (0: all); ``supervision``: :func:`sgr.methods.scr.data.build_examples`; ``init_from``: start from an
#: earlier run's best.pt.
_BASE = {"train_per_hop": 1000, "val_per_hop": 100, "subset": 0, "val_subset": 0, "batch_size": 16,
         "lr_encoder": 1e-4, "lr_graph": 1e-3, "supervision": "shortest", "init_from": None, "epochs": 3,
         "encoder": "minilm", "trainable_layers": 2, "gpu": False}
#: ``gpu``: trained on a GPU machine through a bundle (``bundle``, then ``fold``), not by ``train``. The paper's
#: encoder size (MPNet, 768-d); its top 3 of 12 layers, the most whose weights come back in one transfer
#: (:mod:`sgr.methods.scr.bundle`); otherwise the served run's settings.
_MPNET_GPU = {"encoder": "mpnet", "trainable_layers": 3, "gpu": True, "epochs": 12, "patience": 3}
TRAIN: dict[str, dict[str, dict[str, Any]]] = {
    "metaqa": {
        # not the paper's supervision: walks along MetaQA's gold relation path (the dev question's type); a 3-hop
        # answer set often holds entities one hop from the topic, whose shortest walk teaches stopping early
        "stepwise": {**_BASE, "supervision": "gold-first", "train_per_hop": 3000, "epochs": 3},
        "single-step": {**_BASE, "subset": 500, "val_subset": 50},
        "stepwise-shortest": {**_BASE},  # the paper's supervision (shortest walks), served as scr@stepwise-shortest
        "stepwise-mpnet": {**_BASE, "supervision": "gold-first", "train_per_hop": 3000, **_MPNET_GPU},
    },
    "webqsp": {
        "stepwise": {**_BASE, "train_per_hop": 0, "val_per_hop": 0, "epochs": 8},
        "single-step": {**_BASE, "train_per_hop": 0, "val_per_hop": 0, "subset": 600},
        "stepwise-mpnet": {**_BASE, "train_per_hop": 0, "val_per_hop": 0, **_MPNET_GPU},
    },
}


def state_path() -> Path:
    return cache_dir("scr") / "bench-state.json"


def load_state() -> dict[str, Any]:
    p = state_path()
    return json.loads(p.read_text()) if p.exists() else {}


def save_state(state: dict[str, Any]) -> None:
    p = state_path()
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2))
    tmp.replace(p)


# -- prepare -------------------------------------------------------------------------------------------
def load_graph(store: Any, dataset: str) -> None:
    """Empty the store and load the dataset's graph (MetaQA KB or the WebQSP slice) with loaders.writer."""
    from loaders.writer import GraphBatch, record_source, write_graph

    store.clear()
    store.ensure_schema()
    batch = GraphBatch()
    if dataset == "metaqa":
        path = shared_data_dir() / "metaqa" / "kb.txt"
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                h, r, t = line.rstrip("\n").split("|")
                batch.add_triple(h, r, t)
    else:
        path = shared_data_dir() / "webqsp" / "webqsp_mini.jsonl"
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                for h, r, t in json.loads(line)["graph"]:
                    batch.add_triple(h, r, t)
    stats = write_graph(store, batch)
    record_source(store, str(path), hashlib.sha256(path.read_bytes()).hexdigest(), len(batch.triples))
    print(f"loaded {dataset}: {stats.entities} entities, {stats.triples} triples in {stats.seconds:.0f} s")


def prepare(dataset: str, load: bool, per_hop: int) -> None:
    from sgr.evaluation.metrics.reachability import reachability
    from sgr.graph.store import GraphStore

    store = GraphStore.from_settings()
    store.verify()
    if load:
        load_graph(store, dataset)
    p = preset(dataset)
    source = SubgraphSource(store, p.subgraph)
    picked: dict[str, Question] = {}  # each run's questions: samples of different sizes are not prefixes of each other
    for cfg in TRAIN[dataset].values():
        train_qs, val_qs = training_questions(dataset, cfg["train_per_hop"], cfg["val_per_hop"], seed=0)
        picked.update((q.id, q) for q in train_qs + val_qs)
    groups = test_questions(dataset, per_hop, seed=0)
    todo = list(picked.values()) + [q for qs in groups.values() for q in qs]
    t0 = time.perf_counter()
    for i, q in enumerate(todo):
        source.for_question(q)
        if i % 500 == 0:
            print(f"  G_q {i}/{len(todo)} ({source.fetched} fetched, {source.hits} cached) {time.perf_counter() - t0:.0f} s",
                  flush=True)
    fetch_s = time.perf_counter() - t0
    ceiling: dict[str, bool] = {}
    for name, qs in groups.items():
        res = reachability(store, [q for q in qs if q.answers], k=None, default_k=2)
        for qid, r in res.items():
            ceiling[qid] = bool(r.reachable_cvt if r.reachable_cvt is not None else r.reachable)
    state = load_state()
    state.setdefault(dataset, {}).update({
        "graph_version": source.graph_version, "subgraph": p.subgraph.__dict__, "ceiling": ceiling,
        "prepared": {"questions": len(todo), "fetched": source.fetched, "seconds": fetch_s}})
    save_state(state)
    print(f"prepared {dataset}: graph {source.graph_version}, {len(todo)} questions, "
          f"{source.fetched} G_q fetched in {fetch_s:.0f} s")


# -- train ---------------------------------------------------------------------------------------------
def run_configs(dataset: str, kind: str, seed: int = 0) -> tuple[dict[str, Any], Any, Any, dict[str, Any]]:
    """(the state of ``dataset``, the model and training settings of run ``TRAIN[dataset][kind]``, its settings)."""
    from sgr.methods.scr.model import SCRConfig
    from sgr.methods.scr.train import ScrTrainConfig

    info = load_state().get(dataset)
    if not info:
        raise SystemExit(f"run `python bench/scr.py prepare --dataset {dataset}` first")
    cfg = TRAIN[dataset][kind]
    mcfg = SCRConfig(encoder=cfg["encoder"], single_step=kind == "single-step",
                     trainable_layers=cfg["trainable_layers"])
    tcfg = ScrTrainConfig(epochs=cfg["epochs"], batch_size=cfg["batch_size"], lr_encoder=cfg["lr_encoder"],
                          lr_graph=cfg["lr_graph"], patience=cfg.get("patience", 2), seed=seed, val_batch=16)
    return info, mcfg, tcfg, cfg


def train_run(dataset: str, kind: str, out: Path, seed: int = 0) -> Any:
    """One run of ``TRAIN[dataset][kind]`` into ``out`` on this CPU; :class:`sgr.methods.scr.train` result."""
    from sgr.methods.scr.train import run_training

    info, mcfg, tcfg, cfg = run_configs(dataset, kind, seed)
    if cfg["gpu"]:
        raise SystemExit(f"{dataset}/{kind} trains on a GPU machine: `python bench/scr.py bundle`, then `fold`")
    init = Path(info["models"][cfg["init_from"]]["checkpoint"]) if cfg["init_from"] else None
    return run_training(dataset, store=None, graph_version=info["graph_version"], out_dir=out, model_cfg=mcfg,
                        train_cfg=tcfg, train_per_hop=cfg["train_per_hop"], val_per_hop=cfg["val_per_hop"],
                        device="cpu", threads=2, record_latest=False, supervision=cfg["supervision"],
                        init_from=init, train_subset=cfg["subset"], val_subset=cfg["val_subset"])


def write_bundle(dataset: str, kind: str, bundle: Path, time_budget: float) -> None:
    """The examples and encoder of run ``kind`` as an SCR bundle (:mod:`sgr.methods.scr.bundle`) in ``bundle``."""
    from sgr.methods.scr.bundle import write_for_dataset

    info, mcfg, tcfg, cfg = run_configs(dataset, kind)
    tcfg.time_budget = time_budget
    path = write_for_dataset(dataset, bundle, store=None, graph_version=info["graph_version"], model_cfg=mcfg,
                             train_cfg=tcfg, train_per_hop=cfg["train_per_hop"], val_per_hop=cfg["val_per_hop"],
                             supervision=cfg["supervision"], train_subset=cfg["subset"], val_subset=cfg["val_subset"])
    print(f"{dataset}/{kind}: bundle {path}")


def fold_bundle(dataset: str, kind: str, bundle: Path, returned: Path) -> None:
    """Fold a bundle run's weights into ``SGR_HOME/scr/bench/DATASET/KIND`` and record the run in the state."""
    from sgr.methods.scr.bundle import fold

    folder = sgr_home() / "scr" / "bench" / dataset / kind
    result, res = fold(bundle, returned, folder)
    state = load_state()
    state[dataset].setdefault("models", {})[kind] = {
        "checkpoint": str(result.best_path), "best_epoch": result.best_epoch, "val_hits1": result.best_hits1,
        "val_hit": result.best_hit, "history": [r.__dict__ for r in result.history], "seconds": res["seconds"]["total"],
        "device": res["device_name"], "config": TRAIN[dataset][kind]}
    save_state(state)
    print(f"{dataset}/{kind}: trained on {res['device_name']}, best epoch {result.best_epoch}, "
          f"val Hits@1 {result.best_hits1:.3f} → {result.best_path}")


def train_models(dataset: str, which: list[str]) -> None:
    torch.set_num_threads(2)
    for kind in which:
        t0 = time.perf_counter()
        res = train_run(dataset, kind, sgr_home() / "scr" / "bench" / dataset / kind)
        state = load_state()
        state[dataset].setdefault("models", {})[kind] = {
            "checkpoint": str(res.best_path), "best_epoch": res.best_epoch, "val_hits1": res.best_hits1,
            "val_hit": res.best_hit, "history": [r.__dict__ for r in res.history],
            "seconds": time.perf_counter() - t0, "config": TRAIN[dataset][kind]}
        save_state(state)
        print(f"{dataset}/{kind}: best epoch {res.best_epoch}, val Hits@1 {res.best_hits1:.3f} → {res.best_path}")


def seed_study(dataset: str, seeds: list[int], per_hop: int, subsample: int | None, fresh: bool = False
               ) -> dict[str, Any]:
    """The served stepwise run (seed 0, ``train``) trained again with other ``seeds``; every model's validation and
    test Hits@1 (the test sample of ``eval``), with the checkpoint's own answer ranking. Writes ``scr_seeds.json``:
    summary ``<group>/seed<N>/hits1_strict`` and ``<group>/hits1_strict_{mean,min,max}`` over the seeds."""
    from sgr.methods.scr.method import SCRAnswerer

    torch.set_num_threads(2)
    info = load_state()[dataset]
    groups = test_questions(dataset, per_hop, seed=0, subsample=subsample)
    ckpts = {0: Path(info["models"]["stepwise"]["checkpoint"])}
    runs: dict[str, Any] = {"0": {"val_hits1": info["models"]["stepwise"]["val_hits1"],
                                  "best_epoch": info["models"]["stepwise"]["best_epoch"]}}
    for seed in seeds:
        t0 = time.perf_counter()
        res = train_run(dataset, "stepwise", sgr_home() / "scr" / "bench-seeds" / dataset / f"seed{seed}", seed=seed)
        ckpts[seed] = res.best_path
        runs[str(seed)] = {"val_hits1": res.best_hits1, "best_epoch": res.best_epoch,
                           "seconds": time.perf_counter() - t0}
        print(f"{dataset} seed {seed}: best epoch {res.best_epoch}, val Hits@1 {res.best_hits1:.3f}", flush=True)
    summary: dict[str, Any] = {}
    for seed, ckpt in ckpts.items():
        ans = SCRAnswerer(store=None, checkpoint=ckpt, device="cpu", graph_version=info["graph_version"], batch_size=32)
        runs[str(seed)]["answer_score"] = ans.answer_score
        for group, qs in groups.items():
            sc = score_group(ans.answer_many(qs), qs)
            name = group_name(dataset, group)
            summary[f"{name}/seed{seed}/hits1_strict"] = sc["hits1_strict"]
            runs[str(seed)][name] = {m: sc[m] for m in ("hits1_strict", "hit", "f1")}
    for group in groups:
        name = group_name(dataset, group)
        vals = [summary[f"{name}/seed{s}/hits1_strict"] for s in ckpts]
        summary |= {f"{name}/hits1_strict_mean": float(np.mean(vals)), f"{name}/hits1_strict_min": min(vals),
                    f"{name}/hits1_strict_max": max(vals)}
    path = RESULTS / "scr_seeds.json"
    old = previous_result(path, fresh=fresh)  # the other dataset's seeds, when written at this commit
    res = {"summary": {**{k: v for k, v in old.get("summary", {}).items() if not k.startswith(dataset)}, **summary},
           "runs": {**old.get("runs", {}), dataset: runs},
           "setup": {**old.get("setup", {}), dataset: {"per_hop": per_hop, "subsample": subsample,
                                                        "config": TRAIN[dataset]["stepwise"], "device": "cpu"}}}
    write_result(path, res, continues=old)
    for k, v in summary.items():
        print(f"{k:40s} {v:.3f}")
    return res


def register(dataset: str, kind: str, folder: Path) -> None:
    """Record a run that ``train`` finished in ``folder`` (best.pt + history.json) under ``kind``."""
    hist = json.loads((folder / "history.json").read_text())
    state = load_state()
    best = max(hist["history"], key=lambda r: (r["val_hits1"], r["val_hit"]))
    state[dataset].setdefault("models", {})[kind] = {
        "checkpoint": str(folder / "best.pt"), "best_epoch": best["epoch"], "val_hits1": best["val_hits1"],
        "val_hit": best["val_hit"], "history": hist["history"],
        "seconds": sum(r["train_seconds"] + r["val_seconds"] for r in hist["history"]), "config": TRAIN[dataset][kind]}
    save_state(state)


# -- eval ----------------------------------------------------------------------------------------------
def path_match(pred: Prediction, q: Question) -> bool:
    """Some retrieved path follows a gold relation path (MetaQA: with its directions; WebQSP: relation names)."""
    gold_dirs = q.extra.get("gold_directions") or []
    for rp in pred.paths:
        for gi, gold in enumerate(q.gold_paths):
            if rp.relations != gold:
                continue
            if gi < len(gold_dirs) and gold_dirs[gi] and rp.directions != gold_dirs[gi]:
                continue
            return True
    return False


def group_name(dataset: str, group: str) -> str:
    """The results' name of a test group: ``metaqa-2hop``, ``webqsp``."""
    return f"metaqa-{group}" if dataset == "metaqa" else dataset


#: bench labels of ``scr`` with the paper's answer ranking (eq. 13: Σ_p P(a, p | q)) whatever the checkpoint chose
#: on validation (:func:`sgr.methods.scr.train.choose_answer_score`)
SUM_RANKED = {"scr-sum": "scr"}
#: bench labels of ``scr`` with another question-encoder precision than ``auto`` (side-by-side latency)
PRECISION = {"scr-bf16": "bf16"}


def model_kind(method: str) -> str:
    """The training run whose model serves ``method`` (``scr@KIND`` names it)."""
    base, _, kind = method.partition("@")
    return kind or ("single-step" if base == "scr-single-step" else "stepwise")


def lacks_named_model(info: dict[str, Any], method: str) -> bool:
    """``scr@KIND`` whose run KIND this dataset never trained (skipped; a missing default model is an error)."""
    return "@" in method and model_kind(method) not in info.get("models", {})


def make_answerer(dataset: str, info: dict[str, Any], method: str, llm: Any = None) -> Any:
    """The method's answerer; ``scr@KIND`` is ``scr`` with the model of training run KIND (e.g.
    ``stepwise-shortest``); ``scr-sum`` is ``scr`` ranking answers by eq. 13."""
    from sgr.methods.scr.method import SCRAnswerer

    models = info.get("models", {})
    kind = model_kind(method)
    method = method.partition("@")[0]
    if kind not in models:
        raise SystemExit(f"no {kind} model for {dataset}: run `python bench/scr.py train --dataset {dataset}`")
    return SCRAnswerer(store=None, checkpoint=Path(models[kind]["checkpoint"]),
                       name="scr" if method in SUM_RANKED or method in PRECISION else method,
                       beam_size=1 if method == "scr-greedy" else 10, single_step=kind == "single-step",
                       llm=llm, device="cpu", graph_version=info["graph_version"], batch_size=32,
                       precision=PRECISION.get(method, "auto"),
                       answer_score="sum" if method in SUM_RANKED else None)  # None: the checkpoint's choice


def score_group(preds: list[Prediction], qs: list[Question]) -> dict[str, Any]:
    by_id = {p.question_id: p for p in preds}
    rows = [score_answers(by_id[q.id].answer_texts, q.answers) for q in qs]
    out: dict[str, Any] = {"n": len(qs)}
    for m in ("hits1_strict", "hit", "f1", "precision", "recall"):
        out[m] = float(np.mean([getattr(r, m) for r in rows])) if rows else 0.0
    with_gold = [q for q in qs if q.gold_paths]
    out["path_recall"] = (float(np.mean([path_match(by_id[q.id], q) for q in with_gold])) if with_gold else None)
    out["path_recall_n"] = len(with_gold)
    out["paths_median"] = float(np.median([len(by_id[q.id].paths) for q in qs])) if qs else 0.0
    out["llm_calls_median"] = float(np.median([by_id[q.id].usage.llm_calls for q in qs])) if qs else 0.0
    out["prompt_tokens_median"] = float(np.median([by_id[q.id].usage.prompt_tokens for q in qs])) if qs else 0.0
    return out


def latency(answerer: Any, qs: list[Question]) -> dict[str, float]:
    """Per-question wall time, one question at a time (G_q from the cache, entity embeddings precomputed).

    ``retrieval`` = GNN + beam search (the paper's retrieval time: KG query excluded);
    ``total`` adds reading G_q from the on-disk cache; ``cpu`` = this process's CPU time for the whole question
    (the quiet-machine estimate when other jobs share the cores); ``load`` = the 1-minute load average around it.
    The G_q node-state cache is emptied before each question, so every figure includes the GNN.
    """
    answerer.answer_many(qs[:3])  # warm-up: model, tokenizer, first allocations
    ret, tot, cpu = [], [], []
    load0 = os.getloadavg()[0]
    for q in qs:
        answerer.model._node_states.clear()  # a new question's G_q: time the GNN too
        c0 = time.process_time()
        t0 = time.perf_counter()
        pred = answerer.answer(q)
        tot.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        ret.append(pred.usage.stage_seconds.get("retrieval", 0.0) * 1000)
    return {"n": len(qs), "p50_ms": percentile(ret, 50), "p95_ms": percentile(ret, 95),
            "total_p50_ms": percentile(tot, 50), "total_p95_ms": percentile(tot, 95),
            "cpu_p50_ms": percentile(cpu, 50), "cpu_p95_ms": percentile(cpu, 95),
            "load_average": [load0, os.getloadavg()[0]]}


def evaluate(per_hop: int, latency_n: int, llm_n: int, methods: list[str], subsample: int | None = None,
             latency_threads: int = 1) -> dict[str, Any]:
    torch.set_num_threads(2)
    state = load_state()
    summary: dict[str, Any] = {}
    details: dict[str, Any] = {}
    used_precision: dict[str, str] = {}
    llm = None
    if llm_n > 0:
        try:
            from sgr.llm.client import LLM

            llm = LLM.from_settings()
        except Exception as exc:  # no LLM reachable: scr+llm is skipped and the report says so
            details["llm_skipped"] = str(exc)
    for dataset in DATASETS:
        info = state.get(dataset)
        if not info or "models" not in info:
            details.setdefault("skipped", []).append(dataset)
            continue
        groups = test_questions(dataset, per_hop, seed=0, subsample=subsample)
        p = preset(dataset)
        source = SubgraphSource(None, p.subgraph, info["graph_version"])
        for group, qs in groups.items():
            name = group_name(dataset, group)
            ceil = [info["ceiling"].get(q.id, False) for q in qs]
            summary[f"{name}/ceiling"] = float(np.mean(ceil)) if ceil else 0.0
            in_gq = []
            for q in qs:
                sg = source.for_question(q)
                in_gq.append(reachable(sg, sg.find(q.answers), p.max_steps))
            details[name] = {"n": len(qs), "ceiling": summary[f"{name}/ceiling"],
                             "gq_ceiling": float(np.mean(in_gq)) if in_gq else 0.0, "methods": {}}
        for method in methods:
            if lacks_named_model(info, method):
                continue  # a training run only some datasets have (scr@stepwise-gold: MetaQA)
            ans = make_answerer(dataset, info, method)
            used_precision[f"{dataset}/{method}"] = ans.encoder_precision
            for group, qs in groups.items():
                name = group_name(dataset, group)
                t0 = time.perf_counter()
                preds = ans.answer_many(qs)
                wall = time.perf_counter() - t0
                sc = score_group(preds, qs)
                sc["batched_seconds_per_question"] = wall / max(len(qs), 1)
                lat_qs = qs[:latency_n]
                torch.set_num_threads(latency_threads)
                sc["latency"] = latency(ans, lat_qs) if latency_n else {}
                torch.set_num_threads(2)
                details[name]["methods"][method] = sc
                for m in ("hits1_strict", "hit", "f1", "llm_calls_median", "prompt_tokens_median"):
                    summary[f"{name}/{method}/{m}"] = sc[m]
                if sc["latency"]:
                    summary[f"{name}/{method}/p50_ms"] = sc["latency"]["p50_ms"]
                    summary[f"{name}/{method}/cpu_p50_ms"] = sc["latency"]["cpu_p50_ms"]
                if method == "scr" or method.startswith("scr@"):
                    summary[f"{name}/{method}/path_recall"] = sc["path_recall"]
                print(f"{name:12s} {method:16s} Hits@1 {sc['hits1_strict']:.3f} Hit {sc['hit']:.3f} "
                      f"F1 {sc['f1']:.3f} path-recall {sc['path_recall']} p50 {sc['latency'].get('p50_ms', 0):.0f} ms",
                      flush=True)
        if llm is not None:
            llm_rows(dataset, info, groups, llm, llm_n, summary, details)
    training = {ds: {kind: {k: v for k, v in m.items() if k != "config"} | {"config": m.get("config")}
                     for kind, m in state[ds].get("models", {}).items()} for ds in DATASETS if ds in state}
    for ds, models in training.items():  # the served model's training time per epoch (median over its epochs)
        hist = models.get("stepwise", {}).get("history") or []
        if hist:
            summary[f"{ds}/scr/train_epoch_seconds_cpu"] = round(statistics.median(h["train_seconds"] for h in hist), 1)
        for kind, m in models.items():  # the runs trained on a GPU machine (bundle): per epoch there
            if m.get("device", "cpu") != "cpu" and m.get("history"):
                whole = [h["train_seconds"] for h in m["history"] if h.get("complete", True)]
                if whole:
                    summary[f"{ds}/scr@{kind}/train_epoch_seconds_gpu"] = round(statistics.median(whole), 1)
    return {"summary": summary, "details": details, "training": training,
            "setup": {"per_hop": per_hop, "subsample": subsample, "seed": 0, "latency_n": latency_n,
                      "latency_threads": latency_threads, "llm_n": llm_n,
                      "device": "cpu", "torch_threads": torch.get_num_threads(),
                      "gpu": sorted({m["device"] for ms in training.values() for m in ms.values()
                                     if m.get("device")}) or "none",
                      "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared)",
                      "load_average": os.getloadavg(),
                      "encoder": {f"{ds}/{kind}": TRAIN[ds][kind]["encoder"] for ds in training for kind in training[ds]},
                      "encoder_precision": {k: f"{PRECISION.get(k.partition('/')[2], 'auto')} = {v}"
                                            for k, v in used_precision.items()},
                      "graphs": {ds: state[ds]["graph_version"] for ds in DATASETS if ds in state}}}


def llm_rows(dataset: str, info: dict[str, Any], groups: dict[str, list[Question]], llm: Any, llm_n: int,
             summary: dict[str, Any], details: dict[str, Any]) -> None:
    """``scr+llm`` on the first ``llm_n`` questions of each group (the stepwise model's paths, the paper's prompt)."""
    ans = make_answerer(dataset, info, "scr+llm", llm=llm)
    for group, qs in groups.items():
        name = group_name(dataset, group)
        sub = qs[:llm_n]
        preds = ans.answer_many(sub)
        sc = score_group(preds, sub)
        details[name]["methods"]["scr+llm"] = sc
        for m in ("hits1_strict", "hit", "f1", "llm_calls_median", "prompt_tokens_median"):
            summary[f"{name}/scr+llm/{m}"] = sc[m]
        print(f"{name:12s} scr+llm (n={len(sub)}) Hits@1 {sc['hits1_strict']:.3f} Hit {sc['hit']:.3f} "
              f"F1 {sc['f1']:.3f} prompt tokens {sc['prompt_tokens_median']:.0f}", flush=True)


def _same_run() -> dict[str, Any]:
    """``scr.json`` to add to: only a file written at this commit (one file holds one run)."""
    res = previous_result(RESULTS / "scr.json")
    if not res:
        raise SystemExit(f"{RESULTS / 'scr.json'}: no evaluation to add to; run `bench/scr.py eval` first")
    return res


def add_llm(llm_n: int, per_hop: int = 1000, subsample: int | None = None) -> dict[str, Any]:
    """Add ``scr+llm`` rows to an existing ``scr.json`` (needs a reachable LLM)."""
    from sgr.llm.client import LLM

    res = _same_run()
    llm = LLM.from_settings()
    state = load_state()
    for dataset in DATASETS:
        info = state.get(dataset)
        if info and "models" in info:
            groups = test_questions(dataset, per_hop, seed=0, subsample=subsample)
            llm_rows(dataset, info, groups, llm, llm_n, res["summary"], res["details"])
    res["setup"]["llm_n"] = llm_n
    return res


def remeasure_latency(latency_n: int, methods: list[str], latency_threads: int = 1, per_hop: int = 1000,
                      subsample: int | None = None) -> dict[str, Any]:
    """Time one question at a time again (quality figures of ``scr.json`` kept), e.g. once the machine is quiet."""
    res = _same_run()
    state = load_state()
    torch.set_num_threads(latency_threads)
    for dataset in DATASETS:
        info = state.get(dataset)
        if not info or "models" not in info:
            continue
        groups = test_questions(dataset, per_hop, seed=0, subsample=subsample)
        for method in methods:
            if lacks_named_model(info, method):
                continue
            ans = make_answerer(dataset, info, method)
            for group, qs in groups.items():
                name = group_name(dataset, group)
                sc = res["details"].get(name, {}).get("methods", {}).get(method)
                if sc is None:
                    continue
                sc["latency"] = latency(ans, qs[:latency_n])
                res["summary"][f"{name}/{method}/p50_ms"] = sc["latency"]["p50_ms"]
                res["summary"][f"{name}/{method}/cpu_p50_ms"] = sc["latency"]["cpu_p50_ms"]
                print(f"{name:12s} {method:16s} p50 {sc['latency']['p50_ms']:.0f} ms p95 {sc['latency']['p95_ms']:.0f} ms "
                      f"(CPU time p50 {sc['latency']['cpu_p50_ms']:.0f} ms, load {sc['latency']['load_average']})",
                      flush=True)
    res["setup"]["latency_load_average"] = os.getloadavg()
    res["setup"]["latency_remeasured"] = True
    return res


def write_markdown(res: dict[str, Any]) -> str:
    d = res["details"]
    lines = ["# SCR benchmark (CPU)", "",
             f"Device: CPU only ({res['setup']['machine']}, torch threads {res['setup']['torch_threads']}); "
             "GPU figures were **not measured** in this session (no GPU was lent).", ""]
    header = "| dataset | n | ceiling | method | Hits@1 (strict) | Hits@1 / ceiling | Hit@K | F1 | path recall | p50 ms | p95 ms |"
    lines += [header, "|" + "---|" * 11]
    for name, info in d.items():
        if not isinstance(info, dict) or "methods" not in info:
            continue
        for method, sc in info["methods"].items():
            ratio = sc["hits1_strict"] / info["ceiling"] if info["ceiling"] else 0.0
            lat = sc.get("latency") or {}
            pr = "" if sc.get("path_recall") is None else f"{sc['path_recall']:.3f}"
            lines.append(f"| {name} | {sc['n']} | {info['ceiling']:.3f} | {method} | {sc['hits1_strict']:.3f} | "
                         f"{ratio:.3f} | {sc['hit']:.3f} | {sc['f1']:.3f} | {pr} | "
                         f"{lat.get('p50_ms', 0):.0f} | {lat.get('p95_ms', 0):.0f} |")
    lines += ["", "## Training", "",
              "| dataset | model | device | epochs run | best epoch | val Hits@1 | train s / epoch |",
              "|---|---|---|---|---|---|---|"]
    for ds, models in res.get("training", {}).items():
        for kind, m in models.items():
            hist = m.get("history", [])
            per_epoch = statistics.median([h["train_seconds"] for h in hist]) if hist else 0.0
            lines.append(f"| {ds} | {kind} | {m.get('device', 'cpu')} | {len(hist)} | {m.get('best_epoch')} | "
                         f"{m.get('val_hits1', 0):.3f} | "
                         f"{per_epoch:.0f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="stage", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--dataset", choices=DATASETS, required=True)
    p.add_argument("--load", action="store_true", help="empty the store and load the dataset's graph first")
    p.add_argument("--per-hop", type=int, default=1000)
    t = sub.add_parser("train")
    t.add_argument("--dataset", choices=DATASETS, required=True)
    t.add_argument("--only", default=None, help="one run of TRAIN[dataset] (default: all, in order)")
    r = sub.add_parser("register", help="record a finished run folder (best.pt, history.json) in the state")
    r.add_argument("--dataset", choices=DATASETS, required=True)
    r.add_argument("--kind", required=True)
    r.add_argument("folder", type=Path)
    b = sub.add_parser("bundle", help="write a GPU run's bundle (sgr.methods.scr.bundle) into FOLDER")
    b.add_argument("--dataset", choices=DATASETS, required=True)
    b.add_argument("--kind", required=True)
    b.add_argument("--time-budget", type=float, default=0.0, help="seconds the run may take there (0: none)")
    b.add_argument("folder", type=Path)
    f = sub.add_parser("fold", help="fold what a bundle run returned and record it in the state")
    f.add_argument("--dataset", choices=DATASETS, required=True)
    f.add_argument("--kind", required=True)
    f.add_argument("bundle", type=Path)
    f.add_argument("returned", type=Path)
    sd = sub.add_parser("seeds", help="train the served stepwise run with other seeds; scr_seeds.json")
    sd.add_argument("--dataset", choices=DATASETS, required=True)
    sd.add_argument("--seeds", default="1,2")
    sd.add_argument("--per-hop", type=int, default=1000)
    sd.add_argument("--subsample", type=int, default=300)
    sd.add_argument("--fresh", action="store_true", help="start scr_seeds.json afresh (needed when it holds a run "
                    "of another commit: one file holds one run)")
    e = sub.add_parser("eval")
    e.add_argument("--per-hop", type=int, default=1000)
    e.add_argument("--latency-n", type=int, default=100)
    e.add_argument("--llm-n", type=int, default=0)
    e.add_argument("--methods", default="scr,scr-bf16,scr-sum,scr-greedy,scr-single-step,scr@stepwise-shortest")
    e.add_argument("--subsample", type=int, default=None, help="keep N of each test group (seeded)")
    e.add_argument("--latency-threads", type=int, default=1, help="torch threads while timing one question")
    e.add_argument("--latency-only", action="store_true", help="only time questions again; keep scr.json's scores")
    e.add_argument("--add-llm", action="store_true", help="only add scr+llm (--llm-n questions per group) to scr.json")
    args = ap.parse_args()
    if args.stage == "prepare":
        prepare(args.dataset, args.load, args.per_hop)
    elif args.stage == "train":
        train_models(args.dataset, [args.only] if args.only else
                     [k for k, c in TRAIN[args.dataset].items() if not c["gpu"]])
    elif args.stage == "bundle":
        write_bundle(args.dataset, args.kind, args.folder, args.time_budget)
    elif args.stage == "fold":
        fold_bundle(args.dataset, args.kind, args.bundle, args.returned)
    elif args.stage == "seeds":
        seed_study(args.dataset, [int(x) for x in args.seeds.split(",")], args.per_hop, args.subsample, args.fresh)
    elif args.stage == "register":
        register(args.dataset, args.kind, args.folder)
    else:
        continued: dict[str, Any] | None = None
        if args.add_llm:
            res = continued = add_llm(args.llm_n, args.per_hop, args.subsample)
        elif args.latency_only:
            res = continued = remeasure_latency(args.latency_n, args.methods.split(","), args.latency_threads,
                                                args.per_hop, args.subsample)
        else:  # a full evaluation is a run of its own: nothing of an earlier file is carried
            res = evaluate(args.per_hop, args.latency_n, args.llm_n, args.methods.split(","), args.subsample,
                           args.latency_threads)
        write_result(RESULTS / "scr.json", res, continues=continued)
        md = write_markdown(res)
        (RESULTS / "scr.md").write_text(md)
        print(md)


if __name__ == "__main__":
    main()
