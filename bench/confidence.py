"""Calibrated confidence and abstention (:mod:`sgr.methods.confidence`): fit on dev, measure, and the unanswerable set.

1. **Dev runs** of the method (default ``sgr`` with the served model): ``--cwq-dev`` CWQ dev questions (default
   all 1,180; seed 0), ``--metaqa-dev`` MetaQA dev questions per hop (seed 1) and the answerable part of
   ``--webqsp-train`` WebQSP train questions (seed 3; topics and answers derived from their gold relation paths,
   :func:`dev_questions.webqsp_train_answerable`: WebQSP's own kind of question, which CWQ's compositions are not),
   through ``sgr eval`` (resumable,
   LLM calls cached). Every run links the question from its text (``given_topics=false``), as ``sgr ask`` does
   without ``--topic``, so the linking signals mean at fitting what they mean when a user asks. Each prediction stores its signals (``extra.confidence.signals``), so fitting needs no second
   pass; those its record determines (SGR's evidence signals,
   :func:`sgr.methods.sgr.trace.recorded_signals`) are recomputed from it by the code in use, so adding one needs no
   second run of the questions.
2. **Fit**: the calibrator of (method, model) on those dev predictions and the unanswerable set's (step 4: dev
   questions whose answers were taken out of the graph, so any answer there is wrong) — the scorer on all of them
   (``--scorer``: boosted trees with :data:`sgr.methods.confidence.TREE_PARAMS`, the default, or logistic weights),
   the isotonic map and the abstention threshold (the confidence that keeps ``--keep-correct`` of the correct
   answers) on the real dev questions' out-of-fold scores (not the unanswerable rows, :func:`fit`), folds split by
   CWQ base question — written to ``sgr/assets/calibration.json``. The dev figures are cross-fitted (each half,
   split the same way, scored by a calibrator fitted on the other), so they are not in-sample.
   ``--signals compact`` reads :data:`sgr.methods.confidence.COMPACT_SIGNALS` only (for a small dev set; else the
   method's own, :func:`sgr.methods.confidence.method_signals`); the
   logistic part's L2 strength C is the best of :data:`C_GRID` by grouped 5-fold AUROC within each dataset on the
   rows being fitted (``--c cv``, the default; each cross-fitted half chooses its own). ``--extra-dev DIR`` pools
   more finished dev runs of the same method and model into the fit (reported as ``extra-dev``); ``--stored --model
   NAME`` fits and reports from the run folders ``--runs-dir`` already holds, without a store or a served model.
3. **Report**: CWQ dev and MetaQA dev from the dev runs, cross-fitted; WebQSP (``--webqsp-sample`` of the test set:
   report only) and MetaQA test (``--metaqa`` per hop), scored with the fitted calibrator from their stored
   signals.
4. **Unanswerable**: ``--unanswerable`` CWQ dev questions of a pool of 200 (seed 2), asked against a store loaded
   with the WebQSP slice and CWQ dev graphs *without* any triple that touches a gold answer of the pool (built from
   the dev data here, loaded into ``--unanswerable-uri``, which must be empty or hold only this set); the right output
   is "not found in the graph". ``unanswerable/abstain_rate`` = share that abstain at the default threshold (or give
   no answer); ``answerable/kept_correct_rate`` = of the same questions answered correctly on the full store (the dev
   run's predictions, each scored by the calibrator fitted without its half; a run of their own when the dev run
   lacks some, except with ``--stored``, which keeps those the dev run asked), the share the threshold keeps.
   The same for WebQSP's own kind of question: the first ``--unanswerable-webqsp`` questions of the WebQSP train dev
   file against a store (``--unanswerable-webqsp-uri``, empty or holding only this set) without any triple touching
   their derived answers (``unanswerable-webqsp-train/abstain_rate``, ``answerable-webqsp-train/kept_correct_rate``);
   both pools' answered questions are fitted on with label 0.

    python bench/confidence.py --webqsp-uri bolt://… --metaqa-uri bolt://… --unanswerable-uri bolt://… \
        --unanswerable-webqsp-uri bolt://…

Writes ``bench/results/confidence.json``: summary ``<dataset>/auroc``, ``<dataset>/ece``,
``<dataset>/hits1_at_80_coverage``, ``<dataset>/coverage_at_default_threshold`` for cwq-dev, webqsp, metaqa (and
per hop), ``unanswerable/abstain_rate``, ``answerable/kept_correct_rate``, the threshold.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from record import RESULTS, write_result  # noqa: E402
from sgr.core.config import sgr_home  # noqa: E402
from sgr.core.errors import LLMError  # noqa: E402
from sgr.datasets import shared_data_dir  # noqa: E402
from sgr.core.logistic import LogisticScorer  # noqa: E402
from sgr.evaluation.metrics.calibration import auroc, calibration_summary  # noqa: E402
from sgr.evaluation.predictions import read_predictions  # noqa: E402
from sgr.evaluation.runner import RunConfig, run_eval  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.methods.confidence import (COMPACT_SIGNALS, SIGNALS, TREE_PARAMS, Calibrator, calibration_key,  # noqa: E402
                                    fit_calibrator, method_signals, save_calibrators)
from sgr.methods.sgr.config import NEEDS_LLM, SGRConfig  # noqa: E402
from sgr.methods.sgr.trace import recorded_signals  # noqa: E402


#: the methods whose answers come from the served model, so that their calibrator is that model's
MODEL_METHODS = NEEDS_LLM | {"rcr", "rcr-ks0", "rcr-ks2"}


def model_name(method: str) -> str | None:
    if method not in MODEL_METHODS:
        return None
    from sgr.llm.client import shared_llm

    try:
        return shared_llm().name
    except LLMError:
        raise SystemExit(f"{method} needs the model it is calibrated for: start it (`sgr llm serve`)") from None


def run(dataset: str, method: str, out: Path, uri: str | None, *, split: str | None = None, sample: int | None = None,
        seed: int = 0, options: dict[str, Any] | None = None) -> dict[str, dict]:
    """The predictions of ``method`` on these questions, asked against ``uri`` (resuming the run in ``out``); with
    ``uri`` None, those ``out`` already holds (``--stored``)."""
    if uri is None:
        return stored_run(out)
    cfg = RunConfig(dataset=dataset, method=method, out=out, split=split, sample=sample, seed=seed, hops=2,
                    options=dict(options or {}))
    res = run_eval(cfg, store_factory=lambda: GraphStore(uri), progress=sys.stderr.isatty())
    if res.interrupted:
        raise SystemExit("interrupted; rerun to resume")
    return read_predictions(res.run_dir / "predictions.jsonl")


def stored_run(folder: Path) -> dict[str, dict]:
    """The predictions a finished run folder holds."""
    path = folder / "predictions.jsonl"
    if not path.is_file() or not path.stat().st_size:
        raise SystemExit(f"{folder}: no stored predictions (run without --stored to ask the questions)")
    return read_predictions(path)


def stored_signals(p: dict) -> dict[str, float] | None:
    """The signals a prediction recorded, with those computed from its record (:func:`recorded_signals`: SGR's
    evidence signals, read from its decision inputs) recomputed by the code in use; None when it recorded none."""
    sig = ((p.get("extra") or {}).get("confidence") or {}).get("signals")
    if sig is None or not (p.get("extra") or {}).get("decision"):
        return sig
    cfg = SGRConfig()
    return {**sig, **recorded_signals(p, cfg.lam, cfg.mu)}


def labelled(preds: dict[str, dict]) -> list[tuple[str, dict[str, float], float]]:
    """(question id, signals, strict Hits@1) of each scored prediction."""
    out = []
    for qid, p in preds.items():
        if p.get("scores") is None:
            continue
        sig = stored_signals(p)
        if sig is None:
            continue
        out.append((qid, sig, float(p["scores"]["hits1_strict"])))
    return out


def group(qid: str) -> str:
    """The unit a split keeps together: a CWQ question's WebQSP base (``WebQTrn-12_…``), else the question (MetaQA's
    ``1hop_dev:26`` is one question, not its hop); an unanswerable set's row goes with its question."""
    qid = qid.removesuffix(UNANSWERABLE_TAG)
    return qid.split("_")[0] if qid.startswith("WebQ") else qid


