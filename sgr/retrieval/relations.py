"""RCR's relation retriever: a dual encoder over the graph's relation vocabulary (RCR paper §4.1, App. A.5.2).

Method (Relation-Centric Reasoning, §4.1.1–4.1.2):

* a frozen sentence encoder embeds the question ``q`` and every relation ``r`` (its readable text,
  ``location.country.languages_spoken`` → ``location country languages spoken``): ``q, r ∈ R^d``;
* two trainable projection heads, one per side, ``f(x) = W2 · Dropout_0.1(SiLU(W1 x + b1)) + b2`` with
  ``W1, W2 ∈ R^{d×d}`` (App. A.5.2: ``Linear(d→d) → SiLU → Dropout(0.1) → Linear(d→d)``), give ``q̃ = f_q(q)``
  and ``r̃ = f_r(r)``;
* the score is the cosine ``sim(q, r) = cos(q̃, r̃)`` (eq. 1); relations are ranked by it;
* training minimises the margin ranking loss of eq. 2 over the gold relations ``R_q⁺`` (every relation of the
  question's gold paths) and 80 randomly sampled negatives ``R_q⁻`` (§5.1), margin ``γ = 0.5``, averaged over all
  (q, r⁺, r⁻) triplets of a batch: ``L = mean max(0, γ − sim(q, r⁺) + sim(q, r⁻))``;
* Adam (lr 5·10⁻⁴ on WebQSP, A.5.2), batch size 1 by default (A.5.2: "each question has a varying number of
  positive relations"), 50 epochs, and the epoch with the best validation RRA is kept;
* Relation Retrieval Accuracy, ``RRA@k`` (§5.1): the share of questions whose gold-path relations are *all*
  among the top-k ranked relations.

Differences from the paper, all forced by this environment: the frozen encoder is all-MiniLM-L6-v2 (384-d; the
paper uses gte-large-en-v1.5, 1024-d, which no reachable registry ships), so the heads are 384→384; the
vocabulary is the graph's own ``(:Relation)`` nodes (:meth:`sgr.graph.store.GraphStore.relation_vocabulary`), not all of
Freebase. During training the negatives are drawn from the *training universe*: the vocabulary plus every relation
that occurs in the training paths (a training question whose gold relation is not in the loaded slice still
teaches the heads); at inference only the vocabulary is ranked.

The plain-cosine baseline of the paper (Table 5, "Cosine Similarity") is :class:`CosineRelationRetriever`: the same
frozen embeddings without heads. Both share the :class:`RelationRetriever` interface
(``top_k(question, k) -> [(relation, score)]``) so SGR's schema extraction and RCR use either one.

Caching: raw embeddings come from :func:`sgr.llm.encoders.embed_texts` (disk cache per text). Trained heads are
saved with the graph version (:meth:`sgr.graph.store.GraphStore.graph_version`) they were trained against;
:func:`load_retriever` with ``model="auto"`` picks the newest model trained on the current graph version and falls
back to plain cosine when there is none.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sgr.core.config import cache_dir
from sgr.core.errors import ConfigError, InputError
from sgr.graph.store import GraphStore, relation_text

#: The encoder the paper's frozen embeddings are replaced with (see the module docstring).
DEFAULT_ENCODER = "minilm"
#: k values of the paper's RRA table (Table 5 uses 50–300; the issue adds 10 for MetaQA's small vocabulary).
RRA_KS = (10, 50, 100, 200)


# ---------------------------------------------------------------------------------------------
# supervision: questions with their gold relations
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RelationExample:
    """One question with the relations of its gold reasoning paths (the positives ``R_q⁺`` of eq. 2)."""

    id: str
    question: str
    paths: tuple[tuple[str, ...], ...]
    hops: int | None = None

    @property
    def relations(self) -> tuple[str, ...]:
        """Every relation on any gold path, in order of first appearance."""
        seen: dict[str, None] = {}
        for path in self.paths:
            for rel in path:
                seen.setdefault(rel, None)
        return tuple(seen)


def read_webqsp_paths(path: Path, limit: int | None = None) -> list[RelationExample]:
    """WebQSP questions with gold relation paths: ``webqsp_train_paths.jsonl`` or the RoG-format slice.

    Each line needs ``id``, ``question`` and ``ground_paths`` (a list of relation lists). Questions without any
    gold path are skipped (they cannot supervise or be scored by RRA).
    """
    out: list[RelationExample] = []
    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    with fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{lineno}: not JSON ({exc.msg})") from exc
            for key in ("id", "question", "ground_paths"):
                if key not in rec:
                    raise InputError(f"{path}:{lineno}: field {key!r} is missing")
            paths = rec["ground_paths"]
            if not isinstance(paths, list) or not all(isinstance(p, list) for p in paths):
                raise InputError(f"{path}:{lineno}: field 'ground_paths' must be a list of relation lists")
            paths_t = tuple(tuple(str(r) for r in p) for p in paths if p)
            if not paths_t:
                continue
            out.append(RelationExample(id=str(rec["id"]), question=str(rec["question"]), paths=paths_t,
                                       hops=max(len(p) for p in paths_t)))
            if limit is not None and len(out) >= limit:
                break
    return out


#: MetaQA entity types in ``*_qtype.txt`` and the KB relation that links a movie to each (WikiMovies KB).
METAQA_TYPE_RELATION = {
    "actor": "starred_actors",
    "director": "directed_by",
    "writer": "written_by",
    "year": "release_year",
    "language": "in_language",
    "tag": "has_tags",
    "tags": "has_tags",
    "genre": "has_genre",
    "imdbrating": "has_imdb_rating",
    "imdbvotes": "has_imdb_votes",
}


def metaqa_qtype_path(qtype: str) -> tuple[str, ...]:
    """The relation path of a MetaQA question type: ``actor_to_movie_to_director`` → ``(starred_actors, directed_by)``.

    Every hop joins a movie to another entity type, and the KB stores it as ``movie -relation-> entity``; the
    path lists the relations in walking order (walk each edge in whichever direction it is stored).
    """
    types = qtype.strip().split("_to_")
    if len(types) < 2:
        raise InputError(f"MetaQA question type {qtype!r} is not of the form a_to_b[_to_c…]")
    path: list[str] = []
    for a, b in zip(types, types[1:]):
        if (a == "movie") == (b == "movie"):
            raise InputError(f"MetaQA question type {qtype!r}: hop {a}_to_{b} does not join a movie to an entity")
        other = b if a == "movie" else a
        if other not in METAQA_TYPE_RELATION:
            raise InputError(f"MetaQA question type {qtype!r}: unknown entity type {other!r}")
        path.append(METAQA_TYPE_RELATION[other])
    return tuple(path)


_BRACKETS = re.compile(r"\[([^\]]*)\]")


def metaqa_question_text(raw: str) -> str:
    """MetaQA's question with the topic-entity brackets removed: ``movies starred by [X]`` → ``movies starred by X``."""
    return _BRACKETS.sub(r"\1", raw).strip()


