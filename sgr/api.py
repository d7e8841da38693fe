"""The public API behind the ``sgr`` commands: one function per thing a user does.

The CLI parses flags, calls one of these and renders what comes back (``sgr/cli/render.py``); notebooks call them
directly, usually through ``import sgr``::

    import sgr

    with sgr.GraphStore.from_settings() as store:               # NEO4J_URI, or the server `sgr neo4j start` runs
        sgr.load(["webqsp_mini.jsonl"], store=store)            # RoG JSONL/Parquet, N-Triples, plain triples
        result = sgr.ask("what does jamaican people speak?", store=store, method="sgr-compiled")
        print(result.answers, result.prediction.paths[:3])
        run = sgr.evaluate("metaqa-1hop", method="sgr", limit=20)

Every failure a user can cause is an :class:`sgr.core.errors.SgrError` subclass with a one-line message.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from sgr.core.config import neo4j_password_file
from sgr.core.errors import EntityNotFound, InputError, SgrError
from sgr.core.types import Prediction, Question
from sgr.graph.server import NO_AUTH_WARNING
from sgr.graph.store import GraphStore

if TYPE_CHECKING:
    from rich.console import Console

    from loaders.api import LoadProgress, LoadReport
    from sgr.evaluation.compare import Comparison
    from sgr.evaluation.runner import RunResult
    from sgr.evidence.inspect import Inspection
    from sgr.evidence.saved import QuestionSummary
    from sgr.graph.server import ServerInfo
    from sgr.graph.stats import GraphStats
    from sgr.graph.store import QueryResult
    from sgr.llm.server import LLMServerInfo
    from sgr.methods.sgr.answerer import SGRResult


def connect() -> GraphStore:
    """The Neo4j that the settings name (``NEO4J_URI``, else the server ``sgr neo4j start`` runs); close it, or use
    it as a context manager (``with sgr.api.connect() as store:``)."""
    return GraphStore.from_settings()


@dataclass
class AskResult:
    """The method-neutral trace of one question: what :func:`ask` returns, what ``sgr ask`` renders.

    ``prediction`` is what every method gives (ranked answers with their reasoning paths, the Cypher that ran, the
    route, the usage); ``detail`` is the method's own trace when it has one (SGR's ``SGRResult``: linked entities,
    schema, subgraph, Cypher attempts, validation, votes), else ``None``; ``evidence`` says where to look at the
    evidence subgraph (the Neo4j Browser query and URL, the saved question id, the HTML file).
    """

    question: Question
    method: str
    prediction: Prediction
    detail: "SGRResult | None" = None
    topic_ids: list[str] = field(default_factory=list)
    evidence: "Inspection | None" = None
    abstained: bool = False  # "not found in the graph": confidence below the threshold, or nothing to answer with
    reasons: list[str] = field(default_factory=list)  # why it abstained (sgr.methods.confidence.REASONS)
    threshold: float | None = None  # the confidence threshold applied (None: uncalibrated, nothing abstains on it)

    @property
    def confidence(self) -> float | None:
        """P(the top answer is correct), calibrated; None when no calibrator fits this method and model."""
        return self.prediction.confidence

    @property
    def answers(self) -> list[str]:
        """The answer names, best first."""
        return self.prediction.answer_texts

    @property
    def route(self) -> str | None:
        return self.prediction.route

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view (``sgr ask --json``): the neutral fields, then ``detail`` (the method's own trace)."""
        pred = self.prediction
        return {
            "question": self.question.text,
            "method": self.method,
            "route": pred.route,
            "error": pred.error,
            "confidence": pred.confidence,
            "calibrated_for": (pred.extra.get("confidence") or {}).get("calibrated_for"),
            "abstained": self.abstained,
            "abstain_reasons": self.reasons,
            "min_confidence": self.threshold,
            "answers": [{"text": a.text, "id": a.id, "score": round(a.score, 4),
                         "paths": [p.summary() for p in a.paths]} for a in pred.answers],
            "top_paths": [p.summary() for p in pred.paths],
            "cypher": pred.cypher,
            "topic_ids": self.topic_ids,
            "usage": asdict(pred.usage),
            "extra": pred.extra,
            "evidence": None if self.evidence is None else {
                "query": self.evidence.query, "question_id": self.evidence.question_id,
                "browser_url": self.evidence.browser_url,
                "html": None if self.evidence.html is None else str(self.evidence.html),
                "lines": self.evidence.lines()},
            "detail": None if self.detail is None else self.detail.to_dict(),
        }