def dataset_of(qid: str) -> str:
    """Which dev set a question id is from: CWQ (``WebQTrn-12_…``), WebQSP train (``WebQTrn-12``) or MetaQA."""
    if qid.startswith("WebQ"):
        return "cwq" if "_" in qid else "webqsp-train"
    return "metaqa"


def folds(rows: list, k: int, seed: int) -> list[int]:
    """The fold (0 … k−1) of each row, whole groups (:func:`group`) to a fold, in a seeded order."""
    groups = sorted({group(r[0]) for r in rows})
    random.Random(seed).shuffle(groups)
    fold = {g: i % k for i, g in enumerate(groups)}
    return [fold[group(r[0])] for r in rows]


def halves(rows: list, seed: int = 0) -> tuple[list, list]:
    """The rows in two halves, whole groups to a half (:func:`folds` with two folds)."""
    fold = folds(rows, 2, seed)
    return [r for r, f in zip(rows, fold) if f == 0], [r for r, f in zip(rows, fold) if f == 1]


#: What marks an unanswerable set's row (its question asked against a store without its answers) in a row id
UNANSWERABLE_TAG = "#unanswerable"


def fit(rows: list, keep: float, prov: dict[str, Any], signals: tuple[str, ...] = SIGNALS, c: float = 1.0,
        k: int = 5, trees: dict[str, Any] | None = None) -> Calibrator:
    """Logistic weights on all ``rows``, the isotonic map and threshold on the real dev questions' out-of-fold scores
    (grouped ``k`` folds, :func:`folds`): the unanswerable sets teach the ranking what "the graph cannot answer" looks
    like, but their share of the rows is the benchmark's choice, so they do not set what a confidence means (with
    them, WebQSP train's ECE was 0.23)."""
    return fit_calibrator([s for _, s, _ in rows], [int(y) for _, _, y in rows], folds(rows, k, 0),
                          iso=[not q.endswith(UNANSWERABLE_TAG) for q, _, _ in rows], c=c, trees=trees,
                          keep_correct=keep,
                          signals=signals, provenance=prov)


