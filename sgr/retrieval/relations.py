"""Relation retrieval: one protocol, three implementations, and how a retriever for a graph is loaded.

Every method that needs candidate relations (SGR's schema stage, RCR) asks a :class:`RelationRetriever`:

    retrieve(question, k, among=None) -> list[ScoredRelation]     (best first; names from the graph's vocabulary)

* :class:`CosineRelationRetriever` — plain cosine between the frozen sentence embeddings of the question and of
  each relation's readable text (the RCR paper's "Cosine Similarity" baseline, Table 5):
  ``sim(q, r) = q·r / (|q| |r|)``.
* :class:`TrainedRelationRetriever` — RCR's dual encoder (§4.1.1, eq. 1): the same embeddings through the two
  trained projection heads, ``sim(q, r) = cos(f_q(q), f_r(r))`` (heads and training in
  :mod:`sgr.retrieval.training`); with a fusion weight ``w`` chosen on validation the score is
  ``(1 − w)·cos(f_q(q), f_r(r)) + w·cos(q, r)``.
* :class:`FineTunedRelationRetriever` — plain cosine of an encoder fine-tuned for relation retrieval
  (:mod:`sgr.retrieval.encoder_training`): ``sim(q, r) = cos(E(q), E(r))``.

:func:`load_retriever` builds any of them for a store: ``"auto"`` picks the newest model trained on the current graph
version (``SGR_RELATION_MODEL`` names a file instead), else the relation encoder that ships with sgr
(:mod:`sgr.retrieval.shipped`), and falls back to cosine. The relation matrix of a
(store, graph version, encoder, model) is built once per process and shared. :func:`evaluate_retrieval` measures
RRA@k (§5.1) of several retrievers on a dataset.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from sgr.core.config import relation_model
from sgr.core.errors import ConfigError
from sgr.graph.store import GraphStore, relation_text
from sgr.retrieval.supervision import RelationExample, evaluation_examples
from sgr.retrieval.training import (DEFAULT_ENCODER, RRA_KS, RelationHeads, embed, encoder_folder, find_model,
                                    gold_ranks, graph_relations, read_meta, read_model, rra_at_k)


@dataclass
class ScoredRelation:
    """A relation type of the graph with its relevance to the question (higher is better)."""

    name: str
    score: float
    text: str = ""
    similarity: float = 0.0  # the retriever's raw similarity to the question
    picked_rank: int | None = None  # 1-based rank in an LLM's ordered choice, None when not picked


@runtime_checkable
class RelationRetriever(Protocol):
    """Ranks the graph's relations for a question. ``among`` restricts the ranking to these names (for example the
    relation types around the linked entities); names outside the vocabulary are never returned."""

    relations: list[str]
    trained: bool

    def retrieve(self, question: str, k: int, among: Sequence[str] | None = None) -> list[ScoredRelation]: ...

    def score_of(self, question: str, names: Sequence[str]) -> dict[str, float]: ...

    def vectors(self, names: Sequence[str]) -> np.ndarray: ...


class CosineRelationRetriever:
    """Plain cosine similarity of the frozen embeddings (RCR Table 5's "Cosine Similarity")."""

    name = "cosine"
    trained = False

    def __init__(self, relations: Sequence[str], texts: Sequence[str] | None = None, *,
                 encoder: str = DEFAULT_ENCODER, graph_version: str | None = None,
                 info: dict[str, Any] | None = None) -> None:
        self.relations = list(relations)
        self.texts = list(texts) if texts is not None else [relation_text(r) for r in self.relations]
        self.encoder = encoder
        self.graph_version = graph_version
        self.info = dict(info or {})
        self._index = {r: i for i, r in enumerate(self.relations)}
        raw = embed(self.texts, encoder) if self.texts else np.zeros((0, 1), dtype=np.float32)
        self.matrix = self._project(raw, "r")  # (N, d) unit rows in the retrieval space

    @property
    def vocabulary(self) -> set[str]:
        return set(self.relations)

    def _project(self, x: np.ndarray, side: str) -> np.ndarray:  # noqa: ARG002 - the trained subclass uses side
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

    def question_vectors(self, questions: Sequence[str]) -> np.ndarray:
        return self._project(embed(list(questions), self.encoder), "q")

    def vectors(self, names: Sequence[str]) -> np.ndarray:
        """Retrieval-space rows of the named relations (vocabulary rows reused; other names embedded now)."""
        missing = [n for n in dict.fromkeys(names) if n not in self._index]
        extra = dict(zip(missing, self._project(embed([relation_text(n) for n in missing], self.encoder), "r"))) \
            if missing else {}
        if not names:
            return np.zeros((0, self.matrix.shape[1]), dtype=np.float32)
        return np.stack([self.matrix[self._index[n]] if n in self._index else extra[n] for n in names])

    def scores(self, questions: Sequence[str]) -> np.ndarray:
        """``(len(questions), len(relations))`` similarities."""
        if not self.relations:
            return np.zeros((len(questions), 0), dtype=np.float32)
        return self.question_vectors(questions) @ self.matrix.T

    def retrieve(self, question: str, k: int, among: Sequence[str] | None = None) -> list[ScoredRelation]:
        """The ``k`` best relations (of ``among`` when given), best first; ties keep vocabulary order."""
        row = self.scores([question])[0]
        order = np.argsort(-row, kind="stable")
        if among is not None:
            allowed = set(among)
            order = np.array([i for i in order if self.relations[i] in allowed], dtype=int)
        return [ScoredRelation(self.relations[i], float(row[i]), self.texts[i], float(row[i]))
                for i in order[:max(0, k)]]

    def score_of(self, question: str, names: Sequence[str]) -> dict[str, float]:
        """The similarity of each named relation to the question (0 for names outside the vocabulary)."""
        row = self.scores([question])[0]
        return {n: float(row[self._index[n]]) if n in self._index else 0.0 for n in names}

    def similar_relations(self, relation: str, candidates: Sequence[str], k: int) -> list[tuple[str, float]]:
        """The ``k`` of ``candidates`` closest to ``relation`` in the relation space (RCR §4.3 substitution)."""
        cands = [c for c in dict.fromkeys(candidates) if c != relation]
        if k <= 0 or not cands:
            return []
        vecs = self.vectors([relation, *cands])
        sims = vecs[1:] @ vecs[0]
        order = np.argsort(-sims, kind="stable")[:k]
        return [(cands[i], float(sims[i])) for i in order]

    def evaluate(self, examples: Sequence[RelationExample], ks: Iterable[int] = RRA_KS) -> dict[int, float]:
        """RRA@k (RCR §5.1) of this retriever on ``examples``, ranked over its own vocabulary."""
        if not examples:
            return {k: 0.0 for k in ks}
        sc = self.scores([e.question for e in examples])
        return rra_at_k(gold_ranks(sc, self.relations, [e.relations for e in examples]), ks)


class TrainedRelationRetriever(CosineRelationRetriever):
    """RCR's trained dual encoder: ``cos(f_q(q), f_r(r))`` (eq. 1) with the heads of :mod:`sgr.retrieval.training`."""

    name = "rcr-trained"
    trained = True

    def __init__(self, relations: Sequence[str], heads: RelationHeads, texts: Sequence[str] | None = None, *,
                 encoder: str = DEFAULT_ENCODER, graph_version: str | None = None,
                 info: dict[str, Any] | None = None, cosine_weight: float = 0.0) -> None:
        self.heads = heads.eval()
        self.cosine_weight = float(cosine_weight)
        super().__init__(relations, texts, encoder=encoder, graph_version=graph_version, info=info)
        raw = embed(self.texts, encoder) if self.texts else np.zeros((0, 1), dtype=np.float32)
        self._raw = raw / np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), 1e-12)

    def scores(self, questions: Sequence[str]) -> np.ndarray:
        """``(len(questions), len(relations))``: eq. 1, fused with the frozen cosine when ``cosine_weight > 0``."""
        if not self.relations:
            return np.zeros((len(questions), 0), dtype=np.float32)
        raw_q = embed(list(questions), self.encoder)
        trained = self._project(raw_q, "q") @ self.matrix.T
        if not self.cosine_weight:
            return trained
        raw_q = raw_q / np.maximum(np.linalg.norm(raw_q, axis=1, keepdims=True), 1e-12)
        return (1.0 - self.cosine_weight) * trained + self.cosine_weight * (raw_q @ self._raw.T)

    def _project(self, x: np.ndarray, side: str) -> np.ndarray:
        with torch.inference_mode():
            t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
            y = self.heads.project_questions(t) if side == "q" else self.heads.project_relations(t)
        return y.numpy()


