"""``sgr evidence list|show|clear``: saved evidence, (:SgrQuestion)-[:SGR_EVIDENCE]->(entity) in the graph."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from sgr.cli.app import group
from sgr.cli.render import console, show_evidence, show_evidence_list


def register(app: typer.Typer) -> None:
    evidence_app = group(app, "evidence", "Saved evidence of answers: (:SgrQuestion)-[:SGR_EVIDENCE]->(entity) in "
                                          "the graph.")

    @evidence_app.command("list")
    def evidence_list(limit: int = typer.Option(50, help="show at most this many, newest first")) -> None:
        """List saved questions (`sgr ask --save`, `sgr eval --save-evidence`)."""
        from sgr.api import connect, list_evidence

        with connect() as store:
            show_evidence_list(list_evidence(store=store, limit=limit))

    @evidence_app.command("show")
    def evidence_show(
        question_id: str = typer.Argument(..., metavar="ID", help="id from `sgr evidence list`"),
        html: Optional[Path] = typer.Option(None, "--html", help="also write the offline HTML view to this file"),
    ) -> None:
        """Show one saved question: answers, scored paths, evidence entities, the Cypher that ran, how to redraw
        it."""
        from sgr.api import connect, open_evidence

        with connect() as store:
            view = open_evidence(question_id, store=store, html=html)
        show_evidence(view)

    @evidence_app.command("clear")
    def evidence_clear(
        question_id: Optional[str] = typer.Argument(None, metavar="[ID]", help="delete only this one"),
    ) -> None:
        """Delete saved evidence (all of it, or one question); the data it points at is not touched."""
        from sgr.api import clear_evidence, connect

        with connect() as store:
            n = clear_evidence(question_id, store=store)
        console.print(f"deleted {n} saved question(s) and their evidence links")