def ask(text: str, *, store: GraphStore, topics: Sequence[str] = (), method: str = "sgr", hops: int = 2,
        max_repairs: int = 2, llm: Any = None, options: dict[str, Any] | None = None, evidence: bool = True,
        save: bool = False, html: Path | str | None = None, min_confidence: float | None = None) -> AskResult:
    """Answer one typed question with a method of :data:`sgr.methods.registry.METHODS` and return its trace.

    ``topics`` are entity names or MIDs (default: linked from the text); ``options`` are the method's ``-o KEY=VALUE``
    settings (an unknown key is a ConfigError naming the valid ones); ``llm`` replaces the configured chat model.
    With ``evidence`` the evidence subgraph is looked up and its Browser query / URL attached; ``save`` records it in
    the graph (``sgr evidence list``), ``html`` writes the offline page. Raises EntityNotFound (no topic entity in the
    graph), LLMError, Neo4jUnavailable, ConfigError, or SgrError when a method without its own trace fails outright.

    The answer carries its calibrated confidence; below ``min_confidence`` (default: the calibrator's threshold; 0:
    never) it is "not found in the graph" (``abstained``, with ``reasons``) and the candidates stay, marked low. An
    SGR question whose entities nothing links abstains too ("no entity of the question was found in the graph").
    An empty question is an InputError before any work.
    """
    from sgr.methods.confidence import abstention, attach_confidence

    if not text or not text.strip():
        raise InputError("the question is empty: type a question, e.g. sgr ask \"what does jamaican people speak?\"")
    if min_confidence is not None and not 0.0 <= min_confidence <= 1.0:
        raise InputError(f"--min-confidence must be between 0 and 1, got {min_confidence}")
    from sgr.methods.base import MethodContext
    from sgr.methods.registry import create_method, method_options
    from sgr.methods.sgr.answerer import SGRAnswerer

    store.verify()
    accepted = method_options(method)  # hops and max_repairs go only to a method that declares them
    opts = {**{k: v for k, v in (("hops", hops), ("max_repairs", max_repairs)) if k in accepted}, **(options or {})}
    answerer = create_method(method, MethodContext(store=store, options=opts, llm=llm))
    question = Question(id="ask", text=text.strip(), topic_entities=list(topics))
    if isinstance(answerer, SGRAnswerer):  # SGR variants give their full trace
        try:
            detail = answerer.run(question)
        except EntityNotFound as exc:
            if min_confidence == 0.0:  # nothing abstains: the old behaviour, an error
                raise
            pred = Prediction(question_id=question.id, method=method, error=str(exc))
            attach_confidence(pred, method, answerer.model_name)
            return AskResult(question=question, method=method, prediction=pred, abstained=True,
                             reasons=abstention(pred, min_confidence)[1])
        result = AskResult(question=question, method=method, prediction=detail.prediction, detail=detail,
                           topic_ids=[e.id for e in detail.entities])
    else:
        pred = answerer.answer(question)
        if pred.error and not pred.answers:
            raise SgrError(f"{method}: {pred.error}")
        attach_confidence(pred, method, getattr(getattr(answerer, "llm", None), "name", None))
        result = AskResult(question=question, method=method, prediction=pred)
    result.abstained, result.reasons = abstention(result.prediction, min_confidence)
    info = result.prediction.extra.get("confidence") or {}
    result.threshold = min_confidence if min_confidence is not None else info.get("threshold")
    if evidence or save or html:
        from sgr.evidence.inspect import inspect_prediction

        result.evidence = inspect_prediction(store, question.text, result.prediction, method, save=save, html=html,
                                             topic_ids=result.topic_ids)
    return result


