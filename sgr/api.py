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

from sgr.core.errors import SgrError
from sgr.core.types import Prediction, Question
from sgr.graph.store import GraphStore

if TYPE_CHECKING:
    from rich.console import Console

    from loaders.api import LoadProgress, LoadReport
    from sgr.evaluation.runner import RunResult
    from sgr.evidence.inspect import Inspection
    from sgr.methods.sgr.answerer import SGRResult


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
    weights: str | None = None  # which language model answered (the shipped, a tuned or the base weights …)
    retriever: str | None = None  # which relation retriever ranked the relations (shipped encoder, trained, cosine)

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
            "answers": [{"text": a.text, "id": a.id, "score": round(a.score, 4),
                         "paths": [p.summary() for p in a.paths]} for a in pred.answers],
            "top_paths": [p.summary() for p in pred.paths],
            "cypher": pred.cypher,
            "topic_ids": self.topic_ids,
            "weights": self.weights,
            "retriever": self.retriever,
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
        save: bool = False, html: Path | str | None = None) -> AskResult:
    """Answer one typed question with a method of :data:`sgr.methods.registry.METHODS` and return its trace.

    ``topics`` are entity names or MIDs (default: linked from the text); ``options`` are the method's ``-o KEY=VALUE``
    settings (an unknown key is a ConfigError naming the valid ones); ``llm`` replaces the configured chat model.
    With ``evidence`` the evidence subgraph is looked up and its Browser query / URL attached; ``save`` records it in
    the graph (``sgr evidence list``), ``html`` writes the offline page. Raises EntityNotFound (no topic entity in the
    graph), LLMError, Neo4jUnavailable, ConfigError, or SgrError when a method without its own trace fails outright.
    """
    from sgr.methods.base import MethodContext
    from sgr.methods.registry import METHODS, create_method
    from sgr.methods.sgr.answerer import SGRAnswerer

    store.verify()
    sgr_options = {"hops": hops, "max_repairs": max_repairs} if METHODS.get(method, "").startswith("sgr.methods.sgr.") else {}
    opts = {**sgr_options, **(options or {})}  # other methods refuse SGR's options
    answerer = create_method(method, MethodContext(store=store, options=opts, llm=llm))
    question = Question(id="ask", text=text.strip(), topic_entities=list(topics))
    if isinstance(answerer, SGRAnswerer):  # SGR variants give their full trace
        detail = answerer.run(question)
        result = AskResult(question=question, method=method, prediction=detail.prediction, detail=detail,
                           topic_ids=[e.id for e in detail.entities])
    else:
        pred = answerer.answer(question)
        if pred.error and not pred.answers:
            raise SgrError(f"{method}: {pred.error}")
        result = AskResult(question=question, method=method, prediction=pred)
    result.weights, result.retriever = answered_by(answerer)
    if evidence or save or html:
        from sgr.evidence.inspect import inspect_prediction

        result.evidence = inspect_prediction(store, question.text, result.prediction, method, save=save, html=html,
                                             topic_ids=result.topic_ids)
    return result


def answered_by(answerer: Any) -> tuple[str, str | None]:
    """``(weights, retriever)``: one line each naming the language model a method's answerer called and the
    relation retriever it ranked relations with (None for a method that ranks none)."""
    from sgr.llm.server import describe_model
    from sgr.retrieval.relations import describe_retriever

    llm = getattr(answerer, "llm", None)
    retriever = getattr(answerer, "retriever", None)
    return (describe_model(getattr(llm, "name", None) if llm is not None else None),
            describe_retriever(retriever) if hasattr(answerer, "retriever") else None)


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


@dataclass
class ShippedModel:
    """One trained model that ships with sgr (``models/<name>/``) and where set-up materialised it."""

    name: str
    folder: Path
    manifest: dict[str, Any]
    materialised: Path | None = None
    seconds: float | None = None
    error: str | None = None


def shipped_models(*, materialise: bool = False, force: bool = False, only: str | None = None) -> list[ShippedModel]:
    """The shipped models (``sgr models status``); with ``materialise`` (``sgr models materialise``, run by
    set-up) each is checked against its manifest's SHA-256s and folded into a usable model under
    ``SGR_HOME/models`` (``force``: again; ``only``: that one). A model that cannot be materialised carries its
    ``error``."""
    import time

    from sgr.core.errors import SgrError as _Err
    from sgr.llm import shipped as lm
    from sgr.llm.server import model_path
    from sgr.retrieval import shipped as encoder

    out: list[ShippedModel] = []
    for mod, make in ((lm, lambda: lm.materialise(model_path(), force=force)),
                      (encoder, lambda: encoder.materialise(force=force))):
        if not mod.available() or (only is not None and only != mod.NAME):
            continue
        item = ShippedModel(mod.NAME, mod.folder(), mod.manifest(check=False))
        try:
            if materialise:
                t0 = time.perf_counter()
                item.materialised = make()
                item.seconds = time.perf_counter() - t0
            else:
                target = mod.target(item.manifest)
                item.materialised = target if target.is_file() else None
        except _Err as exc:
            item.error = str(exc)
        out.append(item)
    return out


def tune(**options: Any) -> dict[str, Any]:
    """``sgr llm tune``: tune the local model on SGR's schema prompts for the loaded graph and export it for
    llama.cpp; returns the provenance recorded next to the weights (see :mod:`sgr.methods.sgr.tuning`)."""
    from sgr.methods.sgr.tuning import tune_from_options

    return tune_from_options(**options)
