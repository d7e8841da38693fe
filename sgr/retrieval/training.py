"""Training RCR's relation retriever: the heads, the loss, RRA@k, the loop, saved models (the questions it learns
from: :mod:`sgr.retrieval.supervision`; the fine-tuned encoder beside it: :mod:`sgr.retrieval.encoder_training`).

Method (Relation-Centric Reasoning, §4.1.1–4.1.2, App. A.5.2):

* a frozen sentence encoder embeds the question ``q`` and every relation ``r`` (its readable text,
  ``location.country.languages_spoken`` → ``location country languages spoken``): ``q, r ∈ R^d``;
* two trainable projection heads, one per side, ``f(x) = W2 · Dropout_0.1(SiLU(W1 x + b1)) + b2`` with
  ``W1, W2 ∈ R^{d×d}`` (App. A.5.2: ``Linear(d→d) → SiLU → Dropout(0.1) → Linear(d→d)``), give ``q̃ = f_q(q)``
  and ``r̃ = f_r(r)``;
* the score is the cosine ``sim(q, r) = cos(q̃, r̃)`` (eq. 1); relations are ranked by it;
* training minimises the margin ranking loss of eq. 2 over the gold relations ``R_q⁺`` (every relation of the
  question's gold paths) and 80 sampled negatives ``R_q⁻`` (§5.1), margin ``γ = 0.5``, averaged over all
  (q, r⁺, r⁻) triplets of a batch: ``L = mean max(0, γ − sim(q, r⁺) + sim(q, r⁻))``;
* Adam (lr 5·10⁻⁴ on WebQSP, A.5.2), 50 epochs, and the epoch with the best validation RRA@50 is kept;
* Relation Retrieval Accuracy, ``RRA@k`` (§5.1): the share of questions whose gold-path relations are *all*
  among the top-k ranked relations.

Score fusion (``RelationTrainConfig.cosine_weights``, not in the paper): the retriever may rank by
``s(q, r) = (1 − w)·cos(f_q(q), f_r(r)) + w·cos(q, r)``, the trained score mixed with the frozen cosine; ``w`` is
picked from the grid by validation RRA@50 after the best epoch is chosen (``w = 0`` is eq. 1 exactly).

Hard negatives (``RelationTrainConfig.hard_negatives``, a lever the paper names): at the start of every epoch the
current heads rank the training universe for each training question, and that many of its 80 negatives are the
highest-ranked non-gold relations; the rest stay uniformly sampled.

Differences from the paper, forced by this environment: the frozen encoder is all-MiniLM-L6-v2 (384-d) or
all-mpnet-base-v2 (768-d) — the paper's gte-large-en-v1.5 is not in any reachable registry — so the heads are
d→d; the vocabulary is the graph's own relations (:func:`graph_relations`), not all of Freebase. Negatives are drawn
from the *training universe*: the vocabulary plus every relation of the training paths (a training question whose
gold relation is not in the loaded slice still teaches the heads); validation ranks the vocabulary only.

Saved models keep the graph version (:meth:`sgr.graph.store.GraphStore.graph_version`) they were trained against;
:func:`find_model` finds the newest one for a version (:func:`sgr.retrieval.relations.load_retriever` uses it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sgr.core.checkpoints import load_checkpoint, require_keys
from sgr.core.config import cache_dir
from sgr.core.errors import ConfigError, InputError
from sgr.graph.store import GraphStore, relation_text
from sgr.retrieval.supervision import RelationExample, split_validation, training_examples

#: The default frozen encoder (see the module docstring); ``mpnet`` is the larger one.
DEFAULT_ENCODER = "minilm"
#: k values of the paper's RRA table (Table 5 uses 50–300; 10 is added for MetaQA's small vocabulary).
RRA_KS = (10, 50, 100, 200)


def graph_relations(store: GraphStore) -> tuple[list[str], list[str]]:
    """The relations a retriever ranks: ``(names, texts)`` of the graph's ``(:Relation)`` vocabulary whose type
    occurs in the graph, plus any relationship type the vocabulary lacks (its text derived from the name)."""
    present = set(store.relation_types())
    rows = [(v["name"], v.get("text") or relation_text(v["name"])) for v in store.relation_vocabulary()
            if v["name"] in present]
    known = {n for n, _ in rows}
    rows += [(n, relation_text(n)) for n in sorted(present - known)]
    return [n for n, _ in rows], [t for _, t in rows]



# -- embeddings
def embed(texts: Sequence[str], encoder: str = DEFAULT_ENCODER) -> np.ndarray:
    """Frozen sentence embeddings ``(n, d)`` (unit rows) from :func:`sgr.llm.encoders.embed_texts` (disk-cached)."""
    from sgr.llm.encoders import embed_texts

    return embed_texts(list(texts), name=encoder)


# -- the model: two projection heads and the margin loss
class ProjectionHead(nn.Sequential):
    """One projection head ``Linear(d→d) → SiLU → Dropout(p) → Linear(d→d)`` (RCR App. A.5.2)."""

    def __init__(self, dim: int, dropout: float = 0.1) -> None:
        super().__init__(nn.Linear(dim, dim), nn.SiLU(), nn.Dropout(dropout), nn.Linear(dim, dim))


class RelationHeads(nn.Module):
    """The question head ``f_q`` and the relation head ``f_r`` of RCR §4.1.1, scored by cosine (eq. 1)."""

    def __init__(self, dim: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.dim = dim
        self.dropout = dropout
        self.question = ProjectionHead(dim, dropout)
        self.relation = ProjectionHead(dim, dropout)

    def project_questions(self, q: torch.Tensor) -> torch.Tensor:
        """``q̃ = f_q(q)``, L2-normalised: ``(B, d) → (B, d)``."""
        return F.normalize(self.question(q), dim=-1)

    def project_relations(self, r: torch.Tensor) -> torch.Tensor:
        """``r̃ = f_r(r)``, L2-normalised: ``(N, d) → (N, d)``."""
        return F.normalize(self.relation(r), dim=-1)

    def similarity(self, q: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        """Eq. 1, ``cos(f_q(q), f_r(r))`` for every (question, relation) pair: ``(B, N)``."""
        return self.project_questions(q) @ self.project_relations(r).T


def margin_ranking_loss(pos: torch.Tensor, neg: torch.Tensor, gamma: float = 0.5,
                        pos_mask: torch.Tensor | None = None, neg_mask: torch.Tensor | None = None) -> torch.Tensor:
    """Eq. 2 of RCR: ``mean over (r⁺, r⁻) of max(0, γ − sim(q, r⁺) + sim(q, r⁻))``.

    ``pos``: ``(B, P)`` similarities of the gold relations, ``neg``: ``(B, N)`` of the negatives; optional boolean
    masks mark padded entries when questions of a batch have different numbers of positives. The loss is averaged
    over all valid triplets of the batch (§4.1.2: "averaged over all triplets in the batch").
    """
    if pos.dim() == 1:
        pos, neg = pos.unsqueeze(0), neg.unsqueeze(0)
        pos_mask = pos_mask.unsqueeze(0) if pos_mask is not None else None
        neg_mask = neg_mask.unsqueeze(0) if neg_mask is not None else None
    hinge = torch.clamp(gamma - pos.unsqueeze(2) + neg.unsqueeze(1), min=0.0)  # (B, P, N)
    if pos_mask is None and neg_mask is None:
        return hinge.mean()
    pm = pos_mask if pos_mask is not None else torch.ones_like(pos, dtype=torch.bool)
    nm = neg_mask if neg_mask is not None else torch.ones_like(neg, dtype=torch.bool)
    valid = (pm.unsqueeze(2) & nm.unsqueeze(1)).to(hinge.dtype)
    return (hinge * valid).sum() / valid.sum().clamp(min=1.0)


# -- Relation Retrieval Accuracy
def gold_ranks(scores: np.ndarray, relations: Sequence[str], gold: Sequence[Sequence[str]]) -> list[int | None]:
    """The worst (largest, 0-based) rank of any gold relation per question; None when a gold relation is not in
    ``relations`` at all (the question can never be fully retrieved). Ties count against the gold relation."""
    index = {r: i for i, r in enumerate(relations)}
    out: list[int | None] = []
    for row, rels in zip(scores, gold):
        worst = -1
        for rel in rels:
            j = index.get(rel)
            if j is None:
                worst = None
                break
            rank = int(np.sum(row >= row[j])) - 1  # relations scoring at least as high, itself excluded
            worst = max(worst, rank)
        out.append(worst)
    return out


def validation_ks(select_k: int) -> tuple[int, ...]:
    """The k of validation RRA@k: the table's and the one model selection uses (a small vocabulary wants a small k)."""
    return tuple(sorted({*RRA_KS, select_k}))


