"""Every table and trace printout of the command line (Rich markup); no logic that decides an answer."""

from __future__ import annotations

from typing import Sequence

from sgr.core.types import ReasoningPath
from sgr.methods.sgr.answerer import SGRResult


def format_result(result: SGRResult, max_paths: int = 5) -> list[str]:
    """Human-readable lines for ``sgr ask`` (rich markup)."""
    from rich.markup import escape as e

    pred = result.prediction
    u = pred.usage
    out = [f"[bold]Q:[/] {e(result.question.text)}   [dim]method {result.method} · route {pred.route or '-'}[/]"]
    if pred.error:
        out.append(f"[red]{e(pred.error)}[/]")
    if result.entities:
        out.append("[bold]Entities:[/] " + e(", ".join(f"{x.mention} → {x.label} ({x.method})" for x in result.entities)))
    if result.schema is not None and result.schema.relations:
        rels = e(", ".join(f"{r.name} {r.score:.2f}" + (f" (LLM #{r.picked_rank})" if r.picked_rank else "")
                           for r in result.schema.relations[:5]))
        out.append(f"[bold]Candidate relations[/] ({result.schema.source}): {rels}")
        if result.schema.constraints:
            out.append("[bold]Constraints:[/] " + e(", ".join(f"{c.kind}={c.value or c.text}"
                                                            for c in result.schema.constraints)))
    out.append("[bold]Answers:[/]" + ("" if pred.answers else " (none)"))
    for a in pred.answers[:10]:
        via = f"  [dim]via {e(a.paths[0].render())}[/]" if a.paths else ""
        out.append(f"  • {e(a.text)}  [dim]{a.score:.3f}[/]{via}")
    if len(pred.answers) > 10:
        out.append(f"  … {len(pred.answers) - 10} more")
    gen = result.generation
    if gen is not None:
        for i, att in enumerate(gen.attempts):
            tag = "ran" if att.ok else "rejected"
            out.append(f"[bold]LLM Cypher #{i + 1}[/] ({tag}): {e(att.query or repr(att.reply[:120]))}")
            for p in att.problems:
                out.append(f"    [yellow]{p.kind}[/]: {e(p.message)}")
    if pred.cypher:
        out.append(f"[bold]Cypher that answered[/] ({result.cypher_source}):")
        out += ["  " + e(line) for line in pred.cypher[-1].splitlines()]
    def scored(paths: Sequence[ReasoningPath]) -> list[str]:
        return [f"  {p.score:.3f}  {e(p.render())}" for p in paths[:max_paths]]

    if result.subgraph is not None:
        out.append(f"[bold]Top paths[/] (G_q: {len(result.subgraph.paths)} paths, "
                   f"{len(result.subgraph.schema_paths)} relation patterns):")
        out += scored(result.subgraph.paths)
    elif pred.paths:
        out.append(f"[bold]Top paths[/] ({len(pred.paths)}):")
        out += scored(pred.paths)
    for key, label in (("relation_paths", "Relation paths (generated)"), ("walked_paths", "Relation paths (walked)")):
        if pred.extra.get(key):  # RCR
            out.append(f"[bold]{label}:[/]")
            out += [f"  {e(' → '.join(rp))}" for rp in pred.extra[key]]
    if result.scr_paths:
        out.append(f"[bold]SCR paths[/] (P(a, p | q), beam {result.config.scr_beam}):")
        out += scored(result.scr_paths)
    stages = " · ".join(f"{k} {v * 1000:.0f} ms" for k, v in u.stage_seconds.items())
    out.append(f"[bold]Time:[/] {u.total_seconds:.2f} s ({stages})")
    out.append(f"[bold]LLM:[/] {u.llm_calls} calls, {u.prompt_tokens} prompt + {u.completion_tokens} completion tokens, "
               f"{u.llm_seconds:.1f} s · [bold]Neo4j:[/] {u.neo4j_queries} queries, {u.neo4j_seconds * 1000:.0f} ms")
    return out
