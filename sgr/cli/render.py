"""Every table and trace printout of the command line (Rich); no logic that decides an answer.

Commands in ``sgr/cli/`` parse their flags, call one function of the package and hand what comes back to one of the
``show_*`` functions here. ``console`` is stdout, ``err_console`` stderr (progress bars, warnings, errors).

Everything that comes from the graph, a file or a model is printed as text, never as markup or terminal control:
inside a markup string through :func:`t` (Rich markup escaped, control characters shown as ``\x1b`` …), in a
table cell through :func:`cell`, as a whole line through :func:`plain`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from sgr.core.text import visible

if TYPE_CHECKING:
    from loaders.api import LoadReport
    from sgr.api import AskResult, EvidenceView
    from sgr.core.types import ReasoningPath
    from sgr.evaluation.runner import RunResult
    from sgr.graph.stats import GraphStats

console = Console()
err_console = Console(stderr=True)


def t(value: Any) -> str:
    """Data inside a Rich markup string: markup escaped (``[/x]``, ``[link=…]`` print as typed), control characters
    and invisible reordering characters shown as escapes, on one line."""
    return escape(visible(value))


e = t  # the name the format strings below use


def cell(value: Any) -> Text:
    """A table cell (or header) holding data: plain text, never markup, control characters shown as escapes."""
    return Text(visible(value))


def plain(text: str, *, err: bool = False) -> None:
    """Print a line (or block) holding data: no markup, no highlighting, no wrapping inside URLs; control characters
    shown as escapes (line breaks and tabs of a block kept)."""
    (err_console if err else console).print(visible(text, newlines=True), markup=False, highlight=False,
                                            soft_wrap=True)


def error_line(message: str) -> None:
    """The one red line of an :class:`sgr.core.errors.SgrError` (its data shown as text, on one line)."""
    err_console.print(f"[bold red]error:[/] {t(message)}", highlight=False, soft_wrap=True)


#: What JSON leaves raw but a terminal acts on: DEL, the C1 controls (U+0080–U+009F, e.g. U+009B, a one-character
#: CSI), and the invisible reordering characters; written as \u escapes, the JSON stays the same data.
_JSON_RAW = [chr(c) for c in (0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028,
                               0x2029, 0xFEFF)]


def show_json(data: Any) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    for ch in _JSON_RAW:
        if ch in text:
            text = text.replace(ch, f"\\u{ord(ch):04x}")
    print(text.encode("utf-8", "backslashreplace").decode("utf-8"))


# -- ask --------------------------------------------------------------------------------------------------------------
def format_result(result: "AskResult", max_paths: int = 5) -> list[str]:
    """Human-readable lines of an ``sgr ask`` trace (Rich markup); SGR's own stages when ``result.detail`` has them."""
    pred = result.prediction
    u = pred.usage
    d = result.detail
    out = [f"[bold]Q:[/] {e(result.question.text)}   [dim]method {t(result.method)} · route {t(pred.route or '-')}[/]"]
    if pred.error:
        out.append(f"[red]{e(pred.error)}[/]")
    if d is not None and d.entities:
        out.append("[bold]Entities:[/] " + e(", ".join(f"{x.mention} → {x.label} ({x.method})" for x in d.entities)))
    if d is not None and d.schema is not None and d.schema.relations:
        rels = e(", ".join(f"{r.name} {r.score:.2f}" + (f" (LLM #{r.picked_rank})" if r.picked_rank else "")
                           for r in d.schema.relations[:5]))
        out.append(f"[bold]Candidate relations[/] ({t(d.schema.source)}): {rels}")
        if d.schema.constraints:
            out.append("[bold]Constraints:[/] " + e(", ".join(f"{c.kind}={c.value or c.text}"
                                                            for c in d.schema.constraints)))
    out.append("[bold]Answers:[/]" + ("" if pred.answers else " (none)"))
    for a in pred.answers[:10]:
        via = f"  [dim]via {e(a.paths[0].render())}[/]" if a.paths else ""
        out.append(f"  • {e(a.text)}  [dim]{a.score:.3f}[/]{via}")
    if len(pred.answers) > 10:
        out.append(f"  … {len(pred.answers) - 10} more")
    if d is not None and d.generation is not None:
        for i, att in enumerate(d.generation.attempts):
            tag = "ran" if att.ok else "rejected"
            out.append(f"[bold]LLM Cypher #{i + 1}[/] ({tag}): {e(att.query or repr(att.reply[:120]))}")
            for p in att.problems:
                out.append(f"    [yellow]{t(p.kind)}[/]: {e(p.message)}")
    if pred.cypher:
        source = f" ({t(d.cypher_source)})" if d is not None and d.cypher_source else ""
        out.append(f"[bold]Cypher that answered[/]{source}:")
        out += ["  " + e(line) for line in pred.cypher[-1].splitlines()]

    def scored(paths: Sequence["ReasoningPath"]) -> list[str]:
        return [f"  {p.score:.3f}  {e(p.render())}" for p in paths[:max_paths]]

    if d is not None and d.subgraph is not None:
        out.append(f"[bold]Top paths[/] (G_q: {len(d.subgraph.paths)} paths, "
                   f"{len(d.subgraph.schema_paths)} relation patterns):")
        out += scored(d.subgraph.paths)
    elif pred.paths:
        out.append(f"[bold]Top paths[/] ({len(pred.paths)}):")
        out += scored(pred.paths)
    for key, label in (("relation_paths", "Relation paths (generated)"), ("walked_paths", "Relation paths (walked)")):
        if pred.extra.get(key):  # RCR
            out.append(f"[bold]{label}:[/]")
            out += [f"  {e(' → '.join(rp))}" for rp in pred.extra[key]]
    if d is not None and d.scr_paths:
        out.append(f"[bold]SCR paths[/] (P(a, p | q), beam {d.config.scr_beam}):")
        out += scored(d.scr_paths)
    if result.weights:
        out.append(f"[bold]Answered by:[/] {e(result.weights)}")
    if result.retriever:
        out.append(f"[bold]Relations ranked by:[/] {e(result.retriever)}")
    stages = " · ".join(f"{k} {v * 1000:.0f} ms" for k, v in u.stage_seconds.items())
    out.append(f"[bold]Time:[/] {u.total_seconds:.2f} s ({stages})")
    out.append(f"[bold]LLM:[/] {u.llm_calls} calls, {u.prompt_tokens} prompt + {u.completion_tokens} completion tokens, "
               f"{u.llm_seconds:.1f} s · [bold]Neo4j:[/] {u.neo4j_queries} queries, {u.neo4j_seconds * 1000:.0f} ms")
    return out


