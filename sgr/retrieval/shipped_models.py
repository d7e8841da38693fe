"""The trained models that ship with sgr under ``models/``, all of them: SGR's path generator
(:mod:`sgr.llm.shipped`) and the relation encoder (:mod:`sgr.retrieval.shipped`) — what ``sgr models status`` lists
and ``sgr models materialise`` (run by set-up) checks and folds into usable models. Imports stay lazy: listing the
models must not load torch."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class ShippedModel:
    """One trained model that ships with sgr (``models/<name>/``) and where set-up materialised it."""

    name: str
    folder: Path
    manifest: dict[str, Any]
    materialised: Path | None = None
    seconds: float | None = None
    error: str | None = None


def shipped_models(*, materialise: bool = False, force: bool = False, only: str | None = None) -> list[ShippedModel]:
    """The shipped models (``sgr models status``); with ``materialise`` (``sgr models materialise``, run by
    set-up) each is checked against its manifest's SHA-256s and folded into a usable model under
    ``SGR_HOME/models`` (``force``: again; ``only``: that one). A model that cannot be materialised carries its
    ``error``."""
    import time

    from sgr.core.errors import SgrError as _Err
    from sgr.llm import shipped as lm
    from sgr.llm.server import model_path
    from sgr.retrieval import shipped as encoder

    out: list[ShippedModel] = []
    for mod, make in ((lm, lambda: lm.materialise(model_path(), force=force)),
                      (encoder, lambda: encoder.materialise(force=force))):
        if not mod.available() or (only is not None and only != mod.NAME):
            continue
        item = ShippedModel(mod.NAME, mod.folder(), mod.manifest(check=False))
        try:
            if materialise:
                t0 = time.perf_counter()
                item.materialised = make()
                item.seconds = time.perf_counter() - t0
            else:
                target = mod.target(item.manifest)
                item.materialised = target if target.is_file() else None
        except _Err as exc:
            item.error = str(exc)
        out.append(item)
    return out
