"""``sgr neo4j start|stop|status``: the embedded Neo4j 5.26 (sgr.graph.server)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from sgr.cli.app import group
from sgr.cli.render import console, t


def register(app: typer.Typer) -> None:
    neo4j_app = group(app, "neo4j", "Start, stop and inspect the embedded Neo4j 5.26 (no Docker needed).")

    @neo4j_app.command("start")
    def neo4j_start(
        port: Optional[int] = typer.Option(None, help="Bolt port (default: a free one)"),
        data_dir: Optional[Path] = typer.Option(None, help="store folder (default: $SGR_HOME/neo4j/dbms)"),
        heap: str = typer.Option("1g", help="JVM heap, e.g. 2g"),
        pagecache: str = typer.Option("512m", help="Neo4j page cache, e.g. 1g"),
        browser: bool = typer.Option(False, "--browser", help="also serve Neo4j Browser on 127.0.0.1"),
        no_auth: bool = typer.Option(False, "--no-auth", help="turn authentication off (not recommended)"),
        warm: bool = typer.Option(True, "--warm-up/--no-warm-up",
                                  help="ask one question of the loaded graph in the background, so that your first "
                                       "question does not pay for Neo4j's cold caches"),
    ) -> None:
        """Start Neo4j (builds the launcher with Maven on first use) and wait until Bolt answers."""
        from sgr.api import NO_AUTH_WARNING, neo4j_password_file, serve_browser, start_neo4j, warm_up

        if no_auth:
            console.print(f"[yellow]warning: {NO_AUTH_WARNING}[/]", soft_wrap=True)
        info = start_neo4j(port=port, data_dir=data_dir, heap=heap, pagecache=pagecache, auth=not no_auth)
        console.print(f"Neo4j is running: [bold]{t(info.uri)}[/] (pid {info.pid}, store {t(info.home)}, log {t(info.log)})")
        if info.auth:
            console.print(f"user neo4j, password in {t(neo4j_password_file())} (sgr commands read it; NEO4J_PASSWORD "
                          "overrides)", soft_wrap=True)
        if browser:
            console.print(f"Neo4j Browser: [bold]{t(serve_browser(info))}[/]", soft_wrap=True)
        console.print(f"Use it from other shells with: export NEO4J_URI={t(info.uri)}")
        log = warm_up(info) if warm else None
        if log is not None:
            console.print(f"warming up with one question of the graph in the background (log {t(log)})",
                          soft_wrap=True)

    @neo4j_app.command("stop")
    def neo4j_stop() -> None:
        """Stop the embedded Neo4j cleanly."""
        from sgr.api import stop_neo4j

        console.print("stopped" if stop_neo4j() else "Neo4j was not running")

    @neo4j_app.command("status")
    def neo4j_status() -> None:
        """Say whether the embedded Neo4j runs, where, and with which store."""
        from sgr.api import neo4j_status as running_server

        info = running_server()
        if info is None:
            console.print("Neo4j is not running (start it with `sgr neo4j start`)")
            raise typer.Exit(1)
        console.print(f"running: {t(info.uri)} pid {info.pid} store {t(info.home)} log {t(info.log)}"
                      + (f" browser {info.browser_url}" if info.browser_url else ""), soft_wrap=True)
