"""RCR's fine-tuned encoder: the sentence encoder itself trained for relation retrieval.

The paper's retriever (RCR §4.1.1) keeps its encoder frozen and trains two projection heads over it
(:mod:`sgr.retrieval.training`). This is the lever beside it: every weight of the sentence encoder ``E`` is trained,
and relations are ranked by the plain cosine of the trained encoder,

    s(q, r) = cos(E(q), E(r)),   E(x) = mean of the encoder's last token states over x's tokens,

so the retriever stays a bi-encoder whose relation vectors are computed once per graph
(:class:`sgr.retrieval.relations.FineTunedRelationRetriever`).

Loss — multi-positive InfoNCE at temperature ``τ``: for a question ``q`` with gold relations ``P_q`` and the batch's
candidate set ``C`` (every gold relation of the batch, the ``hard_negatives`` highest-ranked non-gold relations of
each question under the encoder of the epoch's start, mined over the training universe, and ``random_negatives``
uniform ones),

    L = mean over (q, p ∈ P_q) of −log( e^{s(q,p)/τ} / (e^{s(q,p)/τ} + Σ_{n ∈ C∖P_q} e^{s(q,n)/τ}) )

(:func:`info_nce_loss`). AdamW; the epoch with the best validation RRA@``select_k`` is kept. Training resumes from
``state_dir`` (the encoder, the optimiser and the history after every epoch).

Every weight is trained by default (``lora_rank = 0``). With ``lora_rank = r`` the encoder's weights stay frozen and
peft's LoRA adapters of rank ``r`` on every linear layer are trained instead, ``W x + (α/r)·B A x``; they are folded
into the weights (``W ← W + (α/r)·B A``) before the folder is saved, so the saved encoder is a plain one. That is the
form in which a fine-tuned MPNet comes back from a GPU machine (:mod:`sgr.retrieval.encoder_bundle`): the adapters
are a few MB where the encoder is 440 MB. ``device`` runs the training on ``cuda`` when there is one. Measured on WebQSP
(``bench/rcr_encoder.py``): test RRA@50 0.835 after 4 epochs of all-MiniLM-L6-v2, against 0.800 / 0.810 for the
heads over frozen MiniLM / MPNet.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from sgr.core.checkpoints import load_checkpoint
from sgr.core.errors import ConfigError
from sgr.graph.store import relation_text
from sgr.graph.store import GraphStore
from sgr.retrieval.supervision import RelationExample
from sgr.retrieval.training import (DEFAULT_ENCODER, EpochLog, TrainedModel, TrainingRun, cosine_rra,
                                    default_model_path, encoder_folder, gold_ranks, provenance, rra_at_k, training_data,
                                    validation_ks)

CHECKPOINT = "checkpoint.pt"
BEST = "best_encoder.pt"
ADAPTERS = "best_adapters.pt"  # the chosen epoch's LoRA adapters alone (lora_rank > 0)
#: Config fields that change the trajectory: a checkpoint written under other values is not resumed.
_TRAJECTORY = ("lr", "weight_decay", "tau", "batch_size", "hard_negatives", "random_negatives", "max_length", "seed",
               "encoder", "lora_rank", "lora_alpha")


@dataclass
class EncoderTrainConfig:
    """Hyper-parameters of the fine-tuned encoder (the values ``bench/rcr_encoder.py`` measured)."""

    epochs: int = 10
    lr: float = 5e-5
    weight_decay: float = 0.01
    tau: float = 0.05
    batch_size: int = 32
    hard_negatives: int = 8
    random_negatives: int = 64
    max_length: int = 48  # tokens per question or relation text
    select_k: int = 50
    seed: int = 0
    threads: int = 1
    patience: int | None = None  # stop after this many epochs without a better validation RRA (None: never)
    encoder: str = DEFAULT_ENCODER  # the encoder fine-tuning starts from
    lora_rank: int = 0  # 0: every weight trained; r > 0: LoRA adapters of rank r on every linear layer
    lora_alpha: int = 32  # LoRA scale α (the update is (α/r)·B A)
    device: str = "cpu"  # cpu | cuda | auto (cuda when present)

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "max_length", "select_k", "threads"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.lora_rank < 0 or self.lora_alpha < 1:
            raise ConfigError(f"lora_rank must be >= 0 and lora_alpha >= 1, got {self.lora_rank}, {self.lora_alpha}")
        if self.device not in ("cpu", "cuda", "auto"):
            raise ConfigError(f"device must be cpu, cuda or auto, got {self.device!r}")
        if self.tau <= 0 or self.lr <= 0:
            raise ConfigError(f"tau and lr must be positive, got tau={self.tau}, lr={self.lr}")
        if self.hard_negatives < 0 or self.random_negatives < 0:
            raise ConfigError("hard_negatives and random_negatives cannot be negative")


@dataclass(kw_only=True)
class EncoderTrainResult(TrainingRun):
    """The saved encoder folder and how training went."""

    folder: Path
    resumed_after: int = 0  # epochs found in the checkpoint
    device: str = "cpu"  # where it trained


def info_nce_loss(sim: torch.Tensor, gold: torch.Tensor, tau: float) -> torch.Tensor:
    """The module's loss for cosine similarities ``sim`` ``(B, C)`` and a gold mask ``(B, C)``: the mean over every
    gold (row, column) of ``−log(e^{s/τ} / (e^{s/τ} + Σ_{non-gold n} e^{s_n/τ}))``; rows without gold are skipped."""
    logits = sim / tau
    negatives = torch.logsumexp(logits.masked_fill(gold, float("-inf")), dim=1, keepdim=True)  # (B, 1)
    per_gold = torch.logaddexp(logits, negatives.expand_as(logits)) - logits
    if not bool(gold.any()):
        return logits.sum() * 0.0
    return per_gold[gold].mean()


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when torch sees a GPU, else ``cpu``; ConfigError for ``cuda`` without one."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("--device cuda: torch sees no CUDA GPU here")
    return device


def lora_config(rank: int, alpha: int):  # -> peft.LoraConfig (peft is imported only when LoRA is used)
    """The adapters of ``lora_rank``: every linear layer of the encoder (q, k, v, o and both feed-forward layers)."""
    from peft import LoraConfig

    return LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=0.0, target_modules="all-linear", bias="none")


def with_lora(model, rank: int, alpha: int):  # noqa: ANN001, ANN201 - a transformers model in, a peft model out
    """A peft model over ``model`` with LoRA adapters of rank ``rank`` (only they are trainable). The adapters are
    put into ``model``'s own layers, so ``model`` itself (the sentence encoder's module) runs them."""
    from peft import get_peft_model

    return get_peft_model(model, lora_config(rank, alpha))


def adapter_state(model) -> dict[str, torch.Tensor]:  # noqa: ANN001 - a peft model
    """The LoRA adapters' tensors of a peft model (what a GPU run sends back)."""
    return {k: v.detach().cpu() for k, v in model.state_dict().items() if "lora_" in k}


