"""The ``sgr`` command line: a thin Typer layer over the ``sgr`` package.

Each command parses flags, calls one function of the package and prints its result. Errors that
users can cause are :class:`sgr.core.errors.SgrError`: one red line and a non-zero exit code.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from sgr.core.errors import SgrError

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
    from sgr.graph import server as neo4j_server

    info = neo4j_server.start(port=port, data_dir=data_dir, heap=heap, pagecache=pagecache)
    console.print(f"Neo4j is running: [bold]{info.uri}[/] (pid {info.pid}, store {info.home}, log {info.log})")
    if browser:
        from sgr.graph import browser as browser_mod

        url = browser_mod.serve(info)
        console.print(f"Neo4j Browser: [bold]{url}[/]", soft_wrap=True)
    console.print(f"Use it from other shells with: export NEO4J_URI={info.uri}")


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the embedded Neo4j cleanly."""
    from sgr.graph import server as neo4j_server

    console.print("stopped" if neo4j_server.stop() else "Neo4j was not running")


@neo4j_app.command("status")
def neo4j_status() -> None:
    """Say whether the embedded Neo4j runs, where, and with which store."""
    from sgr.graph import server as neo4j_server

    info = neo4j_server.status()
    if info is None:
        console.print("Neo4j is not running (start it with `sgr neo4j start`)")
        raise typer.Exit(1)
    console.print(f"running: {info.uri} pid {info.pid} store {info.home} log {info.log}"
                  + (f" browser {info.browser_url}" if info.browser_url else ""), soft_wrap=True)


@app.command("query")
def query(
    cypher: str = typer.Argument(..., help="a read-only Cypher query"),
    limit: int = typer.Option(50, help="row cap"),
    timeout: float = typer.Option(30.0, help="seconds before Neo4j stops the query"),
) -> None:
    """Run a read-only Cypher query (READ access, timeout, row cap) and print the rows."""
    from sgr.graph.store import GraphStore

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
load_app = typer.Typer(help="Load Freebase-style graphs into Neo4j (batched, idempotent, resumable).",
                       no_args_is_help=True)
app.add_typer(load_app, name="load")