def rra_at_k(worst_ranks: Sequence[int | None], ks: Iterable[int] = RRA_KS) -> dict[int, float]:
    """``RRA@k``: the share of questions whose gold relations are all in the top ``k`` (RCR §5.1)."""
    n = len(worst_ranks)
    if n == 0:
        return {k: 0.0 for k in ks}
    return {k: sum(1 for r in worst_ranks if r is not None and r < k) / n for k in ks}


# -- training
@dataclass
class RelationTrainConfig:
    """Hyper-parameters; defaults are the paper's WebQSP settings (RCR §5.1, App. A.5.2) except ``batch_size``:
    the paper uses 1, which costs ~8× more relation-head passes per epoch on CPU; with 32 the loss is still averaged
    over every (q, r⁺, r⁻) triplet of the batch (padded positives masked), as §4.1.2 states."""

    epochs: int = 50
    lr: float = 5e-4
    gamma: float = 0.5
    negatives: int = 80
    batch_size: int = 32
    dropout: float = 0.1
    select_k: int = 50  # model selection: the epoch with the best validation RRA@select_k
    seed: int = 0
    threads: int = 2
    patience: int | None = None  # stop after this many epochs without a better validation RRA (None: never)
    encoder: str = DEFAULT_ENCODER  # the frozen sentence encoder (minilm or mpnet)
    cosine_weights: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3)  # grid for w in s = (1−w)·eq. 1 + w·cos(q, r)
    hard_negatives: int = 0  # of the ``negatives``, the current heads' top-ranked non-gold ones (no gain measured)


