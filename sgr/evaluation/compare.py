"""``sgr eval compare RUN_A RUN_B``: two runs side by side, with deltas (B − A).

Rows come from each run's ``metrics.json`` (overall scores, ceiling, per-hop scores, cost). When
the runs share questions, a paired count over the shared ids says on how many questions B's strict
Hits@1 is better, worse or the same as A's (the runs' own means may cover different questions:
the ``n`` rows show it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sgr.core.errors import InputError
from sgr.evaluation.predictions import read_predictions, record_scores
from sgr.evaluation.metrics.scores import METRIC_LABELS, METRIC_NAMES

COST_ROWS = (("latency_ms_p50", "latency p50 (ms)"), ("latency_ms_p95", "latency p95 (ms)"),
             ("questions_per_s", "questions / s"), ("neo4j_queries_median", "Neo4j queries (median)"),
             ("llm_calls_median", "LLM calls (median)"), ("prompt_tokens_median", "prompt tokens billed (median)"),
             ("completion_tokens_median", "completion tokens billed (median)"),
             ("cached_prompt_tokens_median", "prompt tokens cached (median)"),
             ("cached_completion_tokens_median", "completion tokens cached (median)"))


@dataclass
class CompareRow:
    label: str
    a: float | int | None
    b: float | int | None
    higher_is_better: bool | None = True  # None: neither (counts, cost)

    @property
    def delta(self) -> float | None:
        if isinstance(self.a, (int, float)) and isinstance(self.b, (int, float)):
            return self.b - self.a
        return None


@dataclass
class Comparison:
    a: str
    b: str
    rows: list[CompareRow] = field(default_factory=list)
    shared: int = 0
    b_better: int = 0
    a_better: int = 0
    same: int = 0

    def markdown(self) -> str:
        """The comparison as a Markdown table (``sgr eval compare --markdown``)."""
        return comparison_markdown(self)

    def table(self):  # noqa: ANN201 (a rich Table)
        """The comparison as a rich table (``sgr eval compare``)."""
        return comparison_table(self)


def load_metrics(run_dir: Path) -> dict[str, Any]:
    path = Path(run_dir) / "metrics.json"
    if not path.exists():
        raise InputError(f"{path}: not found; is {run_dir} a run folder of `sgr eval`?")
    return json.loads(path.read_text())


def compare_runs(run_a: Path, run_b: Path) -> Comparison:
    ma, mb = load_metrics(run_a), load_metrics(run_b)
    cmp = Comparison(a=f"{ma.get('method')} · {ma.get('dataset', {}).get('name')}",
                     b=f"{mb.get('method')} · {mb.get('dataset', {}).get('name')}")
    oa, ob = ma["overall"], mb["overall"]
    cmp.rows.append(CompareRow("questions scored", oa.get("n"), ob.get("n"), None))
    for k in (*METRIC_NAMES, "ceiling", "ceiling_cvt"):
        if k in oa or k in ob:
            cmp.rows.append(CompareRow(METRIC_LABELS.get(k, k), oa.get(k), ob.get(k)))
    hops = sorted(set(ma.get("by_hops", {})) | set(mb.get("by_hops", {})), key=lambda s: (len(s), s))
    for h in hops:
        ha, hb = ma.get("by_hops", {}).get(h, {}), mb.get("by_hops", {}).get(h, {})
        for k in ("hits1_strict", "hit", "f1"):
            cmp.rows.append(CompareRow(f"{h}-hop {METRIC_LABELS[k].split(' (')[0]}"
                                       f"{' (lenient)' if k == 'hit' else ' (strict)' if k == 'hits1_strict' else ''}",
                                       ha.get(k), hb.get(k)))
    for k, label in COST_ROWS:
        better = True if k == "questions_per_s" else False if k.startswith("latency") else None
        cmp.rows.append(CompareRow(label, ma["cost"].get(k), mb["cost"].get(k), better))

    pa = read_predictions(Path(run_a) / "predictions.jsonl")
    pb = read_predictions(Path(run_b) / "predictions.jsonl")
    for qid in pa.keys() & pb.keys():
        sa, sb = record_scores(pa[qid]), record_scores(pb[qid])
        if sa is None or sb is None:
            continue
        cmp.shared += 1
        d = sb.hits1_strict - sa.hits1_strict
        if d > 0:
            cmp.b_better += 1
        elif d < 0:
            cmp.a_better += 1
        else:
            cmp.same += 1
    return cmp


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def comparison_markdown(cmp: Comparison) -> str:
    lines = [f"| | A: {cmp.a} | B: {cmp.b} | Δ (B − A) |", "|---|---|---|---|"]
    for r in cmp.rows:
        d = r.delta
        lines.append(f"| {r.label} | {_fmt(r.a)} | {_fmt(r.b)} | {'–' if d is None else f'{d:+.3f}'} |")
    lines.append("")
    lines.append(f"Paired over {cmp.shared} shared questions (strict Hits@1): B better on {cmp.b_better}, "
                 f"A better on {cmp.a_better}, same on {cmp.same}.")
    return "\n".join(lines) + "\n"


def comparison_table(cmp: Comparison):
    """A rich Table for the terminal."""
    from rich.table import Table

    t = Table(title="sgr eval compare", show_lines=False)
    t.add_column("")
    t.add_column(f"A: {cmp.a}", justify="right")
    t.add_column(f"B: {cmp.b}", justify="right")
    t.add_column("Δ (B − A)", justify="right")
    for r in cmp.rows:
        d = r.delta
        good = None if d is None or d == 0 or r.higher_is_better is None else (d > 0) == r.higher_is_better
        color = "" if good is None else ("green" if good else "red")
        t.add_row(r.label, _fmt(r.a), _fmt(r.b), "–" if d is None else f"[{color}]{d:+.3f}[/]" if color else f"{d:+.3f}")
    t.caption = (f"paired over {cmp.shared} shared questions (strict Hits@1): B better on {cmp.b_better}, "
                 f"A better on {cmp.a_better}, same on {cmp.same}")
    return t