def load(paths: Sequence[str | Path], *, store: GraphStore | None = None, format: str | None = None,
         keep_all: bool = False, max_errors: int = 100, batch_size: int = 20_000, force: bool = False,
         bulk: bool | None = None, workers: int = 1, progress: "LoadProgress | None" = None) -> "LoadReport":
    """Load Freebase-style files into Neo4j (``sgr load``): batched, idempotent, resumable; a file already loaded
    unchanged (same sha256) is skipped unless ``force``.

    ``bulk``: neo4j-admin import into an empty embedded database (None: chosen for a large input into an empty
    one); ``workers``: concurrent write transactions on the transactional path.
    ``format``: ``rog`` | ``ntriples`` | ``triples`` (default: from the extension, else the first lines). ``store``
    defaults to :meth:`GraphStore.from_settings` (opened and closed here). Returns the per-file
    :class:`loaders.api.LoadReport`; malformed lines beyond ``max_errors`` raise LoadError naming file and line.
    """
    from loaders.api import load_files

    if store is not None:
        return load_files(store, paths, fmt=format, keep_all=keep_all, max_errors=max_errors, batch_size=batch_size,
                          force=force, bulk=bulk, workers=workers, progress=progress)
    with GraphStore.from_settings() as own:
        return load_files(own, paths, fmt=format, keep_all=keep_all, max_errors=max_errors, batch_size=batch_size,
                          force=force, bulk=bulk, workers=workers, progress=progress)


def evaluate(dataset: str, *, method: str, out: Path | str | None = None, split: str | None = None,
             limit: int | None = None, sample: int | None = None, seed: int = 0, workers: int = 1,
             hops: int | None = None, ceiling: bool = True, retry_errors: bool = False, save_evidence: bool = False,
             options: dict[str, Any] | None = None, progress: bool = True,
             console: "Console | None" = None) -> "RunResult":
    """Score ``method`` on a dataset (``sgr eval``): stream predictions to a run folder, resume, write the report.

    ``dataset`` is a file (MetaQA .tsv, RoG-style or plain .jsonl/.json/.parquet) or a name (``metaqa-1hop`` …
    ``webqsp``). The run folder (default ``$SGR_HOME/runs/<dataset>__<method>…``) holds predictions.jsonl,
    metrics.json and report.md; rerunning the same call resumes it. Returns the :class:`RunResult` with the metrics.
    """
    from sgr.evaluation.runner import RunConfig, run_eval

    cfg = RunConfig(dataset=dataset, method=method, out=Path(out) if out else None, split=split, limit=limit,
                    sample=sample, seed=seed, workers=workers, hops=hops, ceiling=ceiling, retry_errors=retry_errors,
                    save_evidence=save_evidence, options=dict(options or {}))
    return run_eval(cfg, progress=progress, console=console)


def stats(*, store: GraphStore, top: int = 10) -> "GraphStats":
    """What is in the graph (``sgr stats``): data counts, the ``top`` relation types, the files loaded into it."""
    from sgr.graph.stats import graph_stats

    return graph_stats(store, top=top)


def query(cypher: str, *, store: GraphStore, limit: int = 50, timeout: float = 30.0) -> "QueryResult":
    """Run read-only Cypher (``sgr query``): READ access, a server-side ``timeout`` in seconds, at most ``limit`` rows;
    CypherError for anything but a read."""
    store.verify()
    return store.run_generated(cypher, timeout_s=timeout, row_cap=limit)


def compare(run_a: Path | str, run_b: Path | str) -> "Comparison":
    """Two ``sgr eval`` run folders side by side, with deltas B − A (``sgr eval compare``)."""
    from sgr.evaluation.compare import compare_runs

    return compare_runs(Path(run_a), Path(run_b))


def report(run_dir: Path | str) -> dict[str, Any]:
    """Rewrite metrics.json, report.md and the plots of a run folder from its files (``sgr eval report``); returns
    the metrics. InputError when the folder holds no predictions.jsonl."""
    from sgr.evaluation.report import write_report

    run_dir = Path(run_dir)
    if not (run_dir / "predictions.jsonl").exists():
        from sgr.core.errors import InputError

        raise InputError(f"{run_dir}: no predictions.jsonl; is it a run folder of `sgr eval`?")
    return write_report(run_dir)


def list_evidence(*, store: GraphStore, limit: int = 50) -> "list[QuestionSummary]":
    """Saved questions (``sgr ask --save``, ``sgr eval --save-evidence``), newest first (``sgr evidence list``)."""
    from sgr.evidence.saved import list_evidence as _list

    return _list(store, limit=limit)