@dataclass
class EpochLog:
    epoch: int
    loss: float
    val_rra: dict[int, float]
    seconds: float


@dataclass(kw_only=True)
class TrainingRun:
    """How a relation retriever's training went: the epoch chosen on validation and every epoch's log."""

    best_epoch: int
    best_val: dict[int, float]
    history: list[EpochLog] = field(default_factory=list)
    universe_size: int = 0
    train_questions: int = 0
    val_questions: int = 0
    seconds: float = 0.0


@dataclass(kw_only=True)
class RelationTrainResult(TrainingRun):
    """The chosen heads and how training went."""

    heads: RelationHeads
    cosine_weight: float = 0.0  # w of the fused score (see the module docstring), chosen on validation


def fused_scores(heads: RelationHeads, q: torch.Tensor, r: torch.Tensor, cosine_weight: float) -> np.ndarray:
    """``(1 − w)·cos(f_q(q), f_r(r)) + w·cos(q, r)`` for every (question, relation) pair: ``(B, N)``."""
    with torch.inference_mode():
        s = heads.similarity(q, r)
        if cosine_weight:
            s = (1.0 - cosine_weight) * s + cosine_weight * (F.normalize(q, dim=-1) @ F.normalize(r, dim=-1).T)
    return s.numpy()


def train_heads(train: Sequence[RelationExample], val: Sequence[RelationExample], universe: Sequence[str],
                vocabulary: Sequence[str], config: RelationTrainConfig | None = None,
                progress: Callable[[EpochLog], None] | None = None) -> RelationTrainResult:
    """Train the two heads with eq. 2 and keep the epoch with the best validation RRA@``select_k``.

    ``universe``: every relation negatives may be drawn from (the vocabulary plus the training paths' relations);
    ``vocabulary``: what validation ranks over (the graph's relations). Negatives (``config.negatives`` per
    question, never a gold relation) are re-drawn every epoch from a fixed-seed generator.
    """
    cfg = config or RelationTrainConfig()
    encoder = cfg.encoder
    torch.set_num_threads(max(1, cfg.threads))
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    t_start = time.perf_counter()

    universe = list(dict.fromkeys([*universe, *(r for e in train for r in e.relations)]))
    u_index = {r: i for i, r in enumerate(universe)}
    rel_emb = torch.from_numpy(embed([relation_text(r) for r in universe], encoder))
    q_emb = torch.from_numpy(embed([e.question for e in train], encoder))
    vocab = list(vocabulary)
    val_q = torch.from_numpy(embed([e.question for e in val], encoder)) if val else None
    val_vocab_emb = torch.from_numpy(embed([relation_text(r) for r in vocab], encoder)) if val else None

    pos_lists = [[u_index[r] for r in e.relations] for e in train]
    heads = RelationHeads(rel_emb.shape[1], cfg.dropout)
    opt = torch.optim.Adam(heads.parameters(), lr=cfg.lr)
    n_universe = len(universe)

    n_hard = max(0, min(cfg.hard_negatives, cfg.negatives))
    hard_lists: list[list[int]] = [[] for _ in train]

    def mine_hard_negatives() -> None:
        """The current heads' ``n_hard`` highest-ranked non-gold relations of every training question."""
        heads.eval()
        with torch.no_grad():
            rel = heads.project_relations(rel_emb)
            for start in range(0, len(train), 512):
                sc = heads.project_questions(q_emb[start:start + 512]) @ rel.T
                top = torch.topk(sc, min(n_universe, n_hard + max(len(p) for p in pos_lists)), dim=1).indices
                for b, row in enumerate(top.tolist()):
                    gold = set(pos_lists[start + b])
                    hard_lists[start + b] = [j for j in row if j not in gold][:n_hard]

    def sample_negatives(i: int) -> np.ndarray:
        pos = pos_lists[i]
        banned = set(pos)
        out: list[int] = list(hard_lists[i])
        banned.update(out)
        while len(out) < cfg.negatives and n_universe - len(banned) > 0:
            draw = rng.integers(0, n_universe, size=cfg.negatives * 2)
            for j in draw:
                if int(j) not in banned and len(out) < cfg.negatives:
                    out.append(int(j))
                    banned.add(int(j))
        out += out[:1] * (cfg.negatives - len(out))  # a universe smaller than the negatives asked: repeat
        return np.asarray(out[:cfg.negatives], dtype=np.int64)

    def validate() -> dict[int, float]:
        if not val:
            return {}
        heads.eval()
        with torch.no_grad():
            sc = heads.similarity(val_q, val_vocab_emb).numpy()
        return rra_at_k(gold_ranks(sc, vocab, [e.relations for e in val]), validation_ks(cfg.select_k))

    best_state = {k: v.detach().clone() for k, v in heads.state_dict().items()}
    best_val: dict[int, float] = validate()
    best_key = (best_val.get(cfg.select_k, 0.0), sum(best_val.values())) if best_val else (-1.0, -1.0)
    best_epoch = 0
    history: list[EpochLog] = [EpochLog(0, float("nan"), best_val, 0.0)]
    since_best = 0
    order = np.arange(len(train))
    for epoch in range(1, cfg.epochs + 1):
        t0 = time.perf_counter()
        if n_hard:
            mine_hard_negatives()
        heads.train()
        rng.shuffle(order)
        total, steps = 0.0, 0
        for start in range(0, len(order), cfg.batch_size):
            batch = order[start:start + cfg.batch_size]
            p_max = max(len(pos_lists[i]) for i in batch)
            pos_idx = torch.zeros((len(batch), p_max), dtype=torch.long)
            pos_mask = torch.zeros((len(batch), p_max), dtype=torch.bool)
            neg_idx = torch.zeros((len(batch), cfg.negatives), dtype=torch.long)
            for b, i in enumerate(batch):
                p = pos_lists[i]
                pos_idx[b, :len(p)] = torch.tensor(p)
                pos_mask[b, :len(p)] = True
                neg_idx[b] = torch.from_numpy(sample_negatives(int(i)))
            qv = heads.project_questions(q_emb[torch.from_numpy(batch)])  # (B, d)
            needed, inverse = torch.unique(torch.cat([pos_idx.flatten(), neg_idx.flatten()]), return_inverse=True)
            rv = heads.project_relations(rel_emb[needed])  # project each needed relation once
            pv = rv[inverse[:pos_idx.numel()]].view(len(batch), p_max, -1)
            nv = rv[inverse[pos_idx.numel():]].view(len(batch), cfg.negatives, -1)
            pos = torch.einsum("bd,bpd->bp", qv, pv)
            neg = torch.einsum("bd,bnd->bn", qv, nv)
            loss = margin_ranking_loss(pos, neg, cfg.gamma, pos_mask=pos_mask)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            steps += 1
        val_rra = validate()
        log = EpochLog(epoch, total / max(steps, 1), val_rra, time.perf_counter() - t0)
        history.append(log)
        if progress:
            progress(log)
        key = (val_rra.get(cfg.select_k, 0.0), sum(val_rra.values())) if val_rra else (float(-log.loss), 0.0)
        if key > best_key:
            best_key, best_epoch, best_val = key, epoch, val_rra
            best_state = {k: v.detach().clone() for k, v in heads.state_dict().items()}
            since_best = 0
        else:
            since_best += 1
            if cfg.patience is not None and since_best >= cfg.patience:
                break
    heads.load_state_dict(best_state)
    heads.eval()
    weight = 0.0
    if val and len(cfg.cosine_weights) > 1:  # the fusion weight with the best validation RRA (ties: the smaller)
        gold = [e.relations for e in val]
        keyed = []
        for w in sorted(cfg.cosine_weights):
            rra = rra_at_k(gold_ranks(fused_scores(heads, val_q, val_vocab_emb, w), vocab, gold),
                           validation_ks(cfg.select_k))
            keyed.append(((rra.get(cfg.select_k, 0.0), sum(rra.values()), -w), w, rra))
        _, weight, best_val = max(keyed, key=lambda t: t[0])
    return RelationTrainResult(heads=heads, best_epoch=best_epoch, best_val=best_val, history=history,
                               universe_size=n_universe, train_questions=len(train), val_questions=len(val),
                               seconds=time.perf_counter() - t_start, cosine_weight=weight)


