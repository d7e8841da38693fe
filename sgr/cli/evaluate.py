"""``sgr eval DATASET --method M`` (= ``sgr eval run …``), ``sgr eval compare A B``, ``sgr eval report RUN``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from typer.core import TyperGroup

from sgr.cli.app import group, key_values
from sgr.cli.render import console, show_report, show_run


class EvalGroup(TyperGroup):
    """``sgr eval DATASET …`` runs ``sgr eval run DATASET …``; ``compare`` and ``report`` are subcommands."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


def register(app: typer.Typer) -> None:
    eval_app = group(app, "eval", "Evaluate a method on a KGQA dataset: `sgr eval DATASET --method M`, "
                                  "`sgr eval compare RUN_A RUN_B`.", cls=EvalGroup)

    @eval_app.command("run")
    def eval_run(
        dataset: str = typer.Argument(..., help="a file (MetaQA .tsv, RoG-style or plain .jsonl/.json/.parquet) or "
                                                "a name: metaqa-1hop, metaqa-2hop, metaqa-3hop, webqsp"),
        method: str = typer.Option(..., "--method", "-m", help="method name (see sgr.methods.registry.METHODS)"),
        out: Optional[Path] = typer.Option(None, "--out", help="run folder (default $SGR_HOME/runs/<dataset>__"
                                                               "<method>…); rerun with the same folder to resume"),
        split: Optional[str] = typer.Option(None, help="split (test, dev, …) of a named dataset or a file"),
        limit: Optional[int] = typer.Option(None, help="keep the first N questions (after --sample)"),
        sample: Optional[int] = typer.Option(None, help="draw N questions at random (with --seed)"),
        seed: int = typer.Option(0, help="seed of --sample"),
        workers: int = typer.Option(1, help="questions answered concurrently (threads)"),
        hops: Optional[int] = typer.Option(None, "--hops", help="k of the reachability ceiling "
                                                                "(default: the question's hop count, else 2)"),
        no_ceiling: bool = typer.Option(False, "--no-ceiling", help="skip the reachability ceiling"),
        retry_errors: bool = typer.Option(False, "--retry-errors", help="on resume, answer again questions that "
                                                                        "failed"),
        save_evidence: bool = typer.Option(False, "--save-evidence",
                                           help="record each question's evidence in the graph (`sgr evidence list`)"),
        option: Optional[list[str]] = typer.Option(None, "--option", "-o", help="method option KEY=VALUE "
                                                                                "(repeatable)"),
    ) -> None:
        """Run METHOD over DATASET against Neo4j; stream predictions, resume, and write the report."""
        from sgr.api import evaluate

        res = evaluate(dataset, method=method, out=out, split=split, limit=limit, sample=sample, seed=seed,
                       workers=workers, hops=hops, ceiling=not no_ceiling, retry_errors=retry_errors,
                       save_evidence=save_evidence, options=key_values(option), console=console)
        show_run(res)
        if res.interrupted:
            raise typer.Exit(130)

    @eval_app.command("compare")
    def eval_compare(
        run_a: Path = typer.Argument(..., help="run folder A"),
        run_b: Path = typer.Argument(..., help="run folder B"),
        markdown: bool = typer.Option(False, "--markdown", help="print a markdown table instead"),
    ) -> None:
        """Show two runs side by side with deltas (B − A)."""
        from sgr.api import compare

        cmp = compare(run_a, run_b)
        if markdown:
            print(cmp.markdown(), end="")
        else:
            console.print(cmp.table())

    @eval_app.command("report")
    def eval_report(run_dir: Path = typer.Argument(..., help="run folder")) -> None:
        """Rewrite metrics.json, report.md and the plots of a run folder from its files."""
        from sgr.api import report

        show_report(report(run_dir), run_dir)