def merge_adapters(st, state: dict[str, torch.Tensor], rank: int, alpha: int):  # noqa: ANN001, ANN201
    """The sentence encoder ``st`` with the adapters ``state`` (from :func:`adapter_state`) folded into its weights;
    ConfigError when they do not fit its layers."""
    peft_model = with_lora(st[0].auto_model, rank, alpha)
    expected = {k for k in peft_model.state_dict() if "lora_" in k}
    if set(state) != expected:
        odd = sorted(set(state) ^ expected)
        raise ConfigError(f"the adapters do not fit this encoder ({len(odd)} tensors differ, e.g. {odd[0]})")
    peft_model.load_state_dict(state, strict=False)
    peft_model.merge_and_unload()  # in place: the encoder's own layers get W + (α/r)·B A
    return st


class _Encoder:
    """A trainable copy of a sentence encoder and its mean-pooled, unit-length sentence vectors."""

    def __init__(self, name: str, max_length: int, device: str = "cpu", lora_rank: int = 0,
                 lora_alpha: int = 32) -> None:
        from sgr.llm.encoders import fresh_sentence_encoder

        self.st = fresh_sentence_encoder(name)  # never the shared copy that embed_texts serves
        self.device = device
        self.peft = with_lora(self.st[0].auto_model, lora_rank, lora_alpha) if lora_rank > 0 else None
        self.st.to(device)
        self.model, self.tok, self.max_length = self.st[0].auto_model, self.st.tokenizer, max_length

    @property
    def lora(self) -> bool:
        return self.peft is not None

    def merged(self):  # -> SentenceTransformer with plain weights (adapters folded in)
        if self.peft is not None:
            self.peft.merge_and_unload()
            self.peft = None
        return self.st

    def encode(self, texts: Sequence[str], grad: bool) -> torch.Tensor:
        b = self.tok(list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        b = {k: v.to(self.device) for k, v in b.items()}
        with torch.set_grad_enabled(grad):
            out = self.model(**b).last_hidden_state
            m = b["attention_mask"].unsqueeze(-1).float()
            return F.normalize((out * m).sum(1) / m.sum(1).clamp(min=1), dim=-1)

    def encode_all(self, texts: Sequence[str]) -> torch.Tensor:
        self.model.eval()
        return torch.cat([self.encode(texts[i:i + 256], False).cpu() for i in range(0, len(texts), 256)]) \
            if texts else torch.zeros((0, 1))

    def rra(self, examples: Sequence[RelationExample], vocabulary: Sequence[str], ks: Sequence[int]
            ) -> dict[int, float]:
        if not examples:
            return {}
        q = self.encode_all([e.question for e in examples])
        r = self.encode_all([relation_text(n) for n in vocabulary])
        return rra_at_k(gold_ranks((q @ r.T).numpy(), vocabulary, [e.relations for e in examples]), ks)


def _log(rec: dict) -> EpochLog:
    return EpochLog(int(rec["epoch"]), float(rec["loss"]), {int(k): float(v) for k, v in rec["val"].items()},
                    float(rec["seconds"]))


def train_encoder(train: Sequence[RelationExample], val: Sequence[RelationExample], universe: Sequence[str],
                  vocabulary: Sequence[str], config: EncoderTrainConfig | None = None, *, out: Path,
                  state_dir: Path, progress: Callable[[EpochLog], None] | None = None,
                  show_progress: bool = False) -> EncoderTrainResult:
    """Fine-tune ``config.encoder`` on ``train`` (negatives from ``universe`` plus the training relations), keep
    the epoch with the best validation RRA@``select_k`` over ``vocabulary`` and save it as a sentence-transformers
    folder at ``out`` (loadable by every function of :mod:`sgr.llm.encoders`). Resumes from ``state_dir``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    cfg = config or EncoderTrainConfig()
    if not train:
        raise ConfigError("no training questions")
    t_start = time.perf_counter()
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    state_dir.mkdir(parents=True, exist_ok=True)
    universe = list(dict.fromkeys([*universe, *(r for e in train for r in e.relations)]))
    texts = [relation_text(n) for n in universe]
    index = {n: i for i, n in enumerate(universe)}
    vocab = list(vocabulary)
    device = resolve_device(cfg.device)
    enc = _Encoder(cfg.encoder, cfg.max_length, device, cfg.lora_rank, cfg.lora_alpha)
    opt = torch.optim.AdamW([p for p in enc.model.parameters() if p.requires_grad], lr=cfg.lr,
                            weight_decay=cfg.weight_decay)
    hist: dict = {"epochs": [], "best": None}
    checkpoint = state_dir / CHECKPOINT
    if checkpoint.exists():
        saved = load_checkpoint(checkpoint, what="encoder training checkpoint", map_location=device)
        theirs = {k: saved["config"].get(k) for k in _TRAJECTORY} if "config" in saved else None
        if theirs is not None and theirs != {k: getattr(cfg, k) for k in _TRAJECTORY}:
            raise ConfigError(f"{checkpoint}: written with other settings ({theirs}); delete the folder to start "
                              "again, or pass the same settings")
        enc.model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["optimizer"])
        hist = saved["history"]
    resumed = len(hist["epochs"])
    seed_base = cfg.seed * 1_000_003
    since_best = resumed - hist["best"]["epoch"] if hist["best"] else 0  # epochs are numbered 1, 2, … in order
    golds = [{index[x] for x in e.relations if x in index} for e in train]
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    steps = -(-len(train) // cfg.batch_size)
    with Progress(*columns, disable=not show_progress, transient=True) as bar:
        while len(hist["epochs"]) < cfg.epochs and (cfg.patience is None or since_best < cfg.patience):
            ep = len(hist["epochs"])
            t0 = time.time()
            task = bar.add_task(f"epoch {ep + 1}/{cfg.epochs}", total=steps)
            hard: list[list[int]] = [[] for _ in train]
            if cfg.hard_negatives:
                q, r = enc.encode_all([e.question for e in train]), enc.encode_all(texts)
                width = min(len(universe), cfg.hard_negatives + max(len(g) for g in golds))
                top = torch.topk(q @ r.T, width, dim=1).indices.tolist()
                hard = [[j for j in row if j not in g][:cfg.hard_negatives] for row, g in zip(top, golds)]
            enc.model.train()
            order = list(range(len(train)))
            random.Random(seed_base + ep).shuffle(order)
            losses: list[float] = []
            for s in range(0, len(order), cfg.batch_size):
                rows = order[s:s + cfg.batch_size]
                cand: dict[int, None] = {j: None for i in rows for j in golds[i]}
                for i in rows:
                    cand.update((j, None) for j in hard[i])
                draw = random.Random((seed_base + ep) * 100_000 + s).sample(range(len(universe)),
                                                                            min(cfg.random_negatives, len(universe)))
                cand.update((j, None) for j in draw)
                ids = list(cand)
                pos = {j: k for k, j in enumerate(ids)}
                gold = torch.zeros((len(rows), len(ids)), dtype=torch.bool)
                for b, i in enumerate(rows):
                    gold[b, [pos[j] for j in golds[i]]] = True
                gold = gold.to(device)
                sim = enc.encode([train[i].question for i in rows], True) @ enc.encode([texts[j] for j in ids], True).T
                loss = info_nce_loss(sim, gold, cfg.tau)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
                bar.advance(task)
            bar.remove_task(task)
            v = enc.rra(val, vocab, validation_ks(cfg.select_k))
            rec = {"epoch": ep + 1, "loss": sum(losses) / len(losses), "val": v, "seconds": time.time() - t0}
            if hist["best"] is None or not val or v[cfg.select_k] > hist["best"]["val"][cfg.select_k]:
                hist["best"] = rec
                torch.save(enc.model.state_dict(), state_dir / BEST)
                since_best = 0
            else:
                since_best += 1
            hist["epochs"].append(rec)
            torch.save({"model": enc.model.state_dict(), "optimizer": opt.state_dict(), "history": hist,
                        "config": asdict(cfg)}, checkpoint)
            if progress:
                progress(_log(rec))
    best = hist["best"]
    enc.model.load_state_dict(load_checkpoint(state_dir / BEST, what="encoder state", map_location=device))
    if enc.lora:
        torch.save(adapter_state(enc.peft), state_dir / ADAPTERS)
    out.mkdir(parents=True, exist_ok=True)
    enc.merged().to("cpu").save(str(out))
    return EncoderTrainResult(folder=out, best_epoch=int(best["epoch"]),
                              best_val={int(k): float(x) for k, x in best["val"].items()},
                              history=[_log(r) for r in hist["epochs"]], universe_size=len(universe),
                              train_questions=len(train), val_questions=len(val),
                              seconds=time.perf_counter() - t_start, resumed_after=resumed, device=device)


def save_encoder_model(path: Path, result: EncoderTrainResult, *, dataset: str, graph_version: str,
                       vocabulary_size: int, config: EncoderTrainConfig) -> Path:
    """Write the model file ``path`` (provenance, ``kind: "encoder"``) beside the encoder folder it names."""
    if result.folder.resolve() != encoder_folder(path).resolve():
        raise ConfigError(f"{result.folder}: a fine-tuned encoder must sit at {encoder_folder(path)} beside {path}")
    meta: dict[str, Any] = {
        "kind": "encoder", **provenance(result, dataset=dataset, graph_version=graph_version,
                                        vocabulary_size=vocabulary_size, config=config),
        "encoder_folder": result.folder.name, "history": [asdict(h) for h in result.history]}
    torch.save({"meta": meta}, path)
    return path


def train_encoder_model(store: GraphStore, dataset: str, *, config: EncoderTrainConfig | None = None,
                        data_dir: Path | None = None, limit: int | None = None, val_fraction: float = 0.1,
                        out: Path | None = None, state_dir: Path | None = None,
                        progress: Callable[[EpochLog], None] | None = None,
                        show_progress: bool = False) -> TrainedModel:
    """Fine-tune the encoder on ``dataset`` against the store's relation vocabulary and save it: the model file
    ``out`` or ``models_dir()/<dataset>-encoder-<graph version>.pt`` (what ``load_retriever("auto")`` finds), the
    encoder folder beside it, the resumable state in ``state_dir`` (default: the model file with ``.state``)."""
    cfg = config or EncoderTrainConfig()
    data = training_data(store, dataset, data_dir=data_dir, limit=limit, val_fraction=val_fraction, seed=cfg.seed)
    path = Path(out) if out else default_model_path(dataset, data.graph_version, "encoder")
    result = train_encoder(data.train, data.val, data.universe, data.vocabulary, cfg, out=encoder_folder(path),
                           state_dir=state_dir or path.with_suffix(".state"), progress=progress,
                           show_progress=show_progress)
    save_encoder_model(path, result, dataset=dataset, graph_version=data.graph_version,
                       vocabulary_size=len(data.vocabulary), config=cfg)
    cosine_val = cosine_rra(data.val, data.vocabulary, cfg.encoder, validation_ks(cfg.select_k)) if data.val else {}
    return TrainedModel(path=path, dataset=dataset, graph_version=data.graph_version, result=result,
                        vocabulary_size=len(data.vocabulary), cosine_val=cosine_val)