def _run_load(paths: list[Path], fmt: Optional[str], keep_all: bool, max_errors: int, batch_size: int,
              force: bool, bulk: Optional[bool] = False, workers: int = 1) -> None:
    from rich.progress import (BarColumn, DownloadColumn, Progress, ProgressColumn, TextColumn,
                               TimeElapsedColumn)
    from rich.text import Text

    from loaders.api import LoadProgress, load_files
    from sgr.graph.store import GraphStore

    class _Rate(ProgressColumn):
        def render(self, task):  # noqa: ANN001, ANN202
            if task.fields.get("unit") != "triples" or not task.speed:
                return Text("")
            return Text(f"{task.speed:,.0f} triples/s", style="cyan")

    class _RichProgress(LoadProgress):
        def __init__(self, progress: Progress) -> None:
            self.p = progress
            self.task = None

        def file_started(self, path, fmt, size_bytes):  # noqa: ANN001
            self.task = self.p.add_task(f"parse {path.name} ({fmt})", total=size_bytes, unit="bytes")

        def parsed_bytes(self, position):  # noqa: ANN001
            self.p.update(self.task, completed=position)

        def write_started(self, triples):  # noqa: ANN001
            self.p.update(self.task, completed=self.p.tasks[self.task].total)
            name = self.p.tasks[self.task].description.split(" ", 1)[1]
            self.task = self.p.add_task(f"write {name}", total=triples, unit="triples")

        def written(self, triples):  # noqa: ANN001
            self.p.advance(self.task, triples)

        def file_done(self, report):  # noqa: ANN001
            self.p.update(self.task, completed=self.p.tasks[self.task].total)

        def notice(self, message):  # noqa: ANN001
            self.p.console.print(message, highlight=False)

    with GraphStore.from_settings() as store:
        columns = [TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed:,}/{task.total:,}"),
                   _Rate(), TimeElapsedColumn()]
        with Progress(*columns, console=err_console, transient=False) as progress:
            report = load_files(store, paths, fmt=fmt, keep_all=keep_all, max_errors=max_errors,
                                batch_size=batch_size, force=force, bulk=bulk, workers=workers,
                                progress=_RichProgress(progress))
    from rich import box

    table = Table(title=f"loaded in {report.seconds:.1f} s ({report.triples_per_s:,.0f} triples/s)",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("file", overflow="fold", min_width=24)
    for col in ("format", "triples", "entities", "CVTs", "literals", "skipped", "bad", "s"):
        table.add_column(col, justify="left" if col == "format" else "right", no_wrap=True)
    for f in report.files:
        if f.status == "unchanged":
            table.add_row(Path(f.path).name, f.format, "unchanged", *[""] * 6)
            continue
        table.add_row(Path(f.path).name, f.format, f"{f.triples:,}", f"{f.entities:,}", f"{f.cvts:,}",
                      f"{f.literals:,}", f"{f.skipped_count:,}", f"{f.malformed_count:,}", f"{f.seconds:.1f}")
    console.print(table)
    for f in report.files:
        if f.status == "unchanged":
            console.print(f"{f.path}: already loaded (same sha256), skipped; --force loads it again")
        if f.skipped:
            top = ", ".join(f"{k} ({v:,})" for k, v in list(f.skipped.items())[:6])
            console.print(f"{Path(f.path).name}: skipped {f.skipped_count:,} housekeeping/non-English lines: "
                          f"{top}{' …' if len(f.skipped) > 6 else ''} (--keep-all keeps housekeeping relations)")
        if f.malformed_count:
            err_console.print(f"[yellow]warning:[/] {f.path}: {f.malformed_count:,} malformed lines skipped "
                              f"(budget --max-errors {max_errors}); first:", highlight=False)
            for line in f.malformed[:5]:
                err_console.print(f"  {line}", highlight=False, soft_wrap=True)


_FORMAT_HELP = "rog | ntriples | triples (default: from the extension, else the first lines)"


@load_app.command("freebase")
def load_freebase(
    paths: list[Path] = typer.Argument(..., help="RoG JSONL/Parquet, N-Triples (.nt/.nt.gz) or triples files"),
    fmt: Optional[str] = typer.Option(None, "--format", help=_FORMAT_HELP),
    keep_all: bool = typer.Option(False, "--keep-all", help="keep Freebase housekeeping relations "
                                  "(type.*, common.*, freebase.*, kg.*, rdf/rdfs/owl)"),
    max_errors: int = typer.Option(100, "--max-errors", help="malformed lines tolerated before the load stops"),
    batch_size: int = typer.Option(20_000, "--batch-size", help="rows per write transaction"),
    force: bool = typer.Option(False, "--force", help="load files again even if already loaded unchanged"),
    bulk: Optional[bool] = typer.Option(None, "--bulk/--no-bulk", help="neo4j-admin import into an empty embedded "
                                        "database (default: chosen for a large input into an empty one)"),
    workers: int = typer.Option(1, "--workers", help="concurrent write transactions (transactional path)"),
) -> None:
    """Load Freebase-style data: RoG question graphs, Freebase N-Triples, or plain triples."""
    _run_load(paths, fmt, keep_all, max_errors, batch_size, force, bulk, workers)


@load_app.command("triples")
def load_triples(
    paths: list[Path] = typer.Argument(..., help="files of head|relation|tail or TAB-separated lines"),
    max_errors: int = typer.Option(100, "--max-errors", help="malformed lines tolerated before the load stops"),
    batch_size: int = typer.Option(20_000, "--batch-size", help="rows per write transaction"),
    force: bool = typer.Option(False, "--force", help="load files again even if already loaded unchanged"),
) -> None:
    """Load plain triples (MetaQA kb.txt style: head|relation|tail, or TSV)."""
    _run_load(paths, "triples", False, max_errors, batch_size, force)


@app.command("stats")
def stats_cmd(
    top: int = typer.Option(10, help="how many relation types to list"),
    as_json: bool = typer.Option(False, "--json", help="print JSON instead of tables"),
) -> None:
    """Nodes, CVTs, relationships and relation types in the graph, and the files loaded into it."""
    import json

    from sgr.graph.stats import graph_stats
    from sgr.graph.store import GraphStore

    with GraphStore.from_settings() as store:
        st = graph_stats(store, top=top)
    if as_json:
        print(json.dumps(st.to_dict(), indent=2, default=str))
        return
    from rich import box

    counts = Table(title=f"graph at {store.uri}", box=box.SIMPLE_HEAD)
    counts.add_column("what")
    counts.add_column("count", justify="right")
    for label, value in (("nodes", st.nodes), ("entities", st.entities), ("CVTs", st.cvts),
                         ("relationships", st.relationships), ("relation types", st.relation_types)):
        counts.add_row(label, f"{value:,}")
    console.print(counts)
    if st.top_relations:
        rels = Table(title=f"top {len(st.top_relations)} relation types", box=box.SIMPLE_HEAD)
        rels.add_column("relation")
        rels.add_column("relationships", justify="right")
        for rc in st.top_relations:
            rels.add_row(rc.name, f"{rc.count:,}")
        console.print(rels)
    srcs = Table(title="sources", box=box.SIMPLE_HEAD, pad_edge=False)
    srcs.add_column("path", overflow="fold", min_width=30)
    for col in ("format", "triples", "loaded_at", "sha256"):
        srcs.add_column(col, justify="right" if col == "triples" else "left", no_wrap=True)
    for s in st.sources:
        srcs.add_row(s.path, s.format or "", f"{s.triples:,}", s.loaded_at[:19], s.sha256[:12])
    console.print(srcs if st.sources else "no (:Source) records: nothing was loaded with `sgr load`")


# --------------------------------------------------------------------------------------------
# llm: the local model server (sgr/local_llm.py)
# --------------------------------------------------------------------------------------------
llm_app = typer.Typer(help="Start, stop and inspect the local LLM server (llama.cpp + SmolLM2-135M-Instruct).",
                      no_args_is_help=True)
app.add_typer(llm_app, name="llm")


@llm_app.command("serve")
def llm_serve(
    port: Optional[int] = typer.Option(None, help="HTTP port (default: a free one)"),
    n_ctx: int = typer.Option(4096, "--n-ctx", help="context window in tokens"),
    threads: Optional[int] = typer.Option(None, help="CPU threads (default: half the cores, at least 1)"),
) -> None:
    """Start the OpenAI-compatible local model server on 127.0.0.1 (in the background) and wait until it answers."""
    from sgr.llm import server as local_llm

    info = local_llm.start(port=port, n_ctx=n_ctx, n_threads=threads)
    console.print(f"local LLM is serving [bold]{info.model}[/] at [bold]{info.base_url}[/] (pid {info.pid}, log {info.log})")
    console.print("sgr uses it whenever SGR_LLM_BASE_URL is unset; stop it with `sgr llm stop`")


@llm_app.command("status")
def llm_status() -> None:
    """Say whether the local model server runs, where, and which model it serves."""
    from sgr.llm import server as local_llm

    info = local_llm.status()
    if info is None:
        console.print("the local LLM server is not running (start it with `sgr llm serve`)")
        raise typer.Exit(1)
    ready = "answering" if local_llm.models_endpoint_ready(info.base_url) else "NOT answering"
    console.print(f"running: {info.base_url} model {info.model} pid {info.pid} ({ready}) log {info.log}")


@llm_app.command("stop")
def llm_stop() -> None:
    """Stop the local model server."""
    from sgr.llm import server as local_llm

    console.print("stopped" if local_llm.stop() else "the local LLM server was not running")


# --------------------------------------------------------------------------------------------
# ask (sgr/pipeline.py)
# --------------------------------------------------------------------------------------------
@app.command("ask")
def ask_cmd(
    question: str = typer.Argument(..., help="the question, e.g. \"what does jamaican people speak?\""),
    topic: Optional[list[str]] = typer.Option(None, "--topic", "-t",
                                              help="topic entity name or MID (repeatable); default: linked from the text"),
    method: str = typer.Option("sgr", "--method", "-m",
                               help="sgr (default), its variants (sgr-direct, sgr-no-verify, sgr-no-schema, cypher-only, "
                                    "sgr-compiled: no LLM, llm-only) or any `sgr eval` method: rcr, scr, scr+llm …"),
    hops: int = typer.Option(2, "--hops", help="expansion depth (a CVT node is not a hop)"),
    max_repairs: int = typer.Option(2, "--max-repairs", help="rounds of feeding Neo4j's errors back to the LLM"),
    retriever: str = typer.Option("schema", "--retriever",
                                  help="who proposes the collaborative stage's paths: schema (G_q), scr (the trained "
                                       "SCR GNN, ρ = path probability) or schema+scr"),
    scr_checkpoint: Optional[Path] = typer.Option(None, "--scr-checkpoint",
                                                  help="SCR .pt (default: the latest `sgr scr train` run)"),
    as_json: bool = typer.Option(False, "--json", help="print the whole trace as JSON"),
    save: bool = typer.Option(False, "--save", help="record the evidence in the graph (`sgr evidence list`)"),
    html: Optional[Path] = typer.Option(None, "--html", help="write the offline HTML evidence view here"),
) -> None:
    """Answer one question with SGR: answers with their paths, the Cypher that ran, route, costs, evidence."""
    import json as _json

    from sgr.evidence import saved as evidence
    from sgr.api import ask
    from sgr.cli.render import format_result
    from sgr.graph.store import GraphStore

    with GraphStore.from_settings() as store:
        options = {"path_retriever": retriever, "scr_checkpoint": str(scr_checkpoint) if scr_checkpoint else ""}
        result = ask(question, store=store, topics=topic or [], method=method, hops=hops, max_repairs=max_repairs,
                     options=options)
        inspection = evidence.inspect_prediction(store, result.question.text, result.prediction, result.method,
                                                 save=save, html=html,
                                                 topic_ids=[e.id for e in result.entities])
    if as_json:
        data = result.to_dict()
        data["evidence"] = {"lines": inspection.lines()}
        print(_json.dumps(data, indent=2, ensure_ascii=False, default=str))
        return
    for line in format_result(result):
        console.print(line, highlight=False, soft_wrap=True)
    for line in inspection.lines():
        console.print(line, markup=False, highlight=False, soft_wrap=True)


# --------------------------------------------------------------------------------------------
# eval (sgr/evaluation/)
# --------------------------------------------------------------------------------------------
from typer.core import TyperGroup  # noqa: E402


class _EvalGroup(TyperGroup):
    """``sgr eval DATASET …`` runs ``sgr eval run DATASET …``; ``compare`` and ``report`` are subcommands."""

    def parse_args(self, ctx, args):  # noqa: ANN001, ANN201
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


eval_app = typer.Typer(cls=_EvalGroup, no_args_is_help=True,
                       help="Evaluate a method on a KGQA dataset: `sgr eval DATASET --method M`, "
                            "`sgr eval compare RUN_A RUN_B`.")
app.add_typer(eval_app, name="eval")


@eval_app.command("run")
def eval_run(
    dataset: str = typer.Argument(..., help="a file (MetaQA .tsv, RoG-style or plain .jsonl/.json/.parquet) or "
                                            "a name: metaqa-1hop, metaqa-2hop, metaqa-3hop, webqsp"),
    method: str = typer.Option(..., "--method", "-m", help="method name (see sgr.methods.registry.METHODS)"),
    out: Optional[Path] = typer.Option(None, "--out", help="run folder (default $SGR_HOME/runs/<dataset>__<method>…); "
                                                           "rerun with the same folder to resume"),
    split: Optional[str] = typer.Option(None, help="split (test, dev, …) of a named dataset or a file"),
    limit: Optional[int] = typer.Option(None, help="keep the first N questions (after --sample)"),
    sample: Optional[int] = typer.Option(None, help="draw N questions at random (with --seed)"),
    seed: int = typer.Option(0, help="seed of --sample"),
    workers: int = typer.Option(1, help="questions answered concurrently (threads)"),
    hops: Optional[int] = typer.Option(None, "--hops", help="k of the reachability ceiling "
                                                            "(default: the question's hop count, else 2)"),
    no_ceiling: bool = typer.Option(False, "--no-ceiling", help="skip the reachability ceiling"),
    retry_errors: bool = typer.Option(False, "--retry-errors", help="on resume, answer again questions that failed"),
    save_evidence: bool = typer.Option(False, "--save-evidence",
                                       help="record each question's evidence in the graph (`sgr evidence list`)"),
    option: Optional[list[str]] = typer.Option(None, "--option", "-o", help="method option KEY=VALUE (repeatable)"),
) -> None:
    """Run METHOD over DATASET against Neo4j; stream predictions, resume, and write the report."""
    from sgr.core.errors import ConfigError
    from sgr.evaluation.runner import RunConfig, run_eval

    opts = {}
    for item in option or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--option expects KEY=VALUE, got {item!r}")
        opts[key.strip()] = value
    cfg = RunConfig(dataset=dataset, method=method, out=out, split=split, limit=limit, sample=sample, seed=seed,
                    workers=workers, hops=hops, ceiling=not no_ceiling, retry_errors=retry_errors,
                    save_evidence=save_evidence, options=opts)
    res = run_eval(cfg, console=console)
    ov = res.metrics["overall"]
    console.print(f"{res.done}/{res.total} questions ({res.answered_now} now, {res.errors} errors) → {res.run_dir}")
    line = (f"Hits@1 (strict) {ov['hits1_strict']:.3f} · Hit (lenient, RoG 'Hits@1') {ov['hit']:.3f} · "
            f"F1 {ov['f1']:.3f} · exact set {ov['exact_set']:.3f}")
    if "ceiling" in ov:
        line += f" · ceiling {ov['ceiling']:.3f}"
    console.print(line)
    console.print(f"report: {res.run_dir / 'report.md'}")
    if res.interrupted:
        console.print("[yellow]interrupted[/]: rerun the same command to resume")
        raise typer.Exit(130)


@eval_app.command("compare")
def eval_compare(
    run_a: Path = typer.Argument(..., help="run folder A"),
    run_b: Path = typer.Argument(..., help="run folder B"),
    markdown: bool = typer.Option(False, "--markdown", help="print a markdown table instead"),
) -> None:
    """Show two runs side by side with deltas (B − A)."""
    from sgr.evaluation.compare import compare_runs, comparison_markdown, comparison_table

    cmp = compare_runs(run_a, run_b)
    if markdown:
        print(comparison_markdown(cmp), end="")
    else:
        console.print(comparison_table(cmp))


@eval_app.command("report")
def eval_report(run_dir: Path = typer.Argument(..., help="run folder")) -> None:
    """Rewrite metrics.json, report.md and the plots of a run folder from its files."""
    from sgr.core.errors import InputError
    from sgr.evaluation.report import write_report

    if not (run_dir / "predictions.jsonl").exists():
        raise InputError(f"{run_dir}: no predictions.jsonl; is it a run folder of `sgr eval`?")
    m = write_report(run_dir)
    console.print(f"{m['n_done']} questions · Hits@1 (strict) {m['overall']['hits1_strict']:.3f} → {run_dir / 'report.md'}")


# --------------------------------------------------------------------------------------------
# scr (sgr/scr/)
# --------------------------------------------------------------------------------------------
scr_app = typer.Typer(help="SCR, the stepwise contrastive GNN retriever: train it, list its paths.",
                      no_args_is_help=True)
app.add_typer(scr_app, name="scr")


@scr_app.command("train")
def scr_train(
    dataset: str = typer.Option(..., "--dataset", help="metaqa (trains on dev, validates on held-out dev), webqsp "
                                                       "(80/20 id-hash split of the slice) or a question file"),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda"),
    out: Optional[Path] = typer.Option(None, "--out", help="checkpoint folder (default $SGR_HOME/scr/<dataset>[-single-step])"),
    encoder: str = typer.Option("minilm", help="frozen/initial encoder: minilm (384-d) or mpnet (768-d)"),
    epochs: int = typer.Option(5, help="most epochs (early stopping may end sooner)"),
    batch_size: int = typer.Option(16, help="questions per batch"),
    train_per_hop: Optional[int] = typer.Option(None, help="training questions per MetaQA hop (default 1000; "
                                                           "other datasets: at most this many, default all)"),
    val_per_hop: Optional[int] = typer.Option(None, help="validation questions per MetaQA hop (default 100; "
                                                         "other datasets: at most this many, default all)"),
    trainable_layers: Optional[int] = typer.Option(None, help="train only the top K encoder layers (default: all)"),
    tau: float = typer.Option(0.05, help="InfoNCE temperature"),
    lr_encoder: float = typer.Option(3e-5, help="learning rate of the question encoder"),
    lr_graph: float = typer.Option(1e-3, help="learning rate of the GNN and candidate layers"),
    patience: int = typer.Option(2, help="epochs without a better validation Hits@1 before stopping"),
    seed: int = typer.Option(0, help="seed of sampling, initialisation and batch order"),
    single_step: bool = typer.Option(False, "--single-step", help="train the 'w/o multi-step' ablation model"),
    entity_candidates: bool = typer.Option(False, "--entity-candidates",
                                           help="score entities only (eq. 7 as printed), not edges"),
    threads: int = typer.Option(2, help="torch CPU threads"),
    graph_version: Optional[str] = typer.Option(None, help="use cached subgraphs of this graph version without Neo4j"),
) -> None:
    """Train SCR with stepwise InfoNCE; writes best.pt/last.pt/history.json and records best.pt as the default."""
    from sgr.core.config import sgr_home
    from sgr.methods.scr.model import SCRConfig
    from sgr.methods.scr.train import TrainConfig, run_training
    from sgr.graph.store import GraphStore

    store = None
    if graph_version is None:
        store = GraphStore.from_settings()
        store.verify()
    folder = out or sgr_home() / "scr" / (Path(dataset).stem + ("-single-step" if single_step else ""))
    mcfg = SCRConfig(encoder=encoder, tau=tau, single_step=single_step, edge_candidates=not entity_candidates,
                     trainable_layers=trainable_layers)
    tcfg = TrainConfig(epochs=epochs, batch_size=batch_size, lr_encoder=lr_encoder, lr_graph=lr_graph,
                       patience=patience, seed=seed)
    res = run_training(dataset, store=store, out_dir=folder, model_cfg=mcfg, train_cfg=tcfg,
                       train_per_hop=train_per_hop if train_per_hop is not None else (1000 if dataset == "metaqa" else 0),
                       val_per_hop=val_per_hop if val_per_hop is not None else (100 if dataset == "metaqa" else 0),
                       device=device, threads=threads,
                       graph_version=graph_version)
    table = Table("epoch", "loss", "step acc", "val Hit", "val Hits@1", "train s", "val s")
    for r in res.history:
        table.add_row(str(r.epoch), f"{r.loss:.3f}", f"{r.step_accuracy:.3f}", f"{r.val_hit:.3f}",
                      f"{r.val_hits1:.3f}", f"{r.train_seconds:.0f}", f"{r.val_seconds:.0f}")
    console.print(table)
    console.print(f"best epoch {res.best_epoch} (val Hits@1 {res.best_hits1:.3f}, Hit {res.best_hit:.3f}) → {res.best_path}")


@scr_app.command("paths")
def scr_paths_cmd(
    question: str = typer.Argument(..., help="the question text"),
    topic: list[str] = typer.Option(..., "--topic", "-t", help="topic entity id or name (repeatable)"),
    k: int = typer.Option(10, "-k", help="beam size K"),
    checkpoint: Optional[Path] = typer.Option(None, help="SCR checkpoint (default: the last trained)"),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda"),
) -> None:
    """Print SCR's top-K reasoning paths and their probabilities P(a, p | q) for a question."""
    from sgr.core.errors import EntityNotFound
    from sgr.retrieval.resolution import resolve_entities
    from sgr.methods.scr.method import render_path, scr_paths
    from sgr.graph.store import GraphStore

    store = GraphStore.from_settings()
    store.verify()
    found = resolve_entities(store, topic)
    ids = list(dict.fromkeys(i for t in topic for i in found.get(t, [])))
    if not ids:
        raise EntityNotFound(f"none of the topic entities {topic} is in the graph")
    paths = scr_paths(store, question, ids, k, checkpoint=checkpoint, device=device)
    for rank, p in enumerate(paths, 1):
        console.print(f"{rank:2d}. P={p.score:.3f}  {render_path(p)}", highlight=False)
    if not paths:
        console.print("no path above the probability threshold")


# --------------------------------------------------------------------------------------------
# relations (sgr/relations.py)
# --------------------------------------------------------------------------------------------
relations_app = typer.Typer(help="RCR's relation retriever: train the heads, evaluate RRA@k, rank relations.",
                            no_args_is_help=True)
app.add_typer(relations_app, name="relations")


def _parse_ks(text: str) -> list[int]:
    from sgr.core.errors import ConfigError

    try:
        ks = [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise ConfigError(f"--k must be comma-separated integers, got {text!r}") from exc
    if not ks or min(ks) < 1:
        raise ConfigError(f"--k must list positive integers, got {text!r}")
    return ks


@relations_app.command("train")
def relations_train(
    dataset: str = typer.Option(..., "--dataset", help="webqsp (train paths) | metaqa (dev, all hops)"),
    epochs: int = typer.Option(50, help="epochs (paper: 50)"),
    lr: float = typer.Option(5e-4, help="Adam learning rate (paper: 5e-4 on WebQSP)"),
    batch_size: int = typer.Option(32, "--batch-size", help="questions per step (paper: 1; slower on CPU)"),
    negatives: int = typer.Option(80, help="sampled negative relations per question (paper: 80)"),
    gamma: float = typer.Option(0.5, help="margin of the ranking loss (paper: 0.5)"),
    val_fraction: float = typer.Option(0.1, "--val-fraction", help="share held out for model selection"),
    select_k: int = typer.Option(50, "--select-k", help="keep the epoch with the best validation RRA@k"),
    patience: Optional[int] = typer.Option(None, help="stop after N epochs without a better validation RRA"),
    limit: Optional[int] = typer.Option(None, help="WebQSP: first N questions; MetaQA: N per hop (fixed seed)"),
    seed: int = typer.Option(0, help="seed of the split, the negatives and the initialisation"),
    out: Optional[Path] = typer.Option(None, help="model file (default: $SGR_HOME/cache/relations/"
                                       "<dataset>-<graph version>.pt, found by --model auto)"),
    data: Optional[Path] = typer.Option(None, help="shared data folder (default: $SGR_SHARED_DATA or ../shared/data)"),
) -> None:
    """Train the dual-encoder heads (RCR §4.1) against the loaded graph's relation vocabulary."""
    from sgr.retrieval.relations import TrainConfig, train_model
    from sgr.graph.store import GraphStore

    cfg = TrainConfig(epochs=epochs, lr=lr, gamma=gamma, negatives=negatives, batch_size=batch_size,
                      select_k=select_k, seed=seed, patience=patience)

    def show(log) -> None:  # noqa: ANN001
        rra = "  ".join(f"@{k} {v:.3f}" for k, v in log.val_rra.items())
        err_console.print(f"epoch {log.epoch:3d}  loss {log.loss:.4f}  val RRA {rra}  ({log.seconds:.1f} s)",
                          highlight=False)

    with GraphStore.from_settings() as store:
        store.verify()
        trained = train_model(store, dataset, config=cfg, data_dir=data, limit=limit, val_fraction=val_fraction,
                              out=out, progress=show)
    res = trained.result
    table = Table(title=f"{dataset}: {res.train_questions} train / {res.val_questions} validation questions, "
                        f"{trained.vocabulary_size} relations in the graph")
    table.add_column("validation RRA")
    for k in res.best_val:
        table.add_column(f"@{k}", justify="right")
    table.add_row(f"trained (epoch {res.best_epoch})", *[f"{v:.3f}" for v in res.best_val.values()])
    table.add_row("cosine", *[f"{trained.cosine_val.get(k, 0.0):.3f}" for k in res.best_val])
    console.print(table)
    console.print(f"saved {trained.path} (graph version {trained.graph_version}, {res.seconds:.0f} s)")


@relations_app.command("eval")
def relations_eval(
    dataset: list[str] = typer.Option(["webqsp"], "--dataset",
                                      help="webqsp | metaqa-1hop | metaqa-2hop | metaqa-3hop (repeatable)"),
    model: str = typer.Option("auto", help="model file, 'auto' (trained on this graph version) or 'cosine'"),
    k: str = typer.Option("10,50,100,200", help="comma-separated k of RRA@k"),
    limit: Optional[int] = typer.Option(None, help="questions per set (MetaQA: fixed-seed sample)"),
    seed: int = typer.Option(0, help="seed of the MetaQA sample"),
    data: Optional[Path] = typer.Option(None, help="shared data folder"),
) -> None:
    """RRA@k (RCR §5.1) of the trained retriever beside plain cosine on the graph's relation vocabulary."""
    from sgr.retrieval.relations import evaluate_retrieval, load_retriever
    from sgr.graph.store import GraphStore

    ks = _parse_ks(k)
    with GraphStore.from_settings() as store:
        store.verify()
        retrievers = {"cosine": load_retriever(store, "cosine")}
        if model != "cosine":
            trained = load_retriever(store, model)
            if trained.trained:
                retrievers[f"trained ({Path(trained.info['model']).name})"] = trained
            else:
                err_console.print("no trained model for this graph version: showing cosine only "
                                  "(train one with `sgr relations train`)")
        for name in dataset:
            ev = evaluate_retrieval(retrievers, name, data_dir=data, limit=limit, seed=seed, ks=ks)
            table = Table(title=f"{ev.dataset}: {ev.questions} questions, {ev.vocabulary_size} relations "
                                f"(ceiling {ev.ceiling:.3f}: gold relations all in the graph)")
            table.add_column("retriever")
            for kk in ks:
                table.add_column(f"RRA@{kk}", justify="right")
            for label, row in ev.rra.items():
                table.add_row(label, *[f"{row[kk]:.3f}" for kk in ks])
            console.print(table)


@relations_app.command("top")
def relations_top(
    question: str = typer.Argument(..., help="the question"),
    k: int = typer.Option(10, "-k", help="how many relations"),
    model: str = typer.Option("auto", help="model file, 'auto' or 'cosine'"),
) -> None:
    """The k relations of the graph most similar to a question."""
    from sgr.retrieval.relations import load_retriever
    from sgr.graph.store import GraphStore

    with GraphStore.from_settings() as store:
        store.verify()
        retriever = load_retriever(store, model)
    table = Table(title=f"{retriever.name}: top {k} of {len(retriever.relations)} relations")
    table.add_column("relation")
    table.add_column("score", justify="right")
    for rel, score in retriever.top_k(question, k):
        table.add_row(rel, f"{score:.3f}")
    console.print(table)


# --------------------------------------------------------------------------------------------
# evidence (sgr/evidence.py)
# --------------------------------------------------------------------------------------------
evidence_app = typer.Typer(help="Saved evidence of answers: (:SgrQuestion)-[:SGR_EVIDENCE]->(entity) in the graph.",
                           no_args_is_help=True)
app.add_typer(evidence_app, name="evidence")


def _plain(text: str) -> None:
    """Print user content as is: no markup, no highlighting, no wrapping inside URLs."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


@evidence_app.command("list")
def evidence_list(limit: int = typer.Option(50, help="show at most this many, newest first")) -> None:
    """List saved questions (`sgr ask --save`, `sgr eval --save-evidence`)."""
    from rich.markup import escape

    from sgr.evidence import saved as evidence
    from sgr.graph.store import GraphStore

    with GraphStore.from_settings() as store:
        rows = evidence.list_evidence(store, limit=limit)
    if not rows:
        console.print("no saved evidence (save some with `sgr ask --save`)")
        return
    table = Table()
    table.add_column("id", no_wrap=True, min_width=12)
    table.add_column("asked at (UTC)", no_wrap=True)
    for col in ("method", "question", "answers"):
        table.add_column(col)
    table.add_column("evidence", justify="right")
    for r in rows:
        table.add_row(r.id, r.asked_at[:16].replace("T", " "), escape(r.method), escape(r.text),
                      escape(", ".join(r.answers[:3]) + (" …" if len(r.answers) > 3 else "")), str(r.evidence))
    console.print(table)


@evidence_app.command("show")
def evidence_show(
    question_id: str = typer.Argument(..., metavar="ID", help="id from `sgr evidence list`"),
    html: Optional[Path] = typer.Option(None, "--html", help="also write the offline HTML view to this file"),
) -> None:
    """Show one saved question: answers, scored paths, evidence entities, the Cypher that ran, how to redraw it."""
    from sgr.graph import browser
    from sgr.evidence import saved as evidence
    from sgr.graph.store import GraphStore
    from sgr.core.types import ReasoningPath

    with GraphStore.from_settings() as store:
        saved = evidence.load_evidence(store, question_id)
        graph = None
        if html:
            from sgr.evidence.html import write_html

            prediction = saved.to_prediction()
            graph = evidence.evidence_subgraph(store, prediction, topic_ids=saved.topic_ids())
            write_html(html, saved.text, prediction, graph, question_id=saved.id,
                       redraw=evidence.redraw_query(saved.id))
    _plain(f"{saved.id}  {saved.asked_at}  method {saved.method}" + (f"  route {saved.route}" if saved.route else ""))
    _plain(f"question: {saved.text}" + (f"  ({saved.question_id})" if saved.question_id else ""))
    for i, a in enumerate(saved.answers):
        score = saved.answer_scores[i] if i < len(saved.answer_scores) else 0.0
        _plain(f"  answer {i + 1}: {a}  (score {score:.4g})")
    if saved.paths:
        _plain("paths:")
        for p in saved.paths:
            _plain(f"  {p['rank']:>3}  {p['score']:.4g}  " + ReasoningPath(
                nodes=p["nodes"], relations=p["relations"], names=p["names"], directions=p["directions"]).render())
    for role in evidence.ROLES:
        names = [link.name or link.id for link in saved.links if link.role == role]
        if names:
            _plain(f"{role} entities ({len(names)}): " + ", ".join(names))
    for c in saved.cypher:
        _plain("Cypher that ran:\n" + c)
    query = evidence.redraw_query(saved.id)
    _plain("redraw query:\n" + query)
    server = browser.running()
    if server:
        _plain("Neo4j Browser: " + browser.browser_url_for(query, server))
    if html:
        _plain(f"HTML view: {html}")


@evidence_app.command("clear")
def evidence_clear(
    question_id: Optional[str] = typer.Argument(None, metavar="[ID]", help="delete only this one"),
) -> None:
    """Delete saved evidence (all of it, or one question); the data it points at is not touched."""
    from sgr.evidence import saved as evidence
    from sgr.graph.store import GraphStore

    with GraphStore.from_settings() as store:
        n = evidence.clear_evidence(store, question_id)
    if question_id and n == 0:
        from sgr.core.errors import InputError

        raise InputError(f"no saved evidence with id {question_id!r}: see `sgr evidence list`")
    console.print(f"deleted {n} saved question(s) and their evidence links")


if __name__ == "__main__":
    app()
