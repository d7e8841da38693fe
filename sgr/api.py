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
from sgr.core.errors import ConfigError, EntityNotFound, InputError, SgrError
from sgr.core.types import Prediction, Question
from sgr.graph.server import NO_AUTH_WARNING
from sgr.graph.store import GraphStore
from sgr.retrieval.shipped_models import ShippedModel, shipped_models  # noqa: F401  (sgr models status|materialise)

if TYPE_CHECKING:
    from rich.console import Console

    from loaders.api import LoadProgress, LoadReport
    from loaders.examples import ExampleReport
    from sgr.evaluation.compare import Comparison
    from sgr.evaluation.runner import RunResult
    from sgr.evidence.inspect import Inspection
    from sgr.evidence.saved import QuestionSummary
    from sgr.graph.profile import GraphProfile
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
    weights: str | None = None  # which language model answered (the shipped, a tuned or the base weights …)
    retriever: str | None = None  # which relation retriever ranked the relations (shipped encoder, trained, cosine)
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
        save: bool = False, html: Path | str | None = None, min_confidence: float | None = None) -> AskResult:
    """Answer one typed question with a method of :data:`sgr.methods.registry.METHODS` and return its trace.

    ``topics`` are entity names or MIDs, one as a string or several as a list (default: linked from the text);
    ``hops`` at least 1, ``max_repairs`` at least 0; ``options`` are the method's ``-o KEY=VALUE``
    settings (an unknown key is a ConfigError naming the valid ones); ``llm`` replaces the configured chat model.
    With ``evidence`` the evidence subgraph is looked up and its Browser query / URL attached; ``save`` records it in
    the graph (``sgr evidence list``), ``html`` writes the offline page. Raises EntityNotFound (no topic entity in the
    graph), LLMError, Neo4jUnavailable, ConfigError, or SgrError when a method without its own trace fails outright.

    The answer carries its calibrated confidence; below ``min_confidence`` (default: the calibrator's threshold; 0:
    never) it is "not found in the graph" (``abstained``, with ``reasons``) and the candidates stay, marked low. An
    SGR question whose entities nothing links abstains too ("no entity of the question was found in the graph").
    An empty question is an InputError before any work.
    """
    from sgr.core.text import question_inputs
    from sgr.methods.confidence import abstention, attach_confidence

    text, topics = question_inputs(text, topics)
    if not text or not text.strip():
        raise InputError("the question is empty: type a question, e.g. sgr ask \"what does jamaican people speak?\"")
    if min_confidence is not None and not 0.0 <= min_confidence <= 1.0:
        raise InputError(f"--min-confidence must be between 0 and 1, got {min_confidence}")
    from sgr.methods.base import MethodContext, answered_by
    from sgr.methods.registry import create_method, method_options
    from sgr.methods.sgr.answerer import SGRAnswerer
    from sgr.methods.sgr.profiled import ProfiledAnswerer, check_runs_on

    hops = _count(hops, "hops (--hops)", minimum=1)
    max_repairs = _count(max_repairs, "max_repairs (--max-repairs)", minimum=0)
    store.verify()
    check_runs_on(store, method)  # SCR, RCR and the baselines read sgr's own :Entity shape only
    accepted = method_options(method)  # hops and max_repairs go only to a method that declares them
    opts = {**{k: v for k, v in (("hops", hops), ("max_repairs", max_repairs)) if k in accepted}, **(options or {})}
    answerer = create_method(method, MethodContext(store=store, options=opts, llm=llm))
    question = Question(id="ask", text=text.strip(), topic_entities=list(topics))
    if isinstance(answerer, ProfiledAnswerer):  # a user's own graph: the prediction is the trace
        result = AskResult(question=question, method=method, prediction=answerer.answer(question))
    elif isinstance(answerer, SGRAnswerer):  # SGR variants give their full trace
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
    result.weights, result.retriever = answered_by(answerer)
    result.abstained, result.reasons = abstention(result.prediction, min_confidence)
    info = result.prediction.extra.get("confidence") or {}
    result.threshold = min_confidence if min_confidence is not None else info.get("threshold")
    if evidence or save or html:
        from sgr.evidence.inspect import inspect_prediction

        result.evidence = inspect_prediction(store, question.text, result.prediction, method, save=save, html=html,
                                             topic_ids=result.topic_ids)
    return result


