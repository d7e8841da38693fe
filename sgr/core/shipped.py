"""A model that ships in the checkout: ``models/<name>/`` (under :func:`sgr.core.config.models_dir`) with its
manifest (:func:`sgr.core.files.read_manifest`), materialised by set-up into ``SGR_HOME/models/<name>/<sha>/``.
The path generator (:mod:`sgr.llm.shipped`) and the relation encoder (:mod:`sgr.retrieval.shipped`) are two."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sgr.core.config import models_dir, sgr_home
from sgr.core.files import MANIFEST, read_manifest


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
