"""The ``sgr`` command line: a thin Typer layer over the ``sgr`` package.

Each command parses flags, calls one function of the package and prints its result. Errors that
users can cause are :class:`sgr.errors.SgrError`: one red line and a non-zero exit code.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from sgr.errors import SgrError

console = Console()
err_console = Console(stderr=True)


class _App(typer.Typer):
    """Typer app that turns :class:`SgrError` into one line on stderr and its exit code."""

    def __call__(self, *args, **kwargs):  # noqa: ANN002, ANN003
        try:
            return super().__call__(*args, **kwargs)
        except SgrError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
            sys.exit(exc.exit_code)


app = _App(help="Grounded question answering over a Freebase-style knowledge graph in Neo4j.",
           no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)


# --------------------------------------------------------------------------------------------
# neo4j: the embedded server
# --------------------------------------------------------------------------------------------
neo4j_app = typer.Typer(help="Start, stop and inspect the embedded Neo4j 5.26 (no Docker needed).",
                        no_args_is_help=True)
app.add_typer(neo4j_app, name="neo4j")


@neo4j_app.command("start")
def neo4j_start(
    port: Optional[int] = typer.Option(None, help="Bolt port (default: a free one)"),
    data_dir: Optional[Path] = typer.Option(None, help="store folder (default: $SGR_HOME/neo4j/dbms)"),
    heap: str = typer.Option("1g", help="JVM heap, e.g. 2g"),
    pagecache: str = typer.Option("512m", help="Neo4j page cache, e.g. 1g"),
    browser: bool = typer.Option(False, "--browser", help="also serve Neo4j Browser on 127.0.0.1"),
) -> None:
    """Start Neo4j (builds the launcher with Maven on first use) and wait until Bolt answers."""
    from sgr import neo4j_server

    info = neo4j_server.start(port=port, data_dir=data_dir, heap=heap, pagecache=pagecache)
    console.print(f"Neo4j is running: [bold]{info.uri}[/] (pid {info.pid}, store {info.home}, log {info.log})")
    if browser:
        from sgr import browser as browser_mod

        url = browser_mod.serve(info)
        console.print(f"Neo4j Browser: [bold]{url}[/]")
    console.print(f"Use it from other shells with: export NEO4J_URI={info.uri}")


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the embedded Neo4j cleanly."""
    from sgr import neo4j_server

    console.print("stopped" if neo4j_server.stop() else "Neo4j was not running")


@neo4j_app.command("status")
def neo4j_status() -> None:
    """Say whether the embedded Neo4j runs, where, and with which store."""
    from sgr import neo4j_server

    info = neo4j_server.status()
    if info is None:
        console.print("Neo4j is not running (start it with `sgr neo4j start`)")
        raise typer.Exit(1)
    console.print(f"running: {info.uri} pid {info.pid} store {info.home} log {info.log}"
                  + (f" browser {info.browser_url}" if info.browser_url else ""))


@app.command("query")
def query(
    cypher: str = typer.Argument(..., help="a read-only Cypher query"),
    limit: int = typer.Option(50, help="row cap"),
    timeout: float = typer.Option(30.0, help="seconds before Neo4j stops the query"),
) -> None:
    """Run a read-only Cypher query (READ access, timeout, row cap) and print the rows."""
    from sgr.store import GraphStore

    with GraphStore.from_settings() as store:
        store.verify()
        result = store.run_generated(cypher, timeout_s=timeout, row_cap=limit)
    if not result.rows:
        console.print("(no rows)")
        return
    table = Table(*result.rows[0].keys())
    for row in result.rows:
        table.add_row(*(str(v) for v in row.values()))
    console.print(table)
    if result.truncated:
        console.print(f"[yellow]only the first {limit} rows are shown (--limit)[/]")


# --------------------------------------------------------------------------------------------
# load / stats (loaders/)
# --------------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------------
# llm: the local model server (sgr/local_llm.py)
# --------------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------------
# ask (sgr/pipeline.py)
# --------------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------------
# eval (sgr/evaluation/)
# --------------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------------
# scr (sgr/scr/)
# --------------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------------
# relations (sgr/relations.py)
# --------------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------------
# evidence (sgr/evidence.py)
# --------------------------------------------------------------------------------------------


if __name__ == "__main__":
    app()