def read_metaqa(data_dir: Path, split: str, hops: Sequence[int] = (1, 2, 3), limit_per_hop: int | None = None,
                seed: int = 0) -> list[RelationExample]:
    """MetaQA questions of ``split`` (``dev``/``test``) with their qtype relation path as the gold path.

    With ``limit_per_hop`` a fixed-seed sample (``random.Random(seed)``) of that many questions per hop is kept,
    in file order.
    """
    out: list[RelationExample] = []
    for hop in hops:
        qfile = data_dir / f"{hop}hop_{split}.tsv"
        tfile = data_dir / f"{hop}hop_{split}_qtype.txt"
        for f in (qfile, tfile):
            if not f.exists():
                raise InputError(f"{f}: MetaQA file not found (set --data to the folder with {{1,2,3}}hop_*.tsv)")
        questions = qfile.read_text(encoding="utf-8").splitlines()
        qtypes = tfile.read_text(encoding="utf-8").splitlines()
        if len(questions) != len(qtypes):
            raise InputError(f"{tfile}: {len(qtypes)} lines but {qfile.name} has {len(questions)}: files not aligned")
        idx = list(range(len(questions)))
        if limit_per_hop is not None and limit_per_hop < len(idx):
            idx = sorted(random.Random(seed).sample(idx, limit_per_hop))
        for i in idx:
            text = questions[i].split("\t", 1)[0]
            path = metaqa_qtype_path(qtypes[i])
            out.append(RelationExample(id=f"metaqa-{hop}hop-{split}-{i}", question=metaqa_question_text(text),
                                       paths=(path,), hops=hop))
    return out