#: the calibrator's L2 strengths ``choose_c`` tries
C_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)


def cv_auroc(rows: list, signals: tuple[str, ...], c: float, k: int = 5, seeds: tuple[int, ...] = (0, 1, 2)) -> float:
    """The logistic part's grouped ``k``-fold AUROC on ``rows``, within each dataset (:func:`dataset_of`: CWQ with
    the unanswerable set, WebQSP train, MetaQA: what one dataset's answers need is a ranking among them, not between
    datasets), averaged over the datasets and ``seeds``."""
    labels = [int(y) for _, _, y in rows]
    part = [dataset_of(q) for q, _, _ in rows]
    found = []
    for seed in seeds:
        fold = folds(rows, k, seed)
        raw = [0.0] * len(rows)
        for i in range(k):
            train = [j for j in range(len(rows)) if fold[j] != i]
            if len({labels[j] for j in train}) < 2:
                continue
            sc = LogisticScorer.fit(signals, [rows[j][1] for j in train], [labels[j] for j in train], c=c)
            for j in range(len(rows)):
                if fold[j] == i:
                    raw[j] = sc.score(rows[j][1])
        for name in sorted(set(part)):
            a = auroc([(raw[j], labels[j]) for j in range(len(rows)) if part[j] == name])
            if a is not None:
                found.append(a)
    return float(np.mean(found)) if found else 0.5


def choose_c(rows: list, signals: tuple[str, ...], grid: tuple[float, ...] = C_GRID) -> tuple[float, dict[str, float]]:
    """The L2 strength of :data:`C_GRID` with the best :func:`cv_auroc` on the dev rows (the smallest C among
    ties: the simpler fit), and each one's figure."""
    scores = {str(c): round(cv_auroc(rows, signals, c), 4) for c in grid}
    best = max(scores.values())
    return min(c for c in grid if scores[str(c)] == best), scores


