"""A model that ships in the checkout: ``models/<name>/`` (under :func:`sgr.core.config.models_dir`) with its
manifest (:func:`sgr.core.files.read_manifest`), materialised by set-up into ``SGR_HOME/models/<name>/<sha>/``.
The path generator (:mod:`sgr.llm.shipped`) and the relation encoder (:mod:`sgr.retrieval.shipped`) are two."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sgr.core.config import models_dir, sgr_home
from sgr.core.files import MANIFEST, file_entry, read_manifest


@dataclass(frozen=True)
class ShippedFolder:
    """``models/<name>/``; ``key_file`` is the file whose SHA-256 names the materialised version's folder,
    ``product`` the file set-up writes there."""

    name: str
    key_file: str
    product: str

    def folder(self) -> Path:
        return models_dir() / self.name

    def available(self) -> bool:
        """Whether the checkout has it (its manifest; the files are checked on use)."""
        return (self.folder() / MANIFEST).is_file()

    def manifest(self, check: bool = True) -> dict[str, Any]:
        return read_manifest(self.folder(), check=check)

    def target(self, man: Mapping[str, Any]) -> Path:
        """The file set-up materialises for the version ``man`` describes: one folder per version of ``key_file``
        (its SHA-256's start)."""
        return sgr_home() / "models" / self.name / man["files"][self.key_file]["sha256"][:12] / self.product

    def write(self, tensors: Mapping[str, Any], manifest: Mapping[str, Any], out: Path | None = None) -> Path:
        """Write a version (the ``export`` of each shipped model): ``tensors`` as fp16 safetensors in ``key_file``
        and ``manifest.json`` — ``manifest`` with ``files`` naming that file's entry (size, SHA-256) — in ``out``
        (default :meth:`folder`). Returns the folder."""
        from safetensors.torch import save_file

        out = out or self.folder()
        out.mkdir(parents=True, exist_ok=True)
        save_file({k: v.detach().to("cpu").half().contiguous() for k, v in tensors.items()}, str(out / self.key_file))
        man = {**manifest, "files": {self.key_file: file_entry(out / self.key_file)}}
        (out / MANIFEST).write_text(json.dumps(man, indent=1, default=str) + "\n")
        return out