def split_validation(examples: Sequence[RelationExample], fraction: float, seed: int = 0
                     ) -> tuple[list[RelationExample], list[RelationExample]]:
    """A fixed-seed (train, validation) split; ``fraction`` of the questions are held out."""
    if not 0.0 < fraction < 1.0:
        raise ConfigError(f"validation fraction must be in (0, 1), got {fraction}")
    order = list(range(len(examples)))
    random.Random(seed).shuffle(order)
    n_val = max(1, int(round(len(examples) * fraction)))
    val_idx = set(order[:n_val])
    return ([e for i, e in enumerate(examples) if i not in val_idx],
            [e for i, e in enumerate(examples) if i in val_idx])


# ---------------------------------------------------------------------------------------------
# embeddings
# ---------------------------------------------------------------------------------------------
def embed(texts: Sequence[str], encoder: str = DEFAULT_ENCODER) -> np.ndarray:
    """Frozen sentence embeddings ``(n, d)`` (unit rows) from :func:`sgr.llm.encoders.embed_texts` (disk-cached)."""
    from sgr.llm.encoders import embed_texts

    return embed_texts(list(texts), name=encoder)


# ---------------------------------------------------------------------------------------------
# the model: two projection heads and the margin loss
# ---------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------
# Relation Retrieval Accuracy
# ---------------------------------------------------------------------------------------------
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


def rra_at_k(worst_ranks: Sequence[int | None], ks: Iterable[int] = RRA_KS) -> dict[int, float]:
    """``RRA@k``: the share of questions whose gold relations are all in the top ``k`` (RCR §5.1)."""
    n = len(worst_ranks)
    if n == 0:
        return {k: 0.0 for k in ks}
    return {k: sum(1 for r in worst_ranks if r is not None and r < k) / n for k in ks}