class FineTunedRelationRetriever(CosineRelationRetriever):
    """Cosine of an encoder fine-tuned for relation retrieval (:mod:`sgr.retrieval.encoder_training`):
    ``s(q, r) = cos(E(q), E(r))`` with ``E`` the trained encoder, its relation vectors computed once per graph."""

    name = "rcr-encoder"
    trained = True


def _mtime(path: Path) -> float:
    return path.stat().st_mtime if path.exists() else 0.0


_SHARED: dict[tuple[str, str, str, str], CosineRelationRetriever] = {}
_SHARED_LOCK = threading.Lock()


def load_retriever(store: GraphStore, model: str | Path | None = "auto",
                   encoder: str = DEFAULT_ENCODER) -> CosineRelationRetriever:
    """A retriever over the store's relations (:func:`sgr.retrieval.training.graph_relations`).

    ``model``: a path to a saved model (heads over the frozen encoder, or a fine-tuned encoder: ``sgr relations
    train --method heads|encoder``); ``"auto"`` — :func:`default_relation_model`; ``None`` or ``"cosine"`` — plain
    cosine. Built once per process for each (store, graph version, encoder, model).
    """
    version = store.graph_version()
    if model == "auto":
        model = default_relation_model(version) if encoder == DEFAULT_ENCODER else relation_model() or find_model(version)
    label = "cosine" if model in (None, "cosine") else f"{model}@{_mtime(Path(model))}"
    key = (store.uri, version, encoder, label)
    with _SHARED_LOCK:
        if key not in _SHARED:
            names, texts = graph_relations(store)  # an empty graph gives a retriever that returns nothing
            if label == "cosine":
                _SHARED[key] = CosineRelationRetriever(names, texts, encoder=encoder, graph_version=version)
            elif (meta := read_meta(Path(model)))["kind"] == "encoder":
                folder = encoder_folder(Path(model))
                if encoder != DEFAULT_ENCODER:
                    raise ConfigError(f"{model}: a fine-tuned encoder; it cannot run on encoder {encoder!r}")
                _SHARED[key] = FineTunedRelationRetriever(names, texts, encoder=str(folder), graph_version=version,
                                                          info={"model": str(model), **meta})
            else:
                heads, meta = read_model(Path(model))
                trained_on = meta.get("encoder", DEFAULT_ENCODER)
                if trained_on != encoder:
                    if encoder != DEFAULT_ENCODER:
                        raise ConfigError(f"{model}: trained on encoder {trained_on!r}, not {encoder!r}")
                    encoder = trained_on  # the model's own encoder when none was asked for
                _SHARED[key] = TrainedRelationRetriever(names, heads, texts, encoder=encoder, graph_version=version,
                                                        info={"model": str(model), **meta},
                                                        cosine_weight=float(meta.get("cosine_weight", 0.0)))
        return _SHARED[key]