def format_answer(result: "AskResult", max_answers: int = 5) -> list[str]:
    """The short view of ``sgr ask`` (Rich markup): the answer and how sure sgr is, the one path that supports it —
    or "not found in the graph" with the reasons and the low-confidence candidates."""
    pred = result.prediction
    conf = result.confidence
    pct = f"{conf:.0%}" if conf is not None else "uncalibrated"
    out: list[str] = []
    if result.abstained:
        below = (f" (confidence {pct} < {result.threshold:.0%})" if conf is not None and result.threshold is not None
                 else "")
        out.append(f"[bold yellow]Not found in the graph[/]{below}")
        out += [f"  • {e(r)}" for r in result.reasons]
        if not pred.answers and pred.error:
            out.append(f"[dim]{e(pred.error)}[/]")  # the linking error names the mentions and --topic
        if pred.answers:
            out.append("[dim]Best candidates (low confidence): "
                       + e(", ".join(a.text for a in pred.answers[:max_answers])) + "[/]")
        return out
    if not pred.answers:
        return [f"[bold yellow]No answer[/]{': ' + e(pred.error) if pred.error else ''}"]
    top = pred.answers[0]
    out.append(f"[bold]{e(top.text)}[/] — {pct}")
    if len(pred.answers) > 1:
        rest = pred.answers[1:max_answers]
        more = f" … {len(pred.answers) - max_answers} more" if len(pred.answers) > max_answers else ""
        out.append("  also: " + e(", ".join(a.text for a in rest)) + more)
    if top.paths:
        out.append(f"  [dim]via {e(top.paths[0].render())}[/]")
    return out


def show_ask(result: "AskResult", as_json: bool = False, explain: bool = False) -> None:
    """``sgr ask``: the answer first (``explain``: the whole trace; ``as_json``: its JSON), then where to look at the
    evidence."""
    if as_json:
        show_json(result.to_dict())
        return
    lines = format_answer(result) if not explain else format_result(result) + [""] + format_answer(result)
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)
    for line in result.evidence.lines() if result.evidence else []:
        plain(line)
    if not explain:
        console.print("[dim]--explain shows the whole trace: entities, schema, Cypher, paths, votes, cost[/]",
                      highlight=False)