# -- saved models
def models_dir() -> Path:
    """Where trained heads are kept: ``cache_dir("relations")`` (``SGR_HOME/cache/relations``)."""
    return cache_dir("relations")


def save_model(path: Path, result: RelationTrainResult, *, dataset: str, graph_version: str, vocabulary_size: int,
               config: RelationTrainConfig) -> Path:
    """Write the heads and their provenance (dataset, graph version, config, validation RRA) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {**provenance(result, dataset=dataset, graph_version=graph_version, vocabulary_size=vocabulary_size,
                         config=config),
            "dim": result.heads.dim, "dropout": result.heads.dropout, "cosine_weight": result.cosine_weight}
    torch.save({"meta": meta, "state_dict": result.heads.state_dict()}, path)
    return path


def provenance(result: TrainingRun, *, dataset: str, graph_version: str, vocabulary_size: int,
               config: Any) -> dict[str, Any]:  # noqa: ANN401 - RelationTrainConfig | EncoderTrainConfig
    """What every saved relation model records of its training (dataset, graph version, encoder, sizes, the chosen
    epoch and its validation RRA, the config, time); each kind adds its own fields."""
    return {"dataset": dataset, "graph_version": graph_version, "encoder": config.encoder,
            "vocabulary_size": vocabulary_size, "universe_size": result.universe_size,
            "train_questions": result.train_questions, "val_questions": result.val_questions,
            "best_epoch": result.best_epoch, "best_val": {str(k): v for k, v in result.best_val.items()},
            "config": asdict(config), "seconds": result.seconds, "trained_at": time.time()}


def default_model_path(dataset: str, graph_version: str, kind: str = "heads") -> Path:
    """``<dataset>-<graph version>.pt`` (heads) or ``<dataset>-encoder-<graph version>.pt`` (a fine-tuned encoder,
    whose folder sits beside it with the suffix ``.encoder``); :func:`find_model` finds either."""
    return models_dir() / (f"{dataset}-{graph_version}.pt" if kind == "heads" else
                           f"{dataset}-encoder-{graph_version}.pt")


def encoder_folder(path: Path) -> Path:
    """The fine-tuned encoder folder that belongs to the model file ``path``."""
    return path.with_suffix(".encoder")


def _read(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the saved blob, its provenance with ``kind``) of a model file, read once."""
    if not path.exists():
        raise ConfigError(f"{path}: no trained relation model there (train one with `sgr relations train`)")
    blob = require_keys(load_checkpoint(path, what="relation model"), ("meta",), source=path, what="relation model")
    if not isinstance(blob["meta"], dict):
        raise ConfigError(f"{path}: not a relation model (its 'meta' is not a dict)")
    return blob, {"kind": "heads", **blob["meta"]}