def clear_evidence(question_id: str | None = None, *, store: GraphStore) -> int:
    """Delete saved evidence, all of it or one question (``sgr evidence clear``); the data it points at is not touched.
    Returns how many saved questions went; InputError for an id that is not saved."""
    from sgr.evidence.saved import clear_evidence as _clear

    n = _clear(store, question_id)
    if question_id and n == 0:
        from sgr.core.errors import InputError

        raise InputError(f"no saved evidence with id {question_id!r}: see `sgr evidence list`")
    return n


@dataclass
class EvidenceView:
    """One saved question (``sgr evidence show``): the record and where to see it drawn."""

    saved: Any  # sgr.evidence.saved.SavedQuestion
    inspection: "Inspection"

    @property
    def redraw(self) -> str:
        return self.inspection.query

    @property
    def browser_url(self) -> str | None:
        return self.inspection.browser_url

    @property
    def html(self) -> Path | None:
        return self.inspection.html


def open_evidence(question_id: str, *, store: GraphStore, html: Path | str | None = None) -> EvidenceView:
    """Load saved evidence (``sgr ask --save``) by id; ``html`` also writes the offline page. Raises InputError for an
    unknown id."""
    from sgr.evidence.inspect import inspect_saved

    saved, inspection = inspect_saved(store, question_id, html=html)
    return EvidenceView(saved=saved, inspection=inspection)


def tune(**options: Any) -> dict[str, Any]:
    """``sgr llm tune``: tune the local model on SGR's schema prompts for the loaded graph and export it for
    llama.cpp; returns the provenance recorded next to the weights (see :mod:`sgr.methods.sgr.tuning`)."""
    from sgr.methods.sgr.tuning import tune_from_options

    return tune_from_options(**options)


# -- the servers: the embedded Neo4j (sgr.graph.server) and the local model (sgr.llm.server) ---------------------------
# NO_AUTH_WARNING and neo4j_password_file (imported above) are what the CLI prints around a start.


def start_neo4j(*, port: int | None = None, data_dir: Path | None = None, heap: str = "1g", pagecache: str = "512m",
                auth: bool = True) -> "ServerInfo":
    """Start the embedded Neo4j (``sgr neo4j start``; builds the launcher on first use) and wait until Bolt answers.
    With ``auth`` the password is generated at first start into :func:`neo4j_password_file`."""
    from sgr.graph import server

    return server.start(port=port, data_dir=data_dir, heap=heap, pagecache=pagecache, auth=auth)


def serve_browser(info: "ServerInfo") -> str:
    """Serve Neo4j Browser on 127.0.0.1 for the running server ``info``; returns its URL."""
    from sgr.graph import browser

    return browser.serve(info)


def stop_neo4j() -> bool:
    """Stop the embedded Neo4j (and its Browser); False when none was running."""
    from sgr.graph import server

    return server.stop()


def neo4j_status() -> "ServerInfo | None":
    """The running embedded Neo4j, or None."""
    from sgr.graph import server

    return server.status()


def serve_llm(*, port: int | None = None, n_ctx: int = 4096, threads: int | None = None,
              model: str = "base") -> "LLMServerInfo":
    """Start the local OpenAI-compatible model server (``sgr llm serve``): ``model`` is ``base``, ``tuned`` (the
    weights of ``sgr llm tune`` for the loaded graph) or a GGUF path."""
    from sgr.llm import server

    return server.start(port=port, n_ctx=n_ctx, n_threads=threads, model=model)


def stop_llm() -> bool:
    """Stop the local model server; False when none was running."""
    from sgr.llm import server

    return server.stop()


def llm_status() -> "tuple[LLMServerInfo, bool, str] | None":
    """The running local model server, whether it answers, and a line naming its weights; None when none runs."""
    from sgr.llm import server

    info = server.status()
    if info is None:
        return None
    return info, server.models_endpoint_ready(info.base_url), server.describe(info)


def describe_llm(info: "LLMServerInfo") -> str:
    """One line naming the served weights: base, or tuned with its graph version and validation accuracy."""
    from sgr.llm import server

    return server.describe(info)