def _count(value: Any, what: str, *, minimum: int) -> int:
    """``value`` as a whole number of at least ``minimum``; else ConfigError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{what} must be a whole number of at least {minimum}, got {value!r}")
    return value


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


def load_example(name: str, *, store: GraphStore, index: bool = True, path: Path | None = None) -> "ExampleReport":
    """Load example graph ``name`` (``movies`` from the vendored Neo4j Browser; ``metaqa``: the KB at ``path`` as a
    property graph) with full-text indexes on its naming properties unless not ``index`` (``sgr load example``)."""
    from loaders.examples import load_example as load_one

    return load_one(store, name, index=index, path=path)


def graph_profile(*, store: GraphStore, out: Path | None = None, index: bool | None = None) -> "GraphProfile":
    """The graph profile sgr uses for ``store`` (``SGR_PROFILE``'s file, else read from the schema; ``sgr profile``),
    also written to ``out``; ``index`` True (the user's consent) creates full-text indexes on its naming properties."""
    from sgr.graph.profile import create_name_indexes, profile_for, save_profile

    profile = profile_for(store)
    if out is not None:
        save_profile(profile, out)
    if index is not None:
        profile.created = create_name_indexes(store, profile, consent=index)
    return profile


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
    CypherError for anything but a read; ConfigError for a ``limit`` below 1 or a ``timeout`` that is not a finite number
    of seconds above 0 (``--limit 0`` showed 1,000 rows, ``--timeout 0`` meant 30 s, ``nan`` was a traceback)."""
    from sgr.graph.store import MAX_TIMEOUT_S, check_timeout

    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ConfigError(f"limit (--limit) must be at least 1 row (got {limit!r})")
    try:
        check_timeout(timeout)
    except ConfigError:
        raise ConfigError(f"timeout (--timeout) must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:,.0f} "
                          f"(got {timeout!r})") from None
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


def warm_up(info: "ServerInfo") -> Path | None:
    """Ask one question of the graph in a detached process, so that the user's first question does not pay for most
    of Neo4j's cold plans and caches. The question names an entity of the graph (``what is <name>?``, the most
    connected of the first thousand, so that the question walks relations and CVTs as a user's does);
    its output goes to ``$SGR_HOME/neo4j/warmup.log``, which is returned. None when the store holds no named
    entity (nothing to warm)."""
    import os
    import subprocess
    import sys

    try:
        with GraphStore(info.uri) as store:
            rows = store.read("MATCH (e:Entity) WHERE e.name IS NOT NULL AND NOT e:CVT WITH e LIMIT 1000 "
                              "RETURN e.name AS name ORDER BY COUNT { (e)--() } DESC LIMIT 1")
    except SgrError:  # a server that does not answer this read has nothing to warm; the start itself succeeded
        return None
    if not rows:
        return None
    log = Path(info.log).parent / "warmup.log"
    cmd = [sys.executable, "-c", "from cli import app; app()", "ask", f"what is {rows[0]['name']}?", "--method",
           "sgr-compiled", "--min-confidence", "0"]
    cwd = Path(__file__).resolve().parent.parent  # where cli.py lives (an editable install, or this checkout)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # private, like the rest of the server's state
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         env={**os.environ, "NEO4J_URI": info.uri}, start_new_session=True)
    return log


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


# -- RCR's relation retriever (sgr.retrieval) -----------------------------------------------------------------------
def train_relations(dataset: str, *, store: GraphStore, method: str = "heads", config: dict[str, Any] | None = None,
                    data_dir: Path | None = None, limit: int | None = None, val_fraction: float = 0.1,
                    out: Path | None = None, progress: Any = None, bundle: Path | None = None,
                    from_bundle: Path | None = None) -> Any:
    """Train RCR's relation retriever against the store's relation vocabulary (``sgr relations train``).

    ``method``: ``heads`` (the paper's two heads; ``config`` = :class:`sgr.retrieval.training.RelationTrainConfig`
    fields) or ``encoder`` (the encoder fine-tuned; :class:`sgr.retrieval.encoder_training.EncoderTrainConfig`
    fields). With ``bundle`` (encoder only) the training step is written there for a GPU machine and the bundle's
    path is returned; with ``bundle`` and ``from_bundle`` the weights that run returned are folded and saved as a
    local run would. Otherwise returns the trained model (its file and how training went).
    """
    from sgr.core.errors import ConfigError

    if method == "heads":
        from sgr.retrieval.training import RelationTrainConfig, train_model

        heads = RelationTrainConfig(**(config or {}))
        store.verify()
        return train_model(store, dataset, config=heads, data_dir=data_dir, limit=limit, val_fraction=val_fraction,
                           out=out, progress=progress)
    if method != "encoder":
        raise ConfigError(f"unknown --method {method!r} (known: heads, encoder)")
    from sgr.retrieval import encoder_bundle
    from sgr.retrieval.encoder_training import EncoderTrainConfig, train_encoder_model

    cfg = EncoderTrainConfig(**(config or {}))  # a bad value fails here, before any work
    store.verify()
    if bundle and not from_bundle:
        return encoder_bundle.write_for_store(store, dataset, Path(bundle), config=cfg, data_dir=data_dir, limit=limit,
                                              val_fraction=val_fraction)
    if from_bundle:
        return encoder_bundle.fold_for_store(store, bundle=Path(bundle), returned=Path(from_bundle), out=out)
    return train_encoder_model(store, dataset, config=cfg, data_dir=data_dir, limit=limit, val_fraction=val_fraction,
                               out=out, progress=progress, show_progress=True)


def relation_retrievers(*, store: GraphStore, model: str = "auto") -> dict[str, Any]:
    """Plain cosine, and beside it the trained retriever ``model`` names (a file, or ``auto``: the newest trained on
    this graph version) when there is one: ``{name: retriever}`` for :func:`evaluate_relations`."""
    from sgr.retrieval.relations import load_retriever

    store.verify()
    retrievers = {"cosine": load_retriever(store, "cosine")}
    if model != "cosine":
        trained = load_retriever(store, model)
        if trained.trained:
            retrievers[f"trained ({Path(trained.info['model']).name})"] = trained
    return retrievers


def evaluate_relations(retrievers: dict[str, Any], dataset: str, *, ks: Sequence[int] = (10, 50, 100, 200),
                       limit: int | None = None, seed: int = 0, data_dir: Path | None = None) -> Any:
    """RRA@k (RCR §5.1) of each retriever on ``dataset`` (``sgr relations eval``)."""
    from sgr.retrieval.relations import evaluate_retrieval

    return evaluate_retrieval(retrievers, dataset, data_dir=data_dir, limit=limit, seed=seed, ks=ks)


def rank_relations(question: str, *, store: GraphStore, k: int = 10,
                   model: str = "auto") -> tuple[str, int, list[tuple[str, float]]]:
    """The ``k`` relations of the graph most similar to ``question`` (``sgr relations top``): the retriever's name,
    the vocabulary size, and ``(relation, score)`` best first."""
    from sgr.retrieval.relations import load_retriever

    store.verify()
    retriever = load_retriever(store, model)
    return retriever.name, len(retriever.relations), [(r.name, r.score) for r in retriever.retrieve(question, k)]


# -- SCR, the stepwise GNN retriever (sgr.methods.scr) ----------------------------------------------------------------
def train_scr(dataset: str, *, out: Path | None = None, single_step: bool = False,
              model: dict[str, Any] | None = None, training: dict[str, Any] | None = None, device: str = "auto",
              threads: int = 2, graph_version: str | None = None, supervision: str = "shortest",
              train_per_hop: int | None = None, val_per_hop: int | None = None, bundle: Path | None = None,
              from_bundle: Path | None = None) -> Any:
    """Train SCR (``sgr scr train``): stepwise InfoNCE, ``best.pt`` / ``last.pt`` / ``history.json`` in ``out``
    (default ``$SGR_HOME/scr/<dataset>[-single-step]``), ``best.pt`` recorded as the default checkpoint.

    ``model`` / ``training``: fields of :class:`sgr.methods.scr.model.SCRConfig` / :class:`sgr.methods.scr.train.
    ScrTrainConfig`. With ``bundle`` the training step is written there for a GPU machine (its path is returned);
    with ``bundle`` and ``from_bundle`` the weights that run returned are folded into ``out`` (the data options are
    then the bundle's). ``graph_version`` trains from cached subgraphs without Neo4j. Returns the training result.
    """
    from sgr.core.config import sgr_home
    from sgr.core.errors import ConfigError
    from sgr.methods.scr.data import SUPERVISION
    from sgr.methods.scr.model import SCRConfig
    from sgr.methods.scr.train import ScrTrainConfig, record_latest_checkpoint, run_training

    if supervision not in SUPERVISION:
        raise ConfigError(f"unknown --supervision {supervision!r} (known: {', '.join(SUPERVISION)})")
    folder = Path(out) if out else sgr_home() / "scr" / (Path(dataset).stem + ("-single-step" if single_step else ""))
    if from_bundle is not None:
        from sgr.methods.scr.bundle import fold, manifest

        result, _ = fold(Path(bundle), Path(from_bundle), folder)  # type: ignore[arg-type]
        data = manifest(Path(bundle))["data"]  # type: ignore[arg-type]
        record_latest_checkpoint(result.best_path, data["dataset"], data["graph_version"], single_step)
        return result
    mcfg = SCRConfig(**{"single_step": single_step, **(model or {})})
    tcfg = ScrTrainConfig(**(training or {}))
    store = None
    if graph_version is None:
        store = GraphStore.from_settings()
        store.verify()
    metaqa = dataset == "metaqa"
    sizes = {"train_per_hop": train_per_hop if train_per_hop is not None else (1000 if metaqa else 0),
             "val_per_hop": val_per_hop if val_per_hop is not None else (100 if metaqa else 0)}
    try:
        if bundle is not None:
            from sgr.methods.scr.bundle import write_for_dataset

            return write_for_dataset(dataset, Path(bundle), store=store, model_cfg=mcfg, train_cfg=tcfg,
                                     graph_version=graph_version, supervision=supervision, **sizes)
        return run_training(dataset, store=store, out_dir=folder, model_cfg=mcfg, train_cfg=tcfg, device=device,
                            threads=threads, graph_version=graph_version, supervision=supervision, **sizes)
    finally:
        if store is not None:
            store.close()


def scr_paths(question: str, topics: Sequence[str], *, store: GraphStore, k: int = 10,
              checkpoint: Path | None = None, device: str = "auto") -> list[Any]:
    """SCR's top-``k`` reasoning paths for ``question`` from the topic entities (names or ids) with their probability
    P(a, p | q) (``sgr scr paths``); EntityNotFound when none of the topics is in the graph."""
    from sgr.methods.scr.method import scr_paths as _paths
    from sgr.retrieval.entities import EntityLinker

    store.verify()
    found = EntityLinker(store).resolve(list(topics))
    ids = list(dict.fromkeys(i for t in topics for i in found.get(t, [])))
    if not ids:
        raise EntityNotFound(f"none of the topic entities {list(topics)} is in the graph")
    return _paths(store, question, ids, k, checkpoint=checkpoint, device=device)
