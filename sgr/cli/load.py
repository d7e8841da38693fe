"""``sgr load freebase|triples``, ``sgr stats`` and ``sgr query``: data into Neo4j and a look at it."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from sgr.cli.app import group
from sgr.cli.render import load_progress, plain, show_json, show_load_report, show_rows, show_stats

FORMAT_HELP = "rog | ntriples | triples (default: from the extension, else the first lines)"


def _load(paths: list[Path], fmt: Optional[str], keep_all: bool, max_errors: int, batch_size: int,
          force: bool, bulk: Optional[bool] = False, workers: int = 1) -> None:
    from sgr.api import load

    with load_progress() as progress:
        report = load(paths, format=fmt, keep_all=keep_all, max_errors=max_errors, batch_size=batch_size, force=force,
                      bulk=bulk, workers=workers, progress=progress)
    show_load_report(report, max_errors)


def register(app: typer.Typer) -> None:
    load_app = group(app, "load", "Load Freebase-style graphs into Neo4j (batched, idempotent, resumable).")

    @load_app.command("freebase")
    def load_freebase(
        paths: list[Path] = typer.Argument(..., help="RoG JSONL/Parquet, N-Triples (.nt/.nt.gz) or triples files"),
        fmt: Optional[str] = typer.Option(None, "--format", help=FORMAT_HELP),
        keep_all: bool = typer.Option(False, "--keep-all", help="keep Freebase housekeeping relations "
                                      "(type.*, common.*, freebase.*, kg.*, rdf/rdfs/owl)"),
        max_errors: int = typer.Option(100, "--max-errors", help="malformed lines tolerated before the load stops"),
        batch_size: int = typer.Option(20_000, "--batch-size", help="rows per write transaction"),
        force: bool = typer.Option(False, "--force", help="load files again even if already loaded unchanged"),
        bulk: Optional[bool] = typer.Option(None, "--bulk/--no-bulk", help="neo4j-admin import into an empty "
                                            "embedded database (default: chosen for a large input into an empty one)"),
        workers: int = typer.Option(1, "--workers", help="concurrent write transactions (transactional path)"),
    ) -> None:
        """Load Freebase-style data: RoG question graphs, Freebase N-Triples, or plain triples."""
        _load(paths, fmt, keep_all, max_errors, batch_size, force, bulk, workers)

    @load_app.command("triples")
    def load_triples(
        paths: list[Path] = typer.Argument(..., help="files of head|relation|tail or TAB-separated lines"),
        max_errors: int = typer.Option(100, "--max-errors", help="malformed lines tolerated before the load stops"),
        batch_size: int = typer.Option(20_000, "--batch-size", help="rows per write transaction"),
        force: bool = typer.Option(False, "--force", help="load files again even if already loaded unchanged"),
    ) -> None:
        """Load plain triples (MetaQA kb.txt style: head|relation|tail, or TSV)."""
        _load(paths, "triples", False, max_errors, batch_size, force)

    @load_app.command("example")
    def load_example_cmd(
        name: str = typer.Argument(..., help="movies: Neo4j's movie graph (read from the vendored Neo4j Browser); "
                                   "metaqa: the MetaQA KB as a property graph"),
        index: bool = typer.Option(True, "--index/--no-index", help="full-text indexes on the naming properties "
                                   "(title, name) for linking"),
        path: Optional[Path] = typer.Option(None, "--from", help="metaqa: the KB file (default: "
                                            "SGR_SHARED_DATA/metaqa/kb.txt)"),
    ) -> None:
        """Load an example property graph as it is (the movie graph: loading it again adds nothing)."""
        from sgr.api import connect, load_example

        with connect() as store:
            report = load_example(name, store=store, index=index, path=path)
        what = ("already loaded: nothing added" if report.skipped
                else f"{report.nodes:,} nodes and {report.relationships:,} relationships created")
        plain(f"example {report.name} ({report.source}): {what}"
              + (f"; full-text indexes {', '.join(report.indexes)}" if report.indexes else ""))

    @app.command("stats")
    def stats_cmd(
        top: int = typer.Option(10, help="how many relation types to list"),
        as_json: bool = typer.Option(False, "--json", help="print JSON instead of tables"),
    ) -> None:
        """Nodes, CVTs, relationships and relation types in the graph, and the files loaded into it."""
        from sgr.api import connect, stats

        with connect() as store:
            st = stats(store=store, top=top)
        if as_json:
            show_json(st.to_dict())
        else:
            show_stats(st, store.uri)

    @app.command("query")
    def query(
        cypher: str = typer.Argument(..., help="a read-only Cypher query"),
        limit: int = typer.Option(50, help="row cap"),
        timeout: float = typer.Option(30.0, help="seconds before Neo4j stops the query"),
    ) -> None:
        """Run a read-only Cypher query (READ access, timeout, row cap) and print the rows."""
        from sgr.api import connect, query as run_query

        with connect() as store:
            result = run_query(cypher, store=store, limit=limit, timeout=timeout)
        show_rows(result.rows, result.truncated, limit)