def show_models(items: Sequence[Any], verb: str) -> bool:
    """``sgr models status|materialise``: each shipped model, where it is materialised, its validation figures;
    False when one failed (its error is shown)."""
    if not items:
        console.print("this checkout ships no models (no models/*/manifest.json)")
        return True
    for it in items:
        figures = ", ".join(f"{k} {v}" for k, v in ((it.manifest.get("validation") or {}).get("summary") or {}).items())
        where = (f"{verb} {e(str(it.materialised))}" + (f" in {it.seconds:.1f} s" if it.seconds is not None else "")
                 if it.materialised else "not materialised yet (sgr models materialise)")
        console.print(f"[bold]{e(it.name)}[/] ({e(str(it.manifest.get('kind', '?')))}): {where}", soft_wrap=True)
        if figures:
            console.print(f"  validation: {e(figures)}", soft_wrap=True)
        if it.error:
            console.print(f"  [red]{e(it.error)}[/]", soft_wrap=True)
    return not any(it.error for it in items)


# -- query, load, stats -----------------------------------------------------------------------------------------------
def show_rows(rows: list[dict[str, Any]], truncated: bool, limit: int) -> None:
    """``sgr query``: the rows as a table."""
    if not rows:
        console.print("(no rows)")
        return
    table = Table()
    for key in rows[0]:
        table.add_column(cell(key))
    for row in rows:
        table.add_row(*(cell(v) for v in row.values()))
    console.print(table)
    if truncated:
        console.print(f"[yellow]only the first {limit} rows are shown (--limit)[/]")


def load_progress():  # noqa: ANN201
    """A context manager yielding a :class:`loaders.api.LoadProgress` that draws Rich progress bars on stderr."""
    from contextlib import contextmanager

    from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    from loaders.api import LoadProgress

    class _Rate(ProgressColumn):
        def render(self, task):  # noqa: ANN001, ANN202
            if task.fields.get("unit") != "triples" or not task.speed:
                return Text("")
            return Text(f"{task.speed:,.0f} triples/s", style="cyan")

    class _RichProgress(LoadProgress):
        def __init__(self, progress: Progress) -> None:
            self.p = progress
            self.task: Any = None

        def file_started(self, path: Path, fmt: str, size_bytes: int) -> None:
            self.task = self.p.add_task(f"parse {t(path.name)} ({t(fmt)})", total=size_bytes, unit="bytes")

        def parsed_bytes(self, position: int) -> None:
            self.p.update(self.task, completed=position)

        def write_started(self, triples: int) -> None:
            self.p.update(self.task, completed=self.p.tasks[self.task].total)
            name = self.p.tasks[self.task].description.split(" ", 1)[1]
            self.task = self.p.add_task(f"write {name}", total=triples, unit="triples")

        def written(self, triples: int) -> None:
            self.p.advance(self.task, triples)

        def file_done(self, report: Any) -> None:
            self.p.update(self.task, completed=self.p.tasks[self.task].total)

        def notice(self, message: str) -> None:
            self.p.console.print(visible(message), markup=False, highlight=False)

    @contextmanager
    def _ctx():  # noqa: ANN202
        columns = [TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed:,}/{task.total:,}"),
                   _Rate(), TimeElapsedColumn()]
        with Progress(*columns, console=err_console, transient=False) as progress:
            yield _RichProgress(progress)

    return _ctx()


