"""SCR as question-answering methods (:class:`sgr.core.types.Answerer`) and as a path scorer for SGR.

Methods (registered in :data:`sgr.methods.registry.METHODS`):

* ``scr`` — beam search (K = 10, drop P < 0.02, eqs. 12–15); the answers are the hypothesis answers of the
  paths, ranked by P(a | q) = Σ_p P(a, p | q) (eq. 13, ``answer_score=sum``) or by their best path's
  geometric-mean step probability (``geometric``) or by their relation path's pooled probability (``pattern``;
  :mod:`sgr.methods.scr.beam`), as the checkpoint chose on
  validation when it was trained (:func:`sgr.methods.scr.train.choose_answer_score`). No LLM.
* ``scr+llm`` — the same paths and hypothesis answers written into the paper's prompt (Figure 2) for an LLM
  (:class:`sgr.llm.client.LLM`), whose answer lines are the prediction.
* ``scr-greedy`` — ablation "w/o beam search" (Table 4): K = 1, the argmax entity at each step (eq. 7).
* ``scr-single-step`` — ablation "w/o multi-step" (Table 4): a separately trained model aligns q_0 with the
  answer among all of G_q; each kept answer is explained by a shortest walk from the topic entity.

Checkpoints: the method option ``checkpoint`` (``single_checkpoint`` for ``scr-single-step``), else
``SGR_SCR_CHECKPOINT`` / ``SGR_SCR_SINGLE_CHECKPOINT``, else what ``sgr scr train`` recorded last in
``SGR_HOME/scr/latest.json``. Other options (:class:`ScrOptions`, parsed by :func:`sgr.methods.base.parse_options`;
an unknown key is a ConfigError): ``beam`` (K), ``min_prob``, ``device`` (auto|cpu|cuda), ``threads``,
``graph_version``, ``batch_size``, ``precision`` (the question encoder at CPU inference: ``int8`` dynamic
quantisation, ``bf16`` autocast, ``fp32``; ``auto`` = int8 where PyTorch's x86 quantised engine runs and the model's
int8 vectors agree with its float ones, else bf16 on CPUs with native bf16, else fp32), ``answer_score`` (``sum`` |
``geometric`` | ``pattern``).
``scr+llm``'s LLM call is measured by :class:`sgr.methods.base.UsageMeter`.

:func:`scr_paths` gives SGR's collaborative stage SCR's paths with ρ = path probability.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from sgr.core.errors import ConfigError
from sgr.core.text import normalize, parse_answer_lines
from sgr.methods.base import UsageMeter, accepts, llm_cache_option, parse_options
from sgr.methods.scr.beam import ANSWER_SCORES, BeamPath, SearchResult, beam_search, single_step_search
from sgr.methods.scr.data import ScrSubgraph, SubgraphSource
from sgr.methods.scr.model import INFERENCE_PRECISIONS, SCRModel, int8_available, resolve_device
from sgr.graph.store import GraphStore
from sgr.core.types import Answer, Prediction, Question, ReasoningPath, Usage

STEPWISE = "stepwise"
SINGLE_STEP = "single-step"

#: Figure 2 of the paper: the LLM input prompt for KG-based RAG.
PROMPT_TEMPLATE = ("# Reasoning Paths:\n{paths}\n\n# Question:\n{question}\n\n"
                   "Based on the reasoning paths, answer the given question as simply as possible. "
                   "Please return only the answers, with each answer on a new line.")

_models: dict[tuple[str, str], tuple[SCRModel, dict[str, Any]]] = {}
_models_lock = threading.Lock()
_sources: dict[tuple[int, str], SubgraphSource] = {}


def resolve_checkpoint(kind: str = STEPWISE, explicit: str | Path | None = None) -> Path:
    """The checkpoint to use (see module docstring); ConfigError with the fix when there is none."""
    if explicit:
        return Path(explicit).expanduser()
    from sgr.core.config import scr_checkpoint

    env = scr_checkpoint(single_step=kind == SINGLE_STEP)
    if env:
        return env
    from sgr.methods.scr.train import latest_checkpoint_file

    f = latest_checkpoint_file()
    if f.exists():
        data = json.loads(f.read_text())
        path = data.get(kind) or (data.get("checkpoint") if kind == STEPWISE else None)
        if path:
            return Path(path)
    flag = " --single-step" if kind == SINGLE_STEP else ""
    var = "SGR_SCR_SINGLE_CHECKPOINT" if kind == SINGLE_STEP else "SGR_SCR_CHECKPOINT"
    raise ConfigError(f"no SCR {kind} checkpoint: train one with `sgr scr train --dataset …{flag}` "
                      f"or set {var} to a .pt file")


def load_model(path: Path, device: str = "auto") -> tuple[SCRModel, dict[str, Any]]:
    """Load a checkpoint once per process and device."""
    dev = resolve_device(device)
    key = (str(Path(path).resolve()), str(dev))
    with _models_lock:
        if key not in _models:
            _models[key] = SCRModel.load(Path(path), dev)
        return _models[key]


#: ``precision`` values: the model's :data:`~sgr.methods.scr.model.INFERENCE_PRECISIONS` and ``auto``.
PRECISIONS = ("auto", *INFERENCE_PRECISIONS)


#: The lowest :meth:`~sgr.methods.scr.model.SCRModel.int8_agreement` at which ``auto`` runs a model in int8 (the
#: MiniLM checkpoints measure 0.97–0.98 and keep their test Hits@1; the MPNet ones about 0).
INT8_MIN_AGREEMENT = 0.95


def inference_precision(precision: str, device: torch.device, model: SCRModel | None = None) -> str:
    """The question encoder's number format for ``precision`` on ``device`` (int8 and bf16 are CPU-only).

    ``auto`` picks int8 where PyTorch's x86 quantised engine runs (``bench/scr.py eval``, ``scr`` against
    ``scr-bf16``, 1 thread: WebQSP p50 55 → 33 ms, MetaQA 3-hop 129 → 78 ms, Hits@1 equal or higher on 300 test
    questions per group) and ``model``'s int8 question vectors agree with its float32 ones
    (:data:`INT8_MIN_AGREEMENT`), else bf16 on CPUs with native bf16 (AVX512-BF16), else fp32."""
    if precision not in PRECISIONS:
        raise ConfigError(f"SCR precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    if device.type != "cpu":
        return "fp32"
    has_int8 = int8_available()
    if precision == "int8" and not has_int8:
        raise ConfigError("SCR precision int8: this PyTorch has no x86 quantised engine here (use auto, bf16 or fp32)")
    if precision != "auto":
        return precision
    if has_int8 and (model is None or model.int8_agreement() >= INT8_MIN_AGREEMENT):
        return "int8"
    return "bf16" if bool(torch.ops.mkldnn._is_mkldnn_bf16_supported()) else "fp32"


def to_reasoning_path(sg: ScrSubgraph, path: BeamPath, source: str = "scr") -> ReasoningPath:
    """A search path as :class:`ReasoningPath` (graph ids, relation names, stored directions, score = P(a, p | q))."""
    return ReasoningPath(nodes=[sg.node_ids[n] for n in path.nodes],
                         relations=[sg.relations[int(sg.edges[e, 1])] for e in path.edges],
                         score=path.prob, names=[sg.names[n] for n in path.nodes],
                         directions=["out" if d == 0 else "in" for d in path.directions], source=source)


def render_path(rp: ReasoningPath) -> str:
    """``Austria → country.capital → Vienna`` (the paper's path text; CVT nodes shown by id)."""
    labels = [(rp.names[i] if i < len(rp.names) and rp.names[i] else n) for i, n in enumerate(rp.nodes)]
    parts = [labels[0]]
    for i, rel in enumerate(rp.relations):
        parts.append(rel if (i >= len(rp.directions) or rp.directions[i] == "out") else f"{rel} (reverse)")
        parts.append(labels[i + 1])
    return " → ".join(parts)


def build_prompt(question: str, paths: Sequence[ReasoningPath]) -> str:
    """Figure 2: one line per path, ``<Path k><Hypothesis Answer k>``, then the question and the instruction."""
    lines = [f"{render_path(p)} (hypothesis answer: {p.answer_name})" for p in paths]
    return PROMPT_TEMPLATE.format(paths="\n".join(lines) if lines else "(none)", question=question)


@dataclass
class SCRAnswerer:
    """``scr`` / ``scr-greedy`` / ``scr-single-step`` / ``scr+llm`` over one store (see module docstring)."""

    store: GraphStore | None
    checkpoint: Path
    name: str = "scr"
    beam_size: int = 10
    min_prob: float = 0.02
    single_step: bool = False
    llm: Any = None
    device: str = "auto"
    graph_version: str | None = None
    batch_size: int = 16
    precision: str = "auto"
    answer_score: str | None = None  # None: the checkpoint's choice on validation, else eq. 13's "sum"
    _source: SubgraphSource | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.model, self.meta = load_model(self.checkpoint, self.device)
        self.answer_score = self.answer_score or self.meta.get("answer_score", "sum")
        if self.answer_score not in ANSWER_SCORES:
            raise ConfigError(f"SCR answer_score must be one of {', '.join(ANSWER_SCORES)}, not {self.answer_score!r}")
        self._precision = inference_precision(self.precision, self.model.device, self.model)
        self._source = SubgraphSource(self.store, self.model.cfg.subgraph, self.graph_version)

    @property
    def encoder_precision(self) -> str:
        """The question encoder's number format at CPU inference (``precision`` resolved for this model)."""
        return self._precision

    @property
    def source(self) -> SubgraphSource:
        assert self._source is not None
        return self._source

    def _search(self, items: list[tuple[str, ScrSubgraph]]) -> list[SearchResult]:
        self.model.inference_precision = self._precision  # set per search: answerers of one checkpoint share its model
        if self.single_step:
            return single_step_search(self.model, items, beam_size=self.beam_size, min_prob=self.min_prob)
        return beam_search(self.model, items, beam_size=self.beam_size, min_prob=self.min_prob,
                           answer_score=self.answer_score)

    def answer(self, question: Question) -> Prediction:
        return self.answer_many([question])[0]

    def answer_many(self, questions: Sequence[Question]) -> list[Prediction]:
        """Answer several questions with one batched search (GNN and encoder calls shared)."""
        out: list[Prediction] = []
        for i in range(0, len(questions), self.batch_size):
            out.extend(self._answer_batch(list(questions[i:i + self.batch_size])))
        return out

    def _answer_batch(self, questions: list[Question]) -> list[Prediction]:
        t0 = time.perf_counter()
        q0, s0 = (self.store.query_count, self.store.query_seconds) if self.store else (0, 0.0)
        subgraphs = [self.source.for_question(q) for q in questions]
        t1 = time.perf_counter()
        results = self._search([(q.text, sg) for q, sg in zip(questions, subgraphs)])
        t2 = time.perf_counter()
        n = len(questions)
        preds = []
        for q, sg, res in zip(questions, subgraphs, results):
            usage = Usage()
            usage.add_stage("subgraph", (t1 - t0) / n)
            usage.add_stage("retrieval", (t2 - t1) / n)
            if self.store:
                usage.neo4j_queries = (self.store.query_count - q0) // n
                usage.neo4j_seconds = (self.store.query_seconds - s0) / n
            preds.append(self._prediction(q, sg, res, usage))
        if self.llm is not None:
            for p in preds:
                self._llm_answer(p, next(q for q in questions if q.id == p.question_id))
        for p in preds:
            p.usage.total_seconds = sum(p.usage.stage_seconds.values())
        return preds

    def _prediction(self, q: Question, sg: ScrSubgraph, res: SearchResult, usage: Usage) -> Prediction:
        source = "scr-single-step" if self.single_step else "scr"
        paths = [to_reasoning_path(sg, p, source) for p in res.paths]
        answers = []
        for node, prob in res.answers:
            answers.append(Answer(text=sg.label(node), id=sg.node_ids[node], score=prob,
                                  paths=[rp for rp, p in zip(paths, res.paths) if p.answer == node]))
        extra = {"subgraph_nodes": sg.num_nodes, "subgraph_edges": sg.num_edges, "subgraph_truncated": sg.truncated,
                 "topics_found": len(sg.topics), "encoder_calls": res.encoder_calls,
                 "encoded_texts": res.encoded_texts, "checkpoint": str(self.checkpoint)}
        return Prediction(question_id=q.id, answers=answers, paths=paths, usage=usage, method=self.name,
                          error=None if sg.topics else "no topic entity of the question is in the graph", extra=extra)

    def _llm_answer(self, pred: Prediction, q: Question) -> None:
        from langchain_core.messages import HumanMessage

        prompt = build_prompt(q.text, pred.paths)
        meter = UsageMeter(None, self.llm)
        with meter.measure() as usage, meter.stage("llm"):
            text = self.llm.complete([HumanMessage(content=prompt)], stage="scr_answer", max_tokens=64)
        pred.usage.merge(usage)
        lines = parse_answer_lines(text)
        by_norm = {normalize(a.text): a for a in pred.answers}
        pred.extra["hypotheses"] = [a.text for a in pred.answers]
        pred.extra["llm_output"] = text
        pred.answers = [by_norm.get(normalize(a), Answer(text=a, score=1.0 / (k + 1))) for k, a in enumerate(lines)]


@dataclass
class ScrOptions:
    """``-o`` options of the SCR methods (see the module docstring)."""

    checkpoint: str | None = None  # stepwise model (.pt); default: SGR_SCR_CHECKPOINT or the last trained
    single_checkpoint: str | None = None  # the single-step ablation's model
    beam: int = 10  # K (scr-greedy fixes 1)
    min_prob: float = 0.02  # paths below this probability are dropped
    device: str = "auto"  # auto, cpu or cuda
    threads: int | None = None  # torch CPU threads
    graph_version: str | None = None  # G_q cache to read when no store is given
    batch_size: int = 16  # questions searched together by answer_many
    precision: str = "auto"  # question encoder on CPU: auto (int8, else bf16 where it runs), fp32, bf16, int8
    answer_score: str | None = None  # sum (eq. 13), geometric or pattern; default: the checkpoint's choice


def _build(ctx: Any, name: str, *, single: bool = False, beam: int | None = None, with_llm: bool = False) -> SCRAnswerer:
    opts = parse_options(ScrOptions, dict(getattr(ctx, "options", {}) or {}), method=name)
    kind = SINGLE_STEP if single else STEPWISE
    ckpt = resolve_checkpoint(kind, opts.single_checkpoint if single else opts.checkpoint)
    if opts.threads:
        torch.set_num_threads(opts.threads)
    llm = None
    if with_llm:
        llm = getattr(ctx, "llm", None)
        if llm is None:
            from sgr.llm.client import shared_llm

            llm = shared_llm(cache=llm_cache_option(getattr(ctx, "options", {}), "scr"))
    return SCRAnswerer(store=ctx.store, checkpoint=ckpt, name=name, beam_size=beam if beam is not None else opts.beam,
                       min_prob=opts.min_prob, single_step=single, llm=llm, device=opts.device,
                       graph_version=opts.graph_version, batch_size=opts.batch_size, precision=opts.precision,
                       answer_score=opts.answer_score)


@accepts(ScrOptions)
def create_scr(ctx: Any) -> SCRAnswerer:
    return _build(ctx, "scr")


@accepts(ScrOptions)
def create_scr_llm(ctx: Any) -> SCRAnswerer:
    return _build(ctx, "scr+llm", with_llm=True)


@accepts(ScrOptions)
def create_scr_greedy(ctx: Any) -> SCRAnswerer:
    return _build(ctx, "scr-greedy", beam=1)


@accepts(ScrOptions)
def create_scr_single_step(ctx: Any) -> SCRAnswerer:
    return _build(ctx, "scr-single-step", single=True)


def scr_paths(store: GraphStore, question: Question | str, topic_ids: Sequence[str], k: int = 10, *,
              checkpoint: str | Path | None = None, min_prob: float = 0.02, device: str = "auto") -> list[ReasoningPath]:
    """SCR's top-``k`` reasoning paths from ``topic_ids`` (graph ids), ``score`` = P(a, p | q) (eq. 14).

    For SGR's collaborative stage: each path is a candidate with ρ = its probability; ``source = "scr"``.
    The G_q is cut from ``store`` with the checkpoint's settings (cached by graph version).
    """
    text = question.text if isinstance(question, Question) else str(question)
    model, _ = load_model(resolve_checkpoint(STEPWISE, checkpoint), device)
    model.inference_precision = inference_precision("auto", model.device, model)
    key = (id(store), model.cfg.subgraph.key())
    with _models_lock:
        source = _sources.get(key)
        if source is None or source.store is not store:
            source = _sources[key] = SubgraphSource(store, model.cfg.subgraph)
    sg = source.get(list(topic_ids))
    if not sg.topics:
        return []
    res = beam_search(model, [(text, sg)], beam_size=k, min_prob=min_prob)[0]
    return [to_reasoning_path(sg, p) for p in res.paths]
