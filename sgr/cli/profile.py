"""``sgr profile show|index``: the graph profile sgr reads a database by, and the indexes linking may use."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from sgr.cli.app import group
from sgr.cli.render import plain, show_json


def register(app: typer.Typer) -> None:
    profile_app = group(app, "profile", "The graph profile: entity labels, naming and literal properties, "
                                        "relationship patterns (read from Neo4j's schema, or SGR_PROFILE's file).")

    @profile_app.command("show")
    def show(
        out: Optional[Path] = typer.Option(None, "--out", help="write the profile to this JSON file (to edit, then "
                                           "use with SGR_PROFILE=FILE) instead of printing it"),
    ) -> None:
        """Print the profile sgr uses for the database (it reads the schema; it writes nothing to the database)."""
        from sgr.api import connect, graph_profile

        with connect() as store:
            profile = graph_profile(store=store, out=out)
        if out is None:
            show_json(profile.to_dict())
        else:
            plain(f"wrote {out} ({len(profile.labels)} labels, {len(profile.relationships)} relationship patterns)")

    @profile_app.command("index")
    def index(
        yes: bool = typer.Option(False, "--yes", help="allow sgr to create the full-text indexes in your database"),
    ) -> None:
        """Create full-text indexes on the naming properties (only with --yes; nothing else is written)."""
        from sgr.api import connect, graph_profile

        with connect() as store:
            made = graph_profile(store=store, index=yes).created
        plain("created " + ", ".join(made) if made else "every naming property has a full-text index already")