def show_load_report(report: "LoadReport", max_errors: int) -> None:
    """``sgr load``: one row per file, then what was skipped and the first malformed lines."""
    table = Table(title=f"loaded in {report.seconds:.1f} s ({report.triples_per_s:,.0f} triples/s)",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("file", overflow="fold", min_width=24)
    for col in ("format", "triples", "entities", "CVTs", "literals", "skipped", "bad", "s"):
        table.add_column(col, justify="left" if col == "format" else "right", no_wrap=True)
    for f in report.files:
        if f.status == "unchanged":
            table.add_row(cell(Path(f.path).name), cell(f.format), "unchanged", *[""] * 6)
            continue
        table.add_row(cell(Path(f.path).name), cell(f.format), f"{f.triples:,}", f"{f.entities:,}", f"{f.cvts:,}",
                      f"{f.literals:,}", f"{f.skipped_count:,}", f"{f.malformed_count:,}", f"{f.seconds:.1f}")
    console.print(table)
    for f in report.files:
        if f.status == "unchanged":
            console.print(f"{t(f.path)}: already loaded (same sha256), skipped; --force loads it again", highlight=False)
        if f.skipped:
            top = t(", ".join(f"{k} ({v:,})" for k, v in list(f.skipped.items())[:6]))
            console.print(f"{t(Path(f.path).name)}: skipped {f.skipped_count:,} housekeeping/non-English lines: "
                          f"{top}{' …' if len(f.skipped) > 6 else ''} (--keep-all keeps housekeeping relations)")
        if f.malformed_count:
            err_console.print(f"[yellow]warning:[/] {t(f.path)}: {f.malformed_count:,} malformed lines skipped "
                              f"(budget --max-errors {max_errors}); first:", highlight=False)
            for line in f.malformed[:5]:
                plain(f"  {line}", err=True)


def show_stats(st: "GraphStats", uri: str) -> None:
    """``sgr stats``: counts, the top relation types and the loaded files."""
    counts = Table(title=f"graph at {t(uri)}", box=box.SIMPLE_HEAD)
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
            rels.add_row(cell(rc.name), f"{rc.count:,}")
        console.print(rels)
    srcs = Table(title="sources", box=box.SIMPLE_HEAD, pad_edge=False)
    srcs.add_column("path", overflow="fold", min_width=30)
    for col in ("format", "triples", "loaded_at", "sha256"):
        srcs.add_column(col, justify="right" if col == "triples" else "left", no_wrap=True)
    for s in st.sources:
        srcs.add_row(cell(s.path), cell(s.format or ""), f"{s.triples:,}", cell(s.loaded_at[:19]), cell(s.sha256[:12]))
    console.print(srcs if st.sources else "no (:Source) records: nothing was loaded with `sgr load`")


# -- eval -------------------------------------------------------------------------------------------------------------
def show_run(res: "RunResult") -> None:
    """``sgr eval``: questions done, the headline metrics, where the report is."""
    ov = res.metrics["overall"]
    console.print(f"{res.done}/{res.total} questions ({res.answered_now} now, {res.errors} errors) → {t(res.run_dir)}")
    line = (f"Hits@1 (strict) {ov['hits1_strict']:.3f} · Hit (lenient, RoG 'Hits@1') {ov['hit']:.3f} · "
            f"F1 {ov['f1']:.3f} · exact set {ov['exact_set']:.3f}")
    if "ceiling" in ov:
        line += f" · ceiling {ov['ceiling']:.3f}"
    console.print(line)
    console.print(f"report: {t(res.run_dir / 'report.md')}")
    if res.interrupted:
        console.print("[yellow]interrupted[/]: rerun the same command to resume")


def show_report(metrics: dict[str, Any], run_dir: Path) -> None:
    console.print(f"{metrics['n_done']} questions · Hits@1 (strict) {metrics['overall']['hits1_strict']:.3f} → "
                  f"{t(run_dir / 'report.md')}")


# -- scr --------------------------------------------------------------------------------------------------------------
def show_scr_training(res: Any) -> None:
    """``sgr scr train``: one row per epoch, then the best epoch."""
    table = Table("epoch", "loss", "step acc", "val Hit", "val Hits@1", "train s", "val s")
    for r in res.history:
        table.add_row(str(r.epoch), f"{r.loss:.3f}", f"{r.step_accuracy:.3f}", f"{r.val_hit:.3f}",
                      f"{r.val_hits1:.3f}", f"{r.train_seconds:.0f}", f"{r.val_seconds:.0f}")
    console.print(table)
    console.print(f"best epoch {res.best_epoch} (val Hits@1 {res.best_hits1:.3f}, Hit {res.best_hit:.3f}) → "
                  f"{t(res.best_path)}")
    if res.answer_score:
        figs = ", ".join(f"{k} {v:.3f}" for k, v in res.answer_score["answer_score_val_hits1"].items())
        console.print(f"answers ranked by {res.answer_score['answer_score']} (val Hits@1: {figs})")


def show_scr_paths(paths: Sequence["ReasoningPath"]) -> None:
    """``sgr scr paths``: the top-K paths with P(a, p | q)."""
    from sgr.methods.scr.method import render_path

    for rank, p in enumerate(paths, 1):
        console.print(f"{rank:2d}. P={p.score:.3f}  {t(render_path(p))}", highlight=False)
    if not paths:
        console.print("no path above the probability threshold")


# -- relations --------------------------------------------------------------------------------------------------------
def relations_epoch(log: Any) -> None:
    """One line per training epoch of ``sgr relations train`` (stderr)."""
    rra = "  ".join(f"@{k} {v:.3f}" for k, v in log.val_rra.items())
    err_console.print(f"epoch {log.epoch:3d}  loss {log.loss:.4f}  val RRA {rra}  ({log.seconds:.1f} s)",
                      highlight=False)


def show_relations_training(dataset: str, trained: Any) -> None:
    res = trained.result
    table = Table(title=f"{t(dataset)}: {res.train_questions} train / {res.val_questions} validation questions, "
                        f"{trained.vocabulary_size} relations in the graph")
    table.add_column("validation RRA")
    for k in res.best_val:
        table.add_column(f"@{k}", justify="right")
    table.add_row(f"trained (epoch {res.best_epoch})", *[f"{v:.3f}" for v in res.best_val.values()])
    table.add_row("cosine", *[f"{trained.cosine_val.get(k, 0.0):.3f}" for k in res.best_val])
    console.print(table)
    resumed = getattr(res, "resumed_after", 0)
    console.print(f"saved {t(trained.path)} (graph version {t(trained.graph_version)}, {res.seconds:.0f} s"
                  + (f" after resuming {resumed} epochs from its state)" if resumed else ")"))


def show_rra(ev: Any, ks: Sequence[int]) -> None:
    """``sgr relations eval``: RRA@k per retriever for one dataset."""
    table = Table(title=f"{t(ev.dataset)}: {ev.questions} questions, {ev.vocabulary_size} relations "
                        f"(ceiling {ev.ceiling:.3f}: gold relations all in the graph)")
    table.add_column("retriever")
    for k in ks:
        table.add_column(f"RRA@{k}", justify="right")
    for label, row in ev.rra.items():
        table.add_row(cell(label), *[f"{row[k]:.3f}" for k in ks])
    console.print(table)


def show_top_relations(name: str, vocabulary: int, ranked: Sequence[tuple[str, float]]) -> None:
    table = Table(title=f"{t(name)}: top {len(ranked)} of {vocabulary} relations")
    table.add_column("relation")
    table.add_column("score", justify="right")
    for rel, score in ranked:
        table.add_row(cell(rel), f"{score:.3f}")
    console.print(table)


# -- evidence ---------------------------------------------------------------------------------------------------------
def show_evidence_list(rows: Sequence[Any]) -> None:
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
        table.add_row(cell(r.id), cell(r.asked_at[:16].replace("T", " ")), cell(r.method), cell(r.text),
                      cell(", ".join(r.answers[:3]) + (" …" if len(r.answers) > 3 else "")), str(r.evidence))
    console.print(table)


def show_evidence(view: "EvidenceView") -> None:
    """``sgr evidence show``: answers, scored paths, evidence entities, the Cypher that ran, how to redraw it."""
    from sgr.core.types import ReasoningPath
    from sgr.evidence.graph import ROLES

    saved = view.saved
    v = visible  # one value, one line
    plain(f"{v(saved.id)}  {v(saved.asked_at)}  method {v(saved.method)}" + (f"  route {v(saved.route)}" if saved.route else ""))
    plain(f"question: {v(saved.text)}" + (f"  ({v(saved.question_id)})" if saved.question_id else ""))
    for i, a in enumerate(saved.answers):
        score = saved.answer_scores[i] if i < len(saved.answer_scores) else 0.0
        plain(f"  answer {i + 1}: {v(a)}  (score {score:.4g})")
    if saved.paths:
        plain("paths:")
        for p in saved.paths:
            plain(f"  {p['rank']:>3}  {p['score']:.4g}  " + v(ReasoningPath(
                nodes=p["nodes"], relations=p["relations"], names=p["names"], directions=p["directions"]).render()))
    for role in ROLES:
        names = [v(link.name or link.id) for link in saved.links if link.role == role]
        if names:
            plain(f"{role} entities ({len(names)}): " + ", ".join(names))
    for c in saved.cypher:
        plain("Cypher that ran:\n" + c)
    plain("redraw query:\n" + view.redraw)
    if view.browser_url:
        plain("Neo4j Browser: " + view.browser_url)
    if view.html:
        plain(f"HTML view: {view.html}")