def figures(cal_of, rows: list, prefix: str, summary: dict[str, float]) -> dict[str, Any]:  # noqa: ANN001
    """The summary keys of one dataset, each row scored by ``cal_of(question id)``."""
    pairs, kept = [], 0
    for qid, sig, y in rows:
        cal = cal_of(qid)
        p = cal.probability(sig) if sig.get("answered") else 0.0
        pairs.append((p, y))
        kept += p >= cal.threshold
    cs = calibration_summary(pairs)
    summary[f"{prefix}/auroc"] = round(cs.auroc, 4) if cs.auroc is not None else None
    summary[f"{prefix}/ece"] = round(cs.ece, 4) if cs.ece is not None else None
    summary[f"{prefix}/hits1_at_80_coverage"] = round(cs.hits1_at_coverage["80%"], 4)
    summary[f"{prefix}/hits1_at_50_coverage"] = round(cs.hits1_at_coverage["50%"], 4)
    summary[f"{prefix}/hits1"] = round(cs.hits1_at_coverage["100%"], 4)
    summary[f"{prefix}/coverage_at_default_threshold"] = round(kept / len(rows), 4) if rows else None
    summary[f"{prefix}/questions"] = len(rows)
    return cs.as_dict()


#: The unanswerable set: these many CWQ dev questions (seed 2); the store holds no triple touching their answers,
#: whichever ``--unanswerable`` of them a run asks (so runs of several methods share one store)
UNANSWERABLE_POOL = 200


def unanswerable_files(n: int, folder: Path) -> tuple[Path, list[Path]]:
    """The first ``n`` questions of the unanswerable pool (a dataset file) and the two graph files without any
    triple touching an answer of the pool."""
    data = shared_data_dir()
    cwq = [json.loads(line) for line in open(data / "cwq" / "cwq_dev.jsonl", encoding="utf-8")]
    pool = [cwq[i] for i in random.Random(2).sample(range(len(cwq)), UNANSWERABLE_POOL)]
    gone = {a for r in pool for a in r["answer"]} | {a for r in pool for a in r.get("a_entity") or []}
    folder.mkdir(parents=True, exist_ok=True)
    questions = folder / f"cwq_dev_unanswerable_questions_{n}.jsonl"
    questions.write_text("".join(json.dumps({**r, "graph": []}) + "\n" for r in pool[:n]), encoding="utf-8")
    return questions, graphs_without(gone, folder, "without_answers")


def graphs_without(gone: set[str], folder: Path, suffix: str) -> list[Path]:
    """The WebQSP slice and CWQ dev graph files without any triple that touches a node of ``gone``."""
    data = shared_data_dir()
    graphs = []
    for src in (data / "webqsp" / "webqsp_mini.jsonl", data / "cwq" / "cwq_dev.jsonl"):
        out = folder / f"{src.stem}_{suffix}.jsonl"
        with open(src, encoding="utf-8") as fh, open(out, "w", encoding="utf-8") as w:
            for line in fh:
                r = json.loads(line)
                r["graph"] = [t for t in r["graph"] if t[0] not in gone and t[2] not in gone]
                w.write(json.dumps(r) + "\n")
        graphs.append(out)
    return graphs


def webqsp_unanswerable_files(answerable: Path, n: int, folder: Path) -> tuple[Path, list[Path]]:
    """The first ``n`` questions of the WebQSP train dev file (:func:`webqsp_train_file`) and the graph files
    without any triple touching one of their (derived) answers: the graph cannot answer WebQSP's own kind of
    question, where the CWQ pool's are compositions and conjunctions."""
    pool = [json.loads(line) for line in open(answerable, encoding="utf-8")][:n]
    folder.mkdir(parents=True, exist_ok=True)
    questions = folder / f"webqsp_train_unanswerable_questions_{n}.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in pool), encoding="utf-8")
    return questions, graphs_without({a for r in pool for a in r["answer"]}, folder, f"without_webqsp_train_{n}")


def webqsp_train_file(uri: str, n: int, out: Path) -> None:
    """The answerable part of a seeded sample of ``n`` WebQSP train questions (seed 3), topics and answers derived
    from their gold paths (:func:`dev_questions.webqsp_train_answerable`), as a dataset file (kept once written)."""
    if out.is_file():
        return
    from dev_questions import webqsp_train, webqsp_train_answerable

    with GraphStore(uri) as store:
        rows = webqsp_train_answerable(store, webqsp_train(n, 0, 3))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"WebQSP train: {len(rows)} of {n} questions answerable in the store", flush=True)