def read_meta(path: Path) -> dict[str, Any]:
    """The provenance of a saved model; ``meta["kind"]`` is ``"heads"`` (the paper's) or ``"encoder"``."""
    return _read(path)[1]


def read_model(path: Path) -> tuple[RelationHeads, dict[str, Any]]:
    """(heads, meta) of a saved heads model."""
    blob, meta = _read(path)
    if meta["kind"] != "heads":
        raise ConfigError(f"{path}: a fine-tuned encoder, not projection heads")
    heads = RelationHeads(int(meta["dim"]), float(meta.get("dropout", 0.1)))
    heads.load_state_dict(blob["state_dict"])
    heads.eval()
    return heads, meta


def find_model(graph_version: str) -> Path | None:
    """The newest saved model trained on this graph version, if any."""
    best: tuple[float, Path] | None = None
    for path in models_dir().glob(f"*-{graph_version}.pt"):
        mtime = path.stat().st_mtime
        if best is None or mtime > best[0]:
            best = (mtime, path)
    return best[1] if best else None


def cosine_rra(examples: Sequence[RelationExample], vocabulary: Sequence[str], encoder: str = DEFAULT_ENCODER,
               ks: Iterable[int] = RRA_KS) -> dict[int, float]:
    """RRA@k of plain cosine on the frozen embeddings (the paper's Table 5 baseline) over ``vocabulary``."""
    q = embed([e.question for e in examples], encoder)
    r = embed([relation_text(v) for v in vocabulary], encoder)
    return rra_at_k(gold_ranks(q @ r.T, vocabulary, [e.relations for e in examples]), ks)