# ---------------------------------------------------------------------------------------------
# retrievers
# ---------------------------------------------------------------------------------------------
class RelationRetriever:
    """Ranks a relation vocabulary for a question: ``top_k(question, k) -> [(relation, score)]``.

    With ``heads`` it is RCR's trained dual encoder (eq. 1); :class:`CosineRelationRetriever` is the same
    without heads. ``relations`` are relation names, ``texts`` their readable forms (what is embedded).
    """

    name = "rcr-trained"

    def __init__(self, relations: Sequence[str], texts: Sequence[str] | None = None, heads: RelationHeads | None = None,
                 encoder: str = DEFAULT_ENCODER, graph_version: str | None = None,
                 info: dict[str, Any] | None = None) -> None:
        if not relations:
            raise ConfigError("the relation vocabulary is empty: load a graph first (no (:Relation) nodes)")
        self.relations = list(relations)
        self.texts = list(texts) if texts is not None else [relation_text(r) for r in self.relations]
        self.heads = heads
        self.encoder = encoder
        self.graph_version = graph_version
        self.info = dict(info or {})
        self._index = {r: i for i, r in enumerate(self.relations)}
        raw = embed(self.texts, encoder)
        self._raw = raw
        self._rel = self._project_relations(raw)  # (N, d) unit rows in the retrieval space

    @property
    def trained(self) -> bool:
        return self.heads is not None

    # -- projections -------------------------------------------------------------------------
    def _project(self, x: np.ndarray, side: str) -> np.ndarray:
        if self.heads is None:
            return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        self.heads.eval()
        with torch.no_grad():
            t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
            y = self.heads.project_questions(t) if side == "q" else self.heads.project_relations(t)
        return y.numpy()

    def _project_relations(self, raw: np.ndarray) -> np.ndarray:
        return self._project(raw, "r")

    def question_vectors(self, questions: Sequence[str]) -> np.ndarray:
        return self._project(embed(questions, self.encoder), "q")

    def relation_vectors(self, relations: Sequence[str]) -> np.ndarray:
        """Retrieval-space vectors of relations (vocabulary rows are reused; others are embedded now)."""
        missing = [r for r in relations if r not in self._index]
        extra = dict(zip(missing, self._project(embed([relation_text(r) for r in missing], self.encoder), "r"))) \
            if missing else {}
        return np.stack([self._rel[self._index[r]] if r in self._index else extra[r] for r in relations]) \
            if relations else np.zeros((0, self._rel.shape[1]), dtype=np.float32)

    # -- ranking -----------------------------------------------------------------------------
    def scores(self, questions: Sequence[str]) -> np.ndarray:
        """``(len(questions), len(relations))`` similarities (eq. 1)."""
        return self.question_vectors(questions) @ self._rel.T

    def top_k(self, question: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` relations most similar to ``question``, best first, with their cosine scores."""
        row = self.scores([question])[0]
        k = max(0, min(k, len(self.relations)))
        order = np.argsort(-row, kind="stable")[:k]
        return [(self.relations[i], float(row[i])) for i in order]

    def similar_relations(self, relation: str, candidates: Sequence[str], k: int) -> list[tuple[str, float]]:
        """The ``k`` of ``candidates`` closest to ``relation`` in the relation space (RCR §4.3 substitution)."""
        cands = [c for c in dict.fromkeys(candidates) if c != relation]
        if k <= 0 or not cands:
            return []
        vecs = self.relation_vectors([relation, *cands])
        sims = vecs[1:] @ vecs[0]
        order = np.argsort(-sims, kind="stable")[:k]
        return [(cands[i], float(sims[i])) for i in order]

    def evaluate(self, examples: Sequence[RelationExample], ks: Iterable[int] = RRA_KS) -> dict[int, float]:
        """RRA@k of this retriever on ``examples`` (ranked over its own vocabulary)."""
        if not examples:
            return {k: 0.0 for k in ks}
        sc = self.scores([e.question for e in examples])
        return rra_at_k(gold_ranks(sc, self.relations, [e.relations for e in examples]), ks)


class CosineRelationRetriever(RelationRetriever):
    """Plain cosine similarity of the frozen embeddings (the paper's "Cosine Similarity" baseline, Table 5)."""

    name = "cosine"

    def __init__(self, relations: Sequence[str], texts: Sequence[str] | None = None,
                 encoder: str = DEFAULT_ENCODER, graph_version: str | None = None) -> None:
        super().__init__(relations, texts, heads=None, encoder=encoder, graph_version=graph_version)


# ---------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------
@dataclass
class TrainConfig:
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


@dataclass
class EpochLog:
    epoch: int
    loss: float
    val_rra: dict[int, float]
    seconds: float


@dataclass
class TrainResult:
    """The chosen heads and how training went."""

    heads: RelationHeads
    best_epoch: int
    best_val: dict[int, float]
    history: list[EpochLog] = field(default_factory=list)
    universe_size: int = 0
    train_questions: int = 0
    val_questions: int = 0
    seconds: float = 0.0


def train_heads(train: Sequence[RelationExample], val: Sequence[RelationExample], universe: Sequence[str],
                vocabulary: Sequence[str], config: TrainConfig | None = None, encoder: str = DEFAULT_ENCODER,
                progress: Callable[[EpochLog], None] | None = None) -> TrainResult:
    """Train the two heads with eq. 2 and keep the epoch with the best validation RRA@``select_k``.

    ``universe``: every relation negatives may be drawn from (the vocabulary plus the training paths' relations);
    ``vocabulary``: what validation ranks over (the graph's relations). Negatives (``config.negatives`` per
    question, never a gold relation) are re-drawn every epoch from a fixed-seed generator.
    """
    cfg = config or TrainConfig()
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

    def sample_negatives(pos: list[int]) -> np.ndarray:
        banned = set(pos)
        out: list[int] = []
        while len(out) < cfg.negatives:
            draw = rng.integers(0, n_universe, size=cfg.negatives * 2)
            out.extend(int(j) for j in draw if int(j) not in banned)
            if n_universe - len(banned) <= 0:
                break
        return np.asarray(out[:cfg.negatives], dtype=np.int64)

    def validate() -> dict[int, float]:
        if not val:
            return {}
        heads.eval()
        with torch.no_grad():
            sc = heads.similarity(val_q, val_vocab_emb).numpy()
        return rra_at_k(gold_ranks(sc, vocab, [e.relations for e in val]))

    best_state = {k: v.detach().clone() for k, v in heads.state_dict().items()}
    best_val: dict[int, float] = validate()
    best_key = (best_val.get(cfg.select_k, 0.0), sum(best_val.values())) if best_val else (-1.0, -1.0)
    best_epoch = 0
    history: list[EpochLog] = [EpochLog(0, float("nan"), best_val, 0.0)]
    since_best = 0
    order = np.arange(len(train))
    for epoch in range(1, cfg.epochs + 1):
        t0 = time.perf_counter()
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
                neg_idx[b] = torch.from_numpy(sample_negatives(p))
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
    return TrainResult(heads=heads, best_epoch=best_epoch, best_val=best_val, history=history,
                       universe_size=n_universe, train_questions=len(train), val_questions=len(val),
                       seconds=time.perf_counter() - t_start)


# ---------------------------------------------------------------------------------------------
# saved models
# ---------------------------------------------------------------------------------------------
def models_dir() -> Path:
    """Where trained heads are kept: ``cache_dir("relations")`` (``SGR_HOME/cache/relations``)."""
    return cache_dir("relations")


def save_model(path: Path, result: TrainResult, *, dataset: str, graph_version: str, vocabulary_size: int,
               config: TrainConfig, encoder: str = DEFAULT_ENCODER) -> Path:
    """Write the heads and their provenance (dataset, graph version, config, validation RRA) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"dataset": dataset, "graph_version": graph_version, "encoder": encoder,
            "dim": result.heads.dim, "dropout": result.heads.dropout, "vocabulary_size": vocabulary_size,
            "universe_size": result.universe_size, "train_questions": result.train_questions,
            "val_questions": result.val_questions, "best_epoch": result.best_epoch,
            "best_val": {str(k): v for k, v in result.best_val.items()}, "config": asdict(config),
            "seconds": result.seconds, "trained_at": time.time()}
    torch.save({"meta": meta, "state_dict": result.heads.state_dict()}, path)
    return path


def default_model_path(dataset: str, graph_version: str) -> Path:
    return models_dir() / f"{dataset}-{graph_version}.pt"


def read_model(path: Path) -> tuple[RelationHeads, dict[str, Any]]:
    """(heads, meta) of a saved model."""
    if not path.exists():
        raise ConfigError(f"{path}: no trained relation model there (train one with `sgr relations train`)")
    blob = torch.load(path, map_location="cpu", weights_only=True)
    meta = blob["meta"]
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


def load_retriever(store: GraphStore, model: str | Path | None = "auto",
                   encoder: str = DEFAULT_ENCODER) -> RelationRetriever:
    """A retriever over the store's ``(:Relation)`` vocabulary.

    ``model``: a path to saved heads; ``"auto"`` (or ``SGR_RELATION_MODEL`` when set) — the newest model trained on
    this graph version, else plain cosine; ``None`` or ``"cosine"`` — plain cosine.
    """
    vocab = store.relation_vocabulary()
    names = [v["name"] for v in vocab]
    texts = [v.get("text") or relation_text(v["name"]) for v in vocab]
    version = store.graph_version()
    if model == "auto":
        env = os.environ.get("SGR_RELATION_MODEL")
        model = env if env else find_model(version)
    if model is None or str(model) == "cosine":
        return CosineRelationRetriever(names, texts, encoder=encoder, graph_version=version)
    heads, meta = read_model(Path(model))
    if meta.get("encoder", encoder) != encoder:
        raise ConfigError(f"{model}: trained on encoder {meta.get('encoder')!r}, not {encoder!r}")
    return RelationRetriever(names, texts, heads=heads, encoder=encoder, graph_version=version,
                             info={"model": str(model), **meta})


# ---------------------------------------------------------------------------------------------
# training and evaluation on the shared datasets (what `sgr relations train|eval` run)
# ---------------------------------------------------------------------------------------------
TRAIN_DATASETS = ("webqsp", "metaqa")
EVAL_DATASETS = ("webqsp", "metaqa-1hop", "metaqa-2hop", "metaqa-3hop")


def _data_dir(data_dir: Path | None) -> Path:
    if data_dir is not None:
        return Path(data_dir).expanduser()
    from sgr.datasets import shared_data_dir

    return shared_data_dir()


def training_examples(dataset: str, data_dir: Path | None = None, limit: int | None = None,
                      seed: int = 0) -> list[RelationExample]:
    """Supervision for ``dataset``: WebQSP train questions with gold paths, or MetaQA dev (all hops).

    ``limit``: WebQSP — the first ``limit`` questions; MetaQA — a fixed-seed sample of ``limit`` per hop.
    """
    root = _data_dir(data_dir)
    if dataset == "webqsp":
        return read_webqsp_paths(root / "webqsp" / "webqsp_train_paths.jsonl", limit=limit)
    if dataset == "metaqa":
        return read_metaqa(root / "metaqa", "dev", (1, 2, 3), limit_per_hop=limit, seed=seed)
    raise ConfigError(f"unknown training set {dataset!r} (known: {', '.join(TRAIN_DATASETS)})")


def evaluation_examples(dataset: str, data_dir: Path | None = None, limit: int | None = None,
                        seed: int = 0) -> list[RelationExample]:
    """Test questions with gold paths: the WebQSP slice's ``ground_paths`` or MetaQA test of one hop count.

    ``limit``: a fixed-seed sample of that many questions (WebQSP: the first ``limit``).
    """
    root = _data_dir(data_dir)
    if dataset == "webqsp":
        return read_webqsp_paths(root / "webqsp" / "webqsp_mini.jsonl", limit=limit)
    m = re.fullmatch(r"metaqa-([123])hop", dataset)
    if m:
        return read_metaqa(root / "metaqa", "test", (int(m.group(1)),), limit_per_hop=limit, seed=seed)
    raise ConfigError(f"unknown evaluation set {dataset!r} (known: {', '.join(EVAL_DATASETS)})")


@dataclass
class TrainedModel:
    """A trained model on disk and how it was trained."""

    path: Path
    dataset: str
    graph_version: str
    result: TrainResult
    vocabulary_size: int
    cosine_val: dict[int, float]


def train_model(store: GraphStore, dataset: str, *, config: TrainConfig | None = None, data_dir: Path | None = None,
                limit: int | None = None, val_fraction: float = 0.1, out: Path | None = None,
                encoder: str = DEFAULT_ENCODER,
                progress: Callable[[EpochLog], None] | None = None) -> TrainedModel:
    """Train RCR's heads on ``dataset`` against the store's relation vocabulary and save them.

    A fixed-seed ``val_fraction`` of the questions is held out for model selection (App. A.5.2). The model is
    written to ``out`` or ``models_dir()/<dataset>-<graph version>.pt`` (what ``load_retriever("auto")`` finds).
    """
    cfg = config or TrainConfig()
    vocab = [v["name"] for v in store.relation_vocabulary()]
    if not vocab:
        raise ConfigError("the graph has no (:Relation) vocabulary: load data first (`sgr load …`)")
    version = store.graph_version()
    examples = training_examples(dataset, data_dir, limit=limit, seed=cfg.seed)
    if len(examples) < 2:
        raise InputError(f"{dataset}: only {len(examples)} training questions with gold paths")
    train, val = split_validation(examples, val_fraction, cfg.seed)
    universe = list(dict.fromkeys([*vocab, *(r for e in examples for r in e.relations)]))
    result = train_heads(train, val, universe, vocab, cfg, encoder=encoder, progress=progress)
    cosine_val = CosineRelationRetriever(vocab, encoder=encoder).evaluate(val) if val else {}
    path = Path(out) if out else default_model_path(dataset, version)
    save_model(path, result, dataset=dataset, graph_version=version, vocabulary_size=len(vocab), config=cfg,
               encoder=encoder)
    return TrainedModel(path=path, dataset=dataset, graph_version=version, result=result,
                        vocabulary_size=len(vocab), cosine_val=cosine_val)


@dataclass
class RetrievalEval:
    """RRA@k of several retrievers on one evaluation set."""

    dataset: str
    questions: int
    vocabulary_size: int
    ceiling: float  # share of questions whose gold relations are all in the vocabulary
    rra: dict[str, dict[int, float]]  # retriever label -> {k: RRA@k}


def evaluate_retrieval(retrievers: dict[str, RelationRetriever], dataset: str, *, data_dir: Path | None = None,
                       limit: int | None = None, seed: int = 0, ks: Iterable[int] = RRA_KS) -> RetrievalEval:
    """RRA@k (RCR §5.1) of each retriever on ``dataset`` (see :func:`evaluation_examples`)."""
    ks = tuple(ks)
    examples = evaluation_examples(dataset, data_dir, limit=limit, seed=seed)
    if not retrievers:
        raise ConfigError("no retriever to evaluate")
    any_r = next(iter(retrievers.values()))
    vocab = set(any_r.relations)
    ceiling = (sum(1 for e in examples if all(r in vocab for r in e.relations)) / len(examples)) if examples else 0.0
    return RetrievalEval(dataset=dataset, questions=len(examples), vocabulary_size=len(vocab), ceiling=ceiling,
                         rra={label: r.evaluate(examples, ks) for label, r in retrievers.items()})


def trained_retriever(store: GraphStore, encoder: str = DEFAULT_ENCODER) -> RelationRetriever | None:
    """The trained retriever for this graph (``SGR_RELATION_MODEL`` or the newest model trained on this graph
    version), or None when there is none — for SGR's schema extraction, which keeps its plain-cosine retriever then."""
    model = os.environ.get("SGR_RELATION_MODEL") or find_model(store.graph_version())
    if model is None:
        return None
    return load_retriever(store, model, encoder)
