"""``sgr models status|materialise``: the trained models that ship with sgr (``models/``, sgr.llm.shipped and
sgr.retrieval.shipped)."""

from __future__ import annotations

from typing import Optional

import typer

from sgr.cli.app import group
from sgr.cli.render import show_models


def register(app: typer.Typer) -> None:
    models_app = group(app, "models", "The trained models that ship with sgr (models/): check and materialise them.")

    @models_app.command("status")
    def models_status() -> None:
        """List the shipped models, their validation figures and whether set-up materialised them."""
        from sgr.api import shipped_models

        if not show_models(shipped_models(), "materialised at"):
            raise typer.Exit(1)

    @models_app.command("materialise")
    def models_materialise(force: bool = typer.Option(False, help="write them again even when already there"),
                           only: Optional[str] = typer.Option(None, help="only this model (schema-lm or "
                                                              "relation-encoder)")) -> None:
        """Check each shipped model's files against its manifest (SHA-256) and fold it into a usable model under
        $SGR_HOME/models (the path generator into a GGUF, the relation encoder into an encoder folder)."""
        from sgr.api import shipped_models

        if not show_models(shipped_models(materialise=True, force=force, only=only), "ready at"):
            raise typer.Exit(1)
