"""``sgr eval``: run one method over one dataset, stream predictions, resume, score, report.

A run lives in a folder (``--out``, default ``$SGR_HOME/runs/<dataset>__<method>[__selection]``):

* ``run.json`` — what was run (dataset, selection fingerprint, method, options) and one entry per
  session (start, wall seconds, questions answered). Rerunning into the same folder must name the
  same dataset selection and method, else it is refused.
* ``predictions.jsonl`` — one line per question (:mod:`sgr.evaluation.predictions`), written and
  flushed as each question finishes. Rerunning skips ids already there (resume); Ctrl-C stops
  after the lines written so far; a question whose method raises is recorded with its error
  (``"error": "ValueError: …"``) and the run goes on. ``Neo4jUnavailable``, ``LLMUnavailable`` and ``ConfigError`` abort
  the run instead (every later question would fail the same way). An unknown method or option
  (``-o muu=0.9``) is refused before the run folder is created or changed.
* each line's ``usage`` is the method's own measurement (:class:`sgr.methods.base.UsageMeter`: LLM calls,
  billed and cached tokens apart, stage timers, Neo4j count and time); the harness adds none of its own.
* ``ceiling.json``, ``metrics.json``, ``report.md``, ``*.png`` — see :mod:`sgr.evaluation.report`.

Concurrency: ``workers`` threads, each with its **own** :class:`~sgr.graph.store.GraphStore` and its own
method instance (``create_method`` is called once per thread), so per-question Neo4j counters are
exact. Method factories that load heavy models should share them through a module-level cache.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console

from sgr.core.config import cache_dir, sgr_home
from sgr.datasets import Dataset, load_dataset
from sgr.core.errors import ConfigError, LLMUnavailable, Neo4jUnavailable
from sgr.methods.base import MethodContext
from sgr.methods.registry import create_method
from sgr.evaluation.metrics.reachability import Reachability, reachability
from sgr.graph.store import GraphStore
from sgr.core.types import Answerer, Question

from sgr.methods.confidence import attach_confidence
from sgr.evaluation.predictions import PredictionLog, prediction_record, read_predictions

StoreFactory = Callable[[], GraphStore]
FATAL = (Neo4jUnavailable, ConfigError, LLMUnavailable)


@dataclass
class RunConfig:
    """Everything that defines a run (the CLI flags of ``sgr eval``)."""

    dataset: str
    method: str
    out: Path | None = None
    split: str | None = None
    limit: int | None = None
    sample: int | None = None
    seed: int = 0
    workers: int = 1
    hops: int | None = None  # k of the reachability ceiling; None: the question's hop count, else 2
    ceiling: bool = True
    retry_errors: bool = False
    save_evidence: bool = False  # record each answered question as (:SgrQuestion) evidence (sgr.evidence.saved)
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunResult:
    run_dir: Path
    total: int  # questions in the selection
    done: int  # questions with a line in predictions.jsonl
    answered_now: int  # answered in this session
    errors: int
    interrupted: bool
    metrics: dict[str, Any]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "run"


def default_run_dir(cfg: RunConfig, ds: Dataset) -> Path:
    """A deterministic folder, so rerunning the same command resumes the same run."""
    parts = [ds.name, cfg.method]
    if ds.split and ds.split not in ds.name:
        parts.append(ds.split)
    if cfg.sample is not None:
        parts.append(f"sample{cfg.sample}-seed{cfg.seed}")
    if cfg.limit is not None:
        parts.append(f"limit{cfg.limit}")
    return sgr_home() / "runs" / _slug("__".join(parts))


def _run_info(cfg: RunConfig, ds: Dataset) -> dict[str, Any]:
    return {
        "dataset": {"spec": cfg.dataset, "name": ds.name, "path": str(ds.path), "format": ds.format,
                    "split": ds.split, "total": ds.total, "selected": len(ds.questions),
                    "selection": ds.selection, "fingerprint": ds.fingerprint()},
        "method": cfg.method,
        "options": cfg.options,
        "sessions": [],
    }


def _open_run(run_dir: Path, cfg: RunConfig, ds: Dataset) -> dict[str, Any]:
    run_dir.mkdir(parents=True, exist_ok=True)
    info_path = run_dir / "run.json"
    fresh = _run_info(cfg, ds)
    if info_path.exists():
        info = json.loads(info_path.read_text())
        if info.get("method") != cfg.method:
            raise ConfigError(f"{run_dir} holds a run of method {info.get('method')!r}, not {cfg.method!r}; "
                              "choose another --out")
        if info.get("dataset", {}).get("fingerprint") != fresh["dataset"]["fingerprint"]:
            raise ConfigError(f"{run_dir} holds a run over a different question selection "
                              f"({info.get('dataset', {}).get('name')}, {info.get('dataset', {}).get('selection')}); "
                              "choose another --out")
        if info.get("options", {}) != cfg.options:
            raise ConfigError(f"{run_dir} was run with options {info.get('options')}, not {cfg.options}; "
                              "choose another --out")
        return info
    _save_info(run_dir, fresh)  # atomic: a full disk leaves no empty run.json behind
    return fresh


def _save_info(run_dir: Path, info: dict[str, Any]) -> None:
    tmp = run_dir / "run.json.tmp"
    tmp.write_text(json.dumps(info, indent=2))
    tmp.replace(run_dir / "run.json")


class _Workers:
    """One store + one method per thread (created lazily, closed at the end)."""

    def __init__(self, method: str, options: dict[str, Any], store_factory: StoreFactory,
                 save_evidence: bool = False) -> None:
        self.method = method
        self.save_evidence = save_evidence
        self.options = options
        self.store_factory = store_factory
        self._local = threading.local()
        self._stores: list[GraphStore] = []
        self._lock = threading.Lock()

    def adopt(self, store: GraphStore, method: Answerer) -> None:
        """Use ``store``/``method`` (built by the caller, closed by the caller) for the current thread."""
        self._local.store = store
        self._local.method = method

    def get(self) -> tuple[GraphStore, Answerer]:
        if not hasattr(self._local, "method"):
            store = self.store_factory()
            with self._lock:
                self._stores.append(store)
            self._local.store = store
            self._local.method = create_method(self.method, MethodContext(store=store, options=dict(self.options)))
        return self._local.store, self._local.method

    def close(self) -> None:
        for s in self._stores:
            s.close()


def answer_one(workers: _Workers, question: Question) -> dict[str, Any]:
    """Answer one question and build its record; method errors become the record's ``error``.

    The cost recorded is the method's own :class:`~sgr.core.types.Usage` (filled by its
    :class:`~sgr.methods.base.UsageMeter`): the harness measures nothing around the method. A question
    whose method raised has no usage (``{}``) and is left out of the cost summary.
    """
    _, method = workers.get()
    try:
        pred = method.answer(question)
    except FATAL:
        raise
    except Exception as exc:  # noqa: BLE001 - a failing question is recorded, the run goes on
        return prediction_record(question, None, f"{type(exc).__name__}: {exc}")
    attach_confidence(pred, workers.method, getattr(getattr(method, "llm", None), "name", None))  # SGR did already
    if workers.save_evidence:  # after the method's meter stopped: saving is not part of answering
        from sgr.evidence.saved import save_evidence

        store, _ = workers.get()
        pred.extra["evidence_id"] = save_evidence(
            store, question.text, pred, workers.method,
            topic_ids=question.topic_mids or question.topic_entities)
    return prediction_record(question, pred, None)


def compute_ceiling(store: GraphStore, ds: Dataset, k: int | None) -> dict[str, Any]:
    """Reachability of every selected question (cached per graph version, selection and k)."""
    rels = store.read("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
    key = f"{store.graph_version()}-r{rels}-{ds.fingerprint()}-k{k if k is not None else 'q'}"
    cache = cache_dir("eval") / f"ceiling-{key}.json"
    if cache.exists():
        try:
            return json.loads(cache.read_text())
        except ValueError:
            pass
    t0 = time.perf_counter()
    res: dict[str, Reachability] = reachability(store, [q for q in ds.questions if q.answers], k=k)
    out = {"k": k, "graph_version": store.graph_version(), "seconds": time.perf_counter() - t0,
           "questions": {qid: {"k": r.k, "reachable": r.reachable, "reachable_cvt": r.reachable_cvt,
                               "topics_found": r.topics_found, "answers_found": r.answers_found}
                         for qid, r in res.items()}}
    tmp = cache.with_suffix(".tmp")
    tmp.write_text(json.dumps(out))
    tmp.replace(cache)
    return out


def _progress(console: Console | None, enabled: bool):
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn)

    return Progress(TextColumn("[bold]{task.description}"), BarColumn(bar_width=24), MofNCompleteColumn(),
                    TextColumn("Hits@1 {task.fields[h1]:.3f} Hit {task.fields[hit]:.3f} err {task.fields[err]}"),
                    TextColumn("ETA"), TimeRemainingColumn(),
                    console=console, disable=not enabled, transient=False)


def run_eval(cfg: RunConfig, store_factory: StoreFactory | None = None, progress: bool = True,
             console: Console | None = None,
             on_record: Callable[[dict[str, Any]], None] | None = None) -> RunResult:
    """Run ``cfg`` to completion (or Ctrl-C), then write the report. See the module docstring."""
    from sgr.evaluation.report import write_report

    if cfg.workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {cfg.workers}")
    factory = store_factory or GraphStore.from_settings
    ds = load_dataset(cfg.dataset, split=cfg.split, limit=cfg.limit, sample=cfg.sample, seed=cfg.seed)
    run_dir = Path(cfg.out) if cfg.out else default_run_dir(cfg, ds)

    main_store = factory()
    try:
        main_store.verify()
        # built before the run folder is touched, so a bad method name or option (a ConfigError from the
        # method's parse_options) fails with nothing recorded; the main thread answers with it
        main_method = create_method(cfg.method, MethodContext(store=main_store, options=dict(cfg.options)))
        info = _open_run(run_dir, cfg, ds)
    except BaseException:
        main_store.close()
        raise
    pred_path = run_dir / "predictions.jsonl"

    done = read_predictions(pred_path)
    if cfg.retry_errors:
        done = {k: v for k, v in done.items() if not v.get("error")}
    todo = [q for q in ds.questions if q.id not in done]
    counts = {"n": 0, "h1": 0.0, "hit": 0.0, "err": 0}
    wanted = {q.id for q in ds.questions}
    for rec in done.values():
        if rec["id"] in wanted:
            _count(counts, rec)

    workers = _Workers(cfg.method, cfg.options, factory, save_evidence=cfg.save_evidence)
    workers.adopt(main_store, main_method)
    session = {"started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "seconds": 0.0,
               "answered": 0, "workers": cfg.workers, "interrupted": False}
    info.setdefault("sessions", []).append(session)
    interrupted = False
    answered = 0
    t_start = time.perf_counter()
    bar = _progress(console, progress)
    try:
        with PredictionLog(pred_path) as log, bar:
            task = bar.add_task(cfg.method, total=len(ds.questions),
                                completed=len(ds.questions) - len(todo), **_fields(counts))

            def emit(rec: dict[str, Any]) -> None:
                nonlocal answered
                answered += 1
                log.append(rec)
                _count(counts, rec)
                bar.update(task, advance=1, **_fields(counts))
                if on_record:
                    on_record(rec)

            try:
                if cfg.workers == 1:
                    for q in todo:
                        emit(answer_one(workers, q))
                else:
                    _run_pool(workers, todo, cfg.workers, emit)
            except KeyboardInterrupt:
                interrupted = True
    finally:
        workers.close()
        session["seconds"] = time.perf_counter() - t_start
        session["answered"] = answered
        session["interrupted"] = interrupted
        _save_info(run_dir, info)

    reach = None
    if cfg.ceiling and not interrupted:
        reach = compute_ceiling(main_store, ds, cfg.hops)
        (run_dir / "ceiling.json").write_text(json.dumps(reach))
    elif (run_dir / "ceiling.json").exists():
        reach = json.loads((run_dir / "ceiling.json").read_text())
    main_store.close()
    metrics = write_report(run_dir, ds, reach)
    return RunResult(run_dir=run_dir, total=len(ds.questions), done=metrics["n_done"], answered_now=answered,
                     errors=metrics["n_errors"], interrupted=interrupted, metrics=metrics)


def _run_pool(workers: _Workers, todo: list[Question], n: int, emit: Callable[[dict[str, Any]], None]) -> None:
    """Answer ``todo`` on ``n`` threads; at most ``2n`` questions in flight, so Ctrl-C stops quickly."""
    pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="sgr-eval")
    pending: set[Future] = set()
    it = iter(todo)
    try:
        while True:
            while len(pending) < 2 * n:
                q = next(it, None)
                if q is None:
                    break
                pending.add(pool.submit(answer_one, workers, q))
            if not pending:
                break
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                emit(fut.result())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _count(counts: dict[str, Any], rec: dict[str, Any]) -> None:
    scores = rec.get("scores")
    if rec.get("error"):
        counts["err"] += 1
    if scores:
        counts["n"] += 1
        counts["h1"] += scores["hits1_strict"]
        counts["hit"] += scores["hit"]


def _fields(counts: dict[str, Any]) -> dict[str, Any]:
    n = counts["n"] or 1
    return {"h1": counts["h1"] / n, "hit": counts["hit"] / n, "err": counts["err"]}