def ensure_unanswerable(uri: str, graphs: list[Path]) -> None:
    from loaders.api import load_files

    with GraphStore(uri) as store:
        sources = {r["path"] for r in store.read("MATCH (s:Source) RETURN s.path AS path")}
        mine = {str(p.resolve()) for p in graphs}
        if sources and not sources <= mine:
            raise SystemExit(f"--unanswerable-uri {uri} holds other data ({', '.join(sorted(sources))}): give an "
                             "empty store")
        if sources != mine:
            load_files(store, graphs, bulk=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--method", default="sgr")
    ap.add_argument("--webqsp-uri", help="the WebQSP slice + CWQ dev store")
    ap.add_argument("--metaqa-uri")
    ap.add_argument("--unanswerable-uri", help="an empty store for the unanswerable set")
    ap.add_argument("--unanswerable-webqsp-uri", help="an empty store for the WebQSP train unanswerable set")
    ap.add_argument("--stored", action="store_true", help="fit from the predictions --runs-dir already holds for "
                    "these settings: no store, no model served (give --model)")
    ap.add_argument("--model", help="with --stored: the model the runs were answered by (the calibrator's key)")
    ap.add_argument("--extra-dev", type=Path, action="append", default=[],
                    help="a finished run folder of the same method and model on more CWQ dev or MetaQA dev "
                    "questions, pooled into the fit (its questions already in the dev runs are left out)")
    ap.add_argument("--signals", choices=("all", "compact"), default="all",
                    help="the signals the calibrator reads: all the method's (method_signals), or COMPACT_SIGNALS for a "
                    "small dev set")
    ap.add_argument("--scorer", choices=("trees", "logistic"), default="trees",
                    help="the calibrator's first part: boosted trees (TREE_PARAMS; the default) or logistic weights")
    ap.add_argument("--c", default="cv", help="the logistic part's L2 strength, or 'cv' (default): the best of "
                    f"{C_GRID} by grouped cross-validation on the dev rows")
    ap.add_argument("--metaqa-dev", type=int, default=150, help="MetaQA dev questions per hop for fitting")
    ap.add_argument("--metaqa", type=int, default=300, help="MetaQA test questions per hop (report)")
    ap.add_argument("--webqsp-sample", type=int, default=500)
    ap.add_argument("--cwq-dev", type=int, default=None, help="CWQ dev questions for fitting (default: all)")
    ap.add_argument("--unanswerable", type=int, default=200)
    ap.add_argument("--unanswerable-webqsp", type=int, default=150, help="WebQSP train dev questions asked again "
                    "against a store without their answers (0: none)")
    ap.add_argument("--webqsp-train", type=int, default=1200, help="WebQSP train questions sampled for fitting (the "
                    "store answers about a third; topics and answers derived from their gold paths; 0: none)")
    ap.add_argument("--keep-correct", type=float, default=0.95, help="share of correct dev answers the threshold keeps")
    ap.add_argument("--runs-dir", type=Path, default=None)
    ap.add_argument("--option", action="append", default=[], help="method option KEY=VALUE")
    ap.add_argument("--no-write-model", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS / "confidence.json")
    args = ap.parse_args()
    uris = (args.webqsp_uri, args.metaqa_uri, args.unanswerable_uri)
    if not args.stored and not all(uris):
        ap.error("give --webqsp-uri, --metaqa-uri and --unanswerable-uri, or --stored")
    if args.stored:
        args.webqsp_uri = args.metaqa_uri = args.unanswerable_uri = args.unanswerable_webqsp_uri = None

    options = dict(o.split("=", 1) for o in args.option)
    from sgr.methods.registry import method_options

    if "given_topics" in method_options(args.method):  # link from the text, as `sgr ask` without --topic does
        options.setdefault("given_topics", "false")
    runs = args.runs_dir or sgr_home() / "bench-runs" / "confidence"
    if args.stored and args.model is None and args.method in MODEL_METHODS:
        ap.error(f"--stored: give --model, the model that answered {args.method}'s runs")
    model = args.model if args.stored else model_name(args.method)
    key = calibration_key(args.method, model)
    tag = key.replace("/", "_")
    m = args.method
    # 1. dev runs
    name = "cwq-dev-all" if args.cwq_dev is None else f"cwq-dev-sample{args.cwq_dev}"
    dev_cwq = labelled(run("cwq", m, runs / tag / name, args.webqsp_uri, sample=args.cwq_dev, options=options))
    dev_mqa = []
    for hop in (1, 2, 3):
        dev_mqa += labelled(run(f"metaqa-{hop}hop", m, runs / tag / f"metaqa-{hop}hop-dev", args.metaqa_uri,
                                split="dev", sample=args.metaqa_dev, seed=1, options=options))
    # the unanswerable set, dev data built here: its questions on a store without their answers, where any answer
    # is wrong by construction (label 0); it is fitted on cross-wise like the rest, with its question's base
    questions = runs / "unanswerable-data" / f"cwq_dev_unanswerable_questions_{args.unanswerable}.jsonl"
    if not args.stored:
        questions, graphs = unanswerable_files(args.unanswerable, runs / "unanswerable-data")
        ensure_unanswerable(args.unanswerable_uri, graphs)
    gone = labelled_all(run(str(questions), m, runs / tag / "unanswerable", args.unanswerable_uri, options=options))
    dev_wq = []
    if args.webqsp_train:
        wq_file = runs / "webqsp-train-data" / f"webqsp_train_answerable_{args.webqsp_train}.jsonl"
        if not args.stored:
            webqsp_train_file(args.webqsp_uri, args.webqsp_train, wq_file)
        dev_wq = labelled(run(str(wq_file), m, runs / tag / f"webqsp-train-{args.webqsp_train}", args.webqsp_uri,
                              options=options))
    gone_wq: list[tuple[str, dict[str, float]]] = []
    if args.webqsp_train and args.unanswerable_webqsp:
        n_wq = args.unanswerable_webqsp
        wq_questions = runs / "unanswerable-data" / f"webqsp_train_unanswerable_questions_{n_wq}.jsonl"
        if not args.stored:
            if not args.unanswerable_webqsp_uri:
                ap.error("give --unanswerable-webqsp-uri (an empty store), or --unanswerable-webqsp 0")
            wq_questions, wq_graphs = webqsp_unanswerable_files(wq_file, n_wq, runs / "unanswerable-data")
            ensure_unanswerable(args.unanswerable_webqsp_uri, wq_graphs)
        gone_wq = labelled_all(run(str(wq_questions), m, runs / tag / "unanswerable-webqsp-train",
                                   args.unanswerable_webqsp_uri, options=options))
    seen = {q for q, _, _ in dev_cwq + dev_mqa + dev_wq}
    extra = [r for folder in args.extra_dev for r in labelled(stored_run(folder)) if r[0] not in seen]
    unanswerable = [(q + UNANSWERABLE_TAG, sig, 0.0) for q, sig in gone + gone_wq if sig.get("answered")]
    dev = dev_cwq + dev_mqa + dev_wq + extra + unanswerable
    # 2. fit (and cross-fit for the dev figures; each half chooses its own C)
    signals = COMPACT_SIGNALS if args.signals == "compact" else method_signals(m)

    trees = TREE_PARAMS if args.scorer == "trees" else None

    def fitted(rows: list) -> tuple[Calibrator, dict[str, Any]]:
        c, tried = (None, {}) if trees else choose_c(rows, signals) if args.c == "cv" else (float(args.c), {})
        prov = {"scorer": args.scorer, "tree_params": trees, "fitted_by": "python bench/confidence.py", "method": m,
                "model": model,
                "data": {"cwq-dev": len(dev_cwq), "metaqa-dev": len(dev_mqa), "webqsp-train": len(dev_wq),
                         "extra-dev": len(extra),
                         "cwq-dev-unanswerable": len(gone), "webqsp-train-unanswerable": len(gone_wq)},
                "extra_dev": [str(f) for f in args.extra_dev], "keep_correct": args.keep_correct,
                "signals": args.signals, "c": c, "c_cv_auroc": tried}
        return fit(rows, args.keep_correct, prov, signals, c or 1.0, trees=trees), prov

    final, prov = fitted(dev)
    a, b = halves(dev, seed=1)
    (cal_a, _), (cal_b, _) = fitted(a), fitted(b)
    in_a = {r[0].removesuffix(UNANSWERABLE_TAG) for r in a}

    def crossed(qid: str) -> Calibrator:
        return cal_b if qid in in_a else cal_a

    summary: dict[str, Any] = {"threshold": round(final.threshold, 4), "calibrated_for": key, "scorer": args.scorer,
                               "c": prov["c"],
                               "signals": len(signals)}
    details: dict[str, Any] = {}
    # 3. report
    details["cwq-dev"] = figures(crossed, dev_cwq, "cwq-dev", summary)
    details["metaqa-dev"] = figures(crossed, dev_mqa, "metaqa-dev", summary)
    if dev_wq:
        details["webqsp-train-dev"] = figures(crossed, dev_wq, "webqsp-train-dev", summary)
    if extra:
        details["extra-dev"] = figures(crossed, extra, "extra-dev", summary)
    wq = labelled(run("webqsp", m, runs / tag / f"webqsp-sample{args.webqsp_sample}", args.webqsp_uri,
                      sample=args.webqsp_sample, seed=0, options=options))
    details["webqsp"] = figures(lambda _q: final, wq, "webqsp", summary)
    mqa = []
    for hop in (1, 2, 3):
        rows = labelled(run(f"metaqa-{hop}hop", m, runs / tag / f"metaqa-{hop}hop-test", args.metaqa_uri,
                            sample=args.metaqa, seed=0, options=options))
        details[f"metaqa-{hop}hop"] = figures(lambda _q: final, rows, f"metaqa-{hop}hop", summary)
        mqa += rows
    details["metaqa"] = figures(lambda _q: final, mqa, "metaqa", summary)
    # 4. unanswerable (each question scored by the calibrator fitted without its half)
    asked = {q for q, _ in gone}
    # the same questions on the full store: the dev run's predictions (cross-fitted; with --stored and a CWQ dev run
    # stopped early, those of the pool it asked), a run of their own otherwise
    full = [(q, s, y, crossed(q)) for q, s, y in dev_cwq if q in asked]
    if not full or (len(full) < len(asked) and not args.stored):
        full = [(q, s, y, final) for q, s, y in labelled(run(str(questions), m, runs / tag / "answerable",
                                                             args.webqsp_uri, options=options))]
    abstain = [(not sig.get("answered")) or crossed(q).probability(sig) < crossed(q).threshold for q, sig in gone]
    kept = [cal.probability(sig) >= cal.threshold for _, sig, y, cal in full if y == 1.0]
    summary["unanswerable/abstain_rate"] = round(float(np.mean(abstain)), 4) if abstain else None
    summary["unanswerable/questions"] = len(gone)
    summary["answerable/kept_correct_rate"] = round(float(np.mean(kept)), 4) if kept else None
    summary["answerable/correct"] = len(kept)
    summary["answerable/questions"] = len(full)
    if gone_wq:  # the same for the WebQSP train pool, against the dev run of the same questions
        asked_wq = {q for q, _ in gone_wq}
        abstain_wq = [(not sig.get("answered")) or crossed(q).probability(sig) < crossed(q).threshold
                      for q, sig in gone_wq]
        summary["unanswerable-webqsp-train/abstain_rate"] = round(float(np.mean(abstain_wq)), 4)
        summary["unanswerable-webqsp-train/questions"] = len(gone_wq)
        kept_wq = [crossed(q).probability(sig) >= crossed(q).threshold for q, sig, y in dev_wq if q in asked_wq and y]
        summary["answerable-webqsp-train/kept_correct_rate"] = round(float(np.mean(kept_wq)), 4) if kept_wq else None
        summary["answerable-webqsp-train/correct"] = len(kept_wq)
    if not args.no_write_model:
        save_calibrators({key: final})
        print(f"wrote the calibrator {key}")
    shipped = final.to_dict()
    if "trees" in shipped:  # the nodes are in the asset; the record names their number
        shipped["trees"] = f"{len(shipped['trees'])} trees, in sgr/assets/calibration.json under {key}"
    write_result(args.out, {"summary": summary, "details": details, "calibrator": shipped,
                            "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}})
    print(json.dumps(summary, indent=1))


def labelled_all(preds: dict[str, dict]) -> list[tuple[str, dict[str, float]]]:
    """(question id, signals) of every prediction, scored or not (the unanswerable set's gold is not in the graph)."""
    out = []
    for qid, p in preds.items():
        sig = stored_signals(p)
        out.append((qid, sig if sig is not None else {"answered": float(bool(p.get("answers")))}))
    return out


if __name__ == "__main__":
    main()