@dataclass
class TrainedModel:
    """A trained model on disk and how it was trained (``result``: heads or a fine-tuned encoder)."""

    path: Path
    dataset: str
    graph_version: str
    result: TrainingRun  # RelationTrainResult | encoder_training.EncoderTrainResult
    vocabulary_size: int
    cosine_val: dict[int, float]


#: ``--dataset graph``: questions written from the loaded graph itself, this many unless ``limit`` says otherwise
GRAPH_DATASET = "graph"
GRAPH_QUESTIONS = 3000


@dataclass
class TrainingData:
    """What a relation retriever trains on for one store: the graph's vocabulary, the split, the universe."""

    dataset: str
    graph_version: str
    vocabulary: list[str]
    train: list[RelationExample]
    val: list[RelationExample]
    universe: list[str]  # the vocabulary plus every relation of the training paths


def training_data(store: GraphStore, dataset: str, *, data_dir: Path | None = None, limit: int | None = None,
                  val_fraction: float = 0.1, seed: int = 0) -> TrainingData:
    """The store's relation vocabulary and ``dataset``'s questions split by a fixed-seed ``val_fraction`` held out
    for model selection (App. A.5.2); ``dataset`` ``graph``: ``limit`` questions written from the graph."""
    vocab, _ = graph_relations(store)
    if not vocab:
        raise ConfigError("the graph has no (:Relation) vocabulary: load data first (`sgr load …`)")
    if dataset == GRAPH_DATASET:  # no labelled questions: written from the graph (sgr.retrieval.graph_questions)
        from sgr.retrieval.graph_questions import graph_questions

        examples = graph_questions(store, limit or GRAPH_QUESTIONS, seed=seed)
    else:
        examples = training_examples(dataset, data_dir, limit=limit, seed=seed)
    if len(examples) < 2:
        raise InputError(f"{dataset}: only {len(examples)} training questions with gold paths")
    train, val = split_validation(examples, val_fraction, seed)
    universe = list(dict.fromkeys([*vocab, *(r for e in examples for r in e.relations)]))
    return TrainingData(dataset, store.graph_version(), vocab, list(train), list(val), universe)


def train_model(store: GraphStore, dataset: str, *, config: RelationTrainConfig | None = None,
                data_dir: Path | None = None, limit: int | None = None, val_fraction: float = 0.1,
                out: Path | None = None, progress: Callable[[EpochLog], None] | None = None) -> TrainedModel:
    """Train RCR's heads on ``dataset`` against the store's relation vocabulary and save them.

    The model is written to ``out`` or ``models_dir()/<dataset>-<graph version>.pt`` (what
    ``load_retriever("auto")`` finds).
    """
    cfg = config or RelationTrainConfig()
    data = training_data(store, dataset, data_dir=data_dir, limit=limit, val_fraction=val_fraction, seed=cfg.seed)
    result = train_heads(data.train, data.val, data.universe, data.vocabulary, cfg, progress=progress)
    cosine_val = cosine_rra(data.val, data.vocabulary, cfg.encoder, validation_ks(cfg.select_k)) if data.val else {}
    path = Path(out) if out else default_model_path(dataset, data.graph_version)
    save_model(path, result, dataset=dataset, graph_version=data.graph_version, vocabulary_size=len(data.vocabulary),
               config=cfg)
    return TrainedModel(path=path, dataset=dataset, graph_version=data.graph_version, result=result,
                        vocabulary_size=len(data.vocabulary), cosine_val=cosine_val)