def default_relation_model(graph_version: str) -> str | Path | None:
    """What ``"auto"`` loads: ``SGR_RELATION_MODEL`` when set (a path, or ``cosine``), else the newest model trained
    on this graph version (``sgr relations train``), else the shipped relation encoder
    (:func:`sgr.retrieval.shipped.shipped_relation_model`; not with ``SGR_SHIPPED_MODELS=0``), else None (cosine)."""
    from sgr.retrieval.shipped import shipped_relation_model

    return relation_model() or find_model(graph_version) or shipped_relation_model()


def sgr_retriever(store: GraphStore, option: Any = None) -> Any:
    """SGR's relation retriever for its ``relation_retriever`` option: unset — :func:`default_relation_model` (a
    model trained for this graph, else the shipped encoder), else ``None`` (SGR's plain MiniLM cosine); ``""`` or
    ``"embedding"`` — ``None``; ``"auto"``, ``"cosine"`` or a path — :func:`load_retriever`; a retriever object as
    is."""
    if option is None:
        option = "auto" if default_relation_model(store.graph_version()) not in (None, "cosine") else "embedding"
    if not isinstance(option, str):
        return option
    return None if option in ("", "embedding") else load_retriever(store, option)


def trained_model_for(store: GraphStore) -> str | None:
    """The model ``load_retriever(store, "auto")`` would load (:func:`default_relation_model`), or None when it
    would fall back to cosine."""
    model = default_relation_model(store.graph_version())
    return str(model) if model and model != "cosine" else None


def describe_retriever(retriever: Any) -> str:
    """One line naming a relation retriever: plain cosine, the shipped encoder, or a model trained for the graph."""
    if retriever is None:
        return "MiniLM cosine (untrained)"
    info = getattr(retriever, "info", {}) or {}
    if "shipped" in info:
        return f"the shipped encoder {info['shipped'].get('folder')} ({retriever.name})"
    if info.get("model"):
        return f"{retriever.name} {info['model']} (trained on {info.get('dataset', '?')})"
    return f"{getattr(retriever, 'name', 'cosine')} (untrained)"


@dataclass
class RetrievalEval:
    """RRA@k of several retrievers on one evaluation set."""

    dataset: str
    questions: int
    vocabulary_size: int
    ceiling: float  # share of questions whose gold relations are all in the vocabulary
    rra: dict[str, dict[int, float]]  # retriever label -> {k: RRA@k}


def evaluate_retrieval(retrievers: dict[str, CosineRelationRetriever], dataset: str, *, data_dir: Path | None = None,
                       limit: int | None = None, seed: int = 0, ks: Iterable[int] = RRA_KS) -> RetrievalEval:
    """RRA@k (RCR §5.1) of each retriever on ``dataset`` (see :func:`sgr.retrieval.supervision.evaluation_examples`)."""
    ks = tuple(ks)
    if not retrievers:
        raise ConfigError("no retriever to evaluate")
    examples = evaluation_examples(dataset, data_dir, limit=limit, seed=seed)
    vocab = set(next(iter(retrievers.values())).relations)
    ceiling = (sum(1 for e in examples if all(r in vocab for r in e.relations)) / len(examples)) if examples else 0.0
    return RetrievalEval(dataset=dataset, questions=len(examples), vocabulary_size=len(vocab), ceiling=ceiling,
                         rra={label: r.evaluate(examples, ks) for label, r in retrievers.items()})
