"""``sgr ask``: answer one question with a method (SGR by default) and show its trace and evidence."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from sgr.cli.render import show_ask

METHOD_HELP = ("sgr (default), its variants (sgr-direct, sgr-verify, sgr-no-schema, cypher-only, sgr-compiled: "
               "no LLM, llm-only) or any `sgr eval` method: rcr, scr, scr+llm …")


def register(app: typer.Typer) -> None:
    @app.command("ask")
    def ask_cmd(
        question: str = typer.Argument(..., help="the question, e.g. \"what does jamaican people speak?\""),
        topic: Optional[list[str]] = typer.Option(None, "--topic", "-t", help="topic entity name or MID "
                                                  "(repeatable); default: linked from the text"),
        method: str = typer.Option("sgr", "--method", "-m", help=METHOD_HELP),
        hops: int = typer.Option(2, "--hops", help="expansion depth (a CVT node is not a hop); 3 when the "
                                              "question asks for a far answer (-o deeper_at=2: never)"),
        max_repairs: int = typer.Option(2, "--max-repairs", help="rounds of feeding Neo4j's errors back to the LLM"),
        retriever: Optional[str] = typer.Option(None, "--retriever",
                                                help="SGR: who proposes the collaborative stage's paths: schema (G_q, "
                                                     "default), scr (the trained SCR GNN, ρ = path probability) or "
                                                     "schema+scr"),
        scr_checkpoint: Optional[Path] = typer.Option(None, "--scr-checkpoint",
                                                      help="SCR .pt (default: the latest `sgr scr train` run)"),
        as_json: bool = typer.Option(False, "--json", help="print the whole trace as JSON"),
        explain: bool = typer.Option(False, "--explain", help="print the whole trace (entities, schema, Cypher, "
                                     "validation, votes, paths, cost) before the answer"),
        min_confidence: Optional[float] = typer.Option(None, "--min-confidence",
                                                       help="below this calibrated confidence (0–1) the answer is "
                                                            "'not found in the graph' (default: the calibrator's "
                                                            "threshold; 0: always answer)"),
        save: bool = typer.Option(False, "--save", help="record the evidence in the graph (`sgr evidence list`)"),
        html: Optional[Path] = typer.Option(None, "--html", help="write the offline HTML evidence view here"),
        option: Optional[list[str]] = typer.Option(None, "--option", "-o", help="method option KEY=VALUE "
                                                   "(repeatable), as for `sgr eval`: e.g. -o inverse_relations=false"),
    ) -> None:
        """Answer one question: answers with their paths, the Cypher that ran, route, costs, evidence."""
        from sgr.api import ask, connect

        from sgr.cli.app import key_values

        options = key_values(option)  # only what was given: a method without these settings refuses them
        if retriever is not None:
            options["path_retriever"] = retriever
        if scr_checkpoint is not None:
            options["scr_checkpoint"] = str(scr_checkpoint)
        with connect() as store:
            result = ask(question, store=store, topics=topic or [], method=method, hops=hops,
                         max_repairs=max_repairs, options=options, save=save, html=html,
                         min_confidence=min_confidence)
        show_ask(result, as_json=as_json, explain=explain)
