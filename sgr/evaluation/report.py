"""The run report: ``metrics.json``, ``report.md`` and PNG plots, all from the run folder's files.

``metrics.json`` holds, for the questions answered so far (``complete`` says whether that is the
whole selection):

* ``overall`` — the means of the answer metrics (:mod:`sgr.evaluation.metrics.scores`) over questions that
  have gold answers (questions without any are counted in ``n_no_gold`` and left out), a question
  whose method raised scoring 0; plus the reachability ``ceiling`` (:mod:`sgr.evaluation.metrics.reachability`)
  over the same questions, ``ceiling_cvt`` when CVT hops were collapsed;
* ``by_hops`` / ``by_type`` — the same per MetaQA hop count and per question type;
* ``cost`` — :class:`sgr.evaluation.cost.CostSummary`;
* ``misses`` — why the scored questions were missed (:class:`sgr.evaluation.misses.MissSummary`: no answer, a gold
  answer ranked below the top — tied with it or not —, at the end of a path not chosen, or absent), with examples.

``report.md`` shows these as markdown tables (the lenient Hit always labelled as such), and links
``per_hop.png`` (grouped bars per hop: strict Hits@1, Hit, F1, ceiling) and ``latency.png``
(histogram of per-question latency with p50/p95 marked).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sgr.datasets import Dataset
from sgr.evaluation.cost import cost_summary
from sgr.evaluation.misses import CLASSES, example_text, summarize_misses
from sgr.evaluation.predictions import read_predictions, record_scores
from sgr.evaluation.metrics.breakdown import breakdown, rate_by
from sgr.evaluation.metrics.calibration import calibration_summary
from sgr.evaluation.metrics.scores import METRIC_LABELS, METRIC_NAMES, summarize

MAX_TYPES_IN_MD = 40


def build_metrics(records: list[dict[str, Any]], info: dict[str, Any],
                  reach: dict[str, Any] | None = None) -> dict[str, Any]:
    """Compute the metrics dict (see module docstring) from prediction records and run info."""
    ds_info = info.get("dataset", {})
    pairs = [(r, s) for r in records if (s := record_scores(r)) is not None]
    scored = [r for r, _ in pairs]
    overall: dict[str, Any] = summarize([s for _, s in pairs]).as_dict()
    by_hops = {k: v.as_dict() for k, v in breakdown((r.get("hops"), s) for r, s in pairs).items()}
    by_type = {k: v.as_dict() for k, v in breakdown((r.get("qtype"), s) for r, s in pairs).items()}

    ceiling_info: dict[str, Any] = {}
    if reach and reach.get("questions"):
        rq = reach["questions"]
        have = [r for r in scored if r["id"] in rq]
        if have:
            overall["ceiling"] = sum(rq[r["id"]]["reachable"] for r in have) / len(have)
            ks = sorted({rq[r["id"]]["k"] for r in have})
            overall["ceiling_k"] = ks[0] if len(ks) == 1 else ks
            if any(rq[r["id"]].get("reachable_cvt") is not None for r in have):
                overall["ceiling_cvt"] = sum(bool(rq[r["id"]].get("reachable_cvt")) for r in have) / len(have)
            for key, table in (("hops", by_hops), ("qtype", by_type)):
                for k, v in rate_by((r.get(key), rq[r["id"]]["reachable"]) for r in have).items():
                    if k in table:
                        table[k]["ceiling"] = v
            ceiling_info = {"k": reach.get("k"), "graph_version": reach.get("graph_version"),
                            "seconds": reach.get("seconds"),
                            "topics_missing": sum(1 for r in have if rq[r["id"]]["topics_found"] == 0),
                            "answers_missing": sum(1 for r in have if rq[r["id"]]["answers_found"] == 0)}

    sessions = info.get("sessions", [])
    wall = sum(float(s.get("seconds") or 0.0) for s in sessions)
    answered = sum(int(s.get("answered") or 0) for s in sessions)
    cost = cost_summary([r.get("usage") or {} for r in records if not r.get("error")], wall_seconds=wall,
                        answered_in_sessions=answered).as_dict()
    selected = ds_info.get("selected", len(records))
    confident = [(float(r["confidence"]), s.hits1_strict, (r.get("extra") or {}).get("confidence") or {})
                 for r, s in pairs if r.get("confidence") is not None]
    calibration = None
    if confident:
        calibration = calibration_summary([(c, y) for c, y, _ in confident]).as_dict()
        kept = [(c, y) for c, y, info in confident if info.get("threshold") is None or c >= info["threshold"]]
        calibration["coverage_at_default_threshold"] = len(kept) / len(confident)
        calibration["hits1_at_default_threshold"] = sum(y for _, y in kept) / len(kept) if kept else None
        calibration["calibrated_for"] = sorted({str(info.get("calibrated_for")) for _, _, info in confident})
    return {
        "dataset": ds_info,
        "method": info.get("method"),
        "options": info.get("options", {}),
        "complete": len(records) >= selected,
        "n_questions": selected,
        "n_done": len(records),
        "n_errors": sum(1 for r in records if r.get("error")),
        "n_no_gold": len(records) - len(scored),
        "overall": overall,
        "by_hops": by_hops,
        "by_type": by_type,
        "ceiling": ceiling_info,
        "cost": cost,
        "misses": summarize_misses(scored).as_dict(),
        "calibration": calibration,
        "labels": METRIC_LABELS,
    }


def write_report(run_dir: Path, ds: Dataset | None = None, reach: dict[str, Any] | None = None,
                 plots: bool = True) -> dict[str, Any]:
    """(Re)write metrics.json, report.md and the plots of ``run_dir``; returns the metrics."""
    run_dir = Path(run_dir)
    info = json.loads((run_dir / "run.json").read_text()) if (run_dir / "run.json").exists() else {}
    if reach is None and (run_dir / "ceiling.json").exists():
        reach = json.loads((run_dir / "ceiling.json").read_text())
    records = list(read_predictions(run_dir / "predictions.jsonl").values())
    if ds is not None:
        wanted = {q.id for q in ds.questions}
        records = [r for r in records if r["id"] in wanted]
    metrics = build_metrics(records, info, reach)
    tmp = run_dir / "metrics.json.tmp"
    tmp.write_text(json.dumps(metrics, indent=2))
    tmp.replace(run_dir / "metrics.json")
    if plots:
        plot_per_hop(metrics, run_dir / "per_hop.png")
        plot_latency([float((r.get("usage") or {}).get("total_seconds") or 0.0) * 1000 for r in records],
                     metrics, run_dir / "latency.png")
        if metrics.get("calibration"):
            plot_reliability(metrics["calibration"], run_dir / "reliability.png")
    (run_dir / "report.md").write_text(markdown_report(metrics, plots=plots))
    return metrics


# -- markdown --------------------------------------------------------------------------------
def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def markdown_report(m: dict[str, Any], plots: bool = True) -> str:
    ds = m.get("dataset", {})
    sel = ds.get("selection") or {}
    lines = [f"# {m.get('method')} on {ds.get('name')}", ""]
    lines.append(f"- data: `{ds.get('path')}` ({ds.get('format')}, split {ds.get('split') or '–'}); "
                 f"{m['n_questions']} of {ds.get('total')} questions selected"
                 + (f" ({', '.join(f'{k} {v}' for k, v in sel.items())})" if sel else ""))
    lines.append(f"- answered: {m['n_done']} ({'complete' if m['complete'] else 'INCOMPLETE: rerun to resume'}), "
                 f"errors {m['n_errors']}, without gold answers (not scored) {m['n_no_gold']}")
    if m.get("ceiling"):
        c = m["ceiling"]
        lines.append(f"- ceiling: gold answer within k undirected hops of a topic entity, k = "
                     f"{c.get('k') if c.get('k') is not None else 'the question hop count (2 when unknown)'}; "
                     f"graph {c.get('graph_version')}; topic entity missing from the graph for "
                     f"{c.get('topics_missing')} questions, every gold answer missing for {c.get('answers_missing')}")
    lines += ["", "| Metric | Value |", "|---|---|"]
    ov = m["overall"]
    lines.append(f"| Questions scored | {ov['n']} |")
    for k in (*METRIC_NAMES, "ceiling", "ceiling_cvt"):
        if k in ov:
            label = METRIC_LABELS.get(k, "Reachability ceiling, CVT hops free" if k == "ceiling_cvt" else k)
            lines.append(f"| {label} | {_fmt(ov[k])} |")
    for title, key in (("Per hop", "by_hops"), ("Per type", "by_type")):
        table = m.get(key) or {}
        if not table:
            continue
        lines += ["", f"## {title}", "",
                  "| | n | Hits@1 (strict) | Hit (lenient) | F1 | Exact set | Ceiling |", "|---|---|---|---|---|---|---|"]
        for name, v in list(table.items())[:MAX_TYPES_IN_MD]:
            lines.append(f"| {name} | {v['n']} | {_fmt(v['hits1_strict'])} | {_fmt(v['hit'])} | {_fmt(v['f1'])} | "
                         f"{_fmt(v['exact_set'])} | {_fmt(v.get('ceiling'))} |")
        if len(table) > MAX_TYPES_IN_MD:
            lines.append(f"| … {len(table) - MAX_TYPES_IN_MD} more in metrics.json | | | | | | |")
    lines += _miss_lines(m.get("misses"))
    lines += _calibration_lines(m.get("calibration"), plots)
    c = m["cost"]
    lines += ["", "## Cost", "",
              f"Per question as each method's usage meter measured it, over {c['n']} questions answered without error. "
              "Billed tokens are those of real model calls; cached tokens are what calls answered from the call "
              "cache cost when first made (not billed again).", "", "| | Value |", "|---|---|",
              f"| latency p50 / p95 / max (ms) | {_fmt(c['latency_ms_p50'], 1)} / {_fmt(c['latency_ms_p95'], 1)} / "
              f"{_fmt(c['latency_ms_max'], 1)} |",
              f"| questions / s (wall clock) | {_fmt(c['questions_per_s'], 2)} |",
              f"| Neo4j queries: total / median per question | {c['neo4j_queries_total']} / {_fmt(c['neo4j_queries_median'], 1)} |",
              f"| Neo4j time: total s / p50 ms per question | {_fmt(c['neo4j_seconds_total'], 1)} / {_fmt(c['neo4j_ms_p50'], 1)} |",
              f"| LLM calls: total / median / from the cache | {c['llm_calls_total']} / "
              f"{_fmt(c['llm_calls_median'], 1)} / {c.get('llm_cached_calls_total', 0)} |",
              f"| prompt tokens billed: total / median | {c['prompt_tokens_total']} / "
              f"{_fmt(c['prompt_tokens_median'], 1)} |",
              f"| completion tokens billed: total / median | {c['completion_tokens_total']} / "
              f"{_fmt(c['completion_tokens_median'], 1)} |",
              f"| prompt tokens cached: total / median | {c.get('cached_prompt_tokens_total', 0)} / "
              f"{_fmt(c.get('cached_prompt_tokens_median', 0.0), 1)} |",
              f"| completion tokens cached: total / median | {c.get('cached_completion_tokens_total', 0)} / "
              f"{_fmt(c.get('cached_completion_tokens_median', 0.0), 1)} |"]
    for stage, ms in (c.get("stage_ms_p50") or {}).items():
        lines.append(f"| stage `{stage}`: p50 ms / total s | {_fmt(ms, 2)} / {_fmt(c['stage_seconds_total'][stage], 1)} |")
    if plots:
        lines += ["", "![per hop](per_hop.png)", "", "![latency](latency.png)"]
    return "\n".join(lines) + "\n"


def _calibration_lines(cal: dict[str, Any] | None, plots: bool) -> list[str]:
    if not cal:
        return []
    cov = cal.get("hits1_at_coverage") or {}
    out = ["", "## Confidence", "",
           f"The calibrated confidence of the top answer ({', '.join(cal.get('calibrated_for') or [])}) over "
           f"{cal['n']} scored questions: how well it ranks right answers above wrong ones, how close it is to the "
           "observed accuracy, and the accuracy among the questions it is surest of.", "",
           "| | Value |", "|---|---|",
           f"| AUROC (confidence for correctness) | {_fmt(cal.get('auroc'))} |",
           f"| expected calibration error (10 bins) | {_fmt(cal.get('ece'))} |"]
    out += [f"| Hits@1 at {k} coverage | {_fmt(v)} |" for k, v in cov.items()]
    out += [f"| coverage at the default threshold | {_fmt(cal.get('coverage_at_default_threshold'))} |",
            f"| Hits@1 of the answered, at the default threshold | {_fmt(cal.get('hits1_at_default_threshold'))} |"]
    if plots:
        out += ["", "![reliability](reliability.png)"]
    return out


def _miss_lines(ms: dict[str, Any] | None) -> list[str]:
    """The misses section: the count per class and its first examples."""
    if not ms or not ms.get("misses"):
        return []
    lines = ["", "## Misses", "",
             f"{ms['misses']} of {ms['n']} scored questions missed (strict Hits@1); {ms['tied_hits']} hits share "
             "the top score with an answer that is not gold.", "", "| Class | n | Examples |", "|---|---|---|"]
    for cls in CLASSES:
        ex = "; ".join(example_text(e) for e in ms["examples"].get(cls, []))
        n = f"{ms[cls]} ({ms['tied']} tied)" if cls == "ranked" else str(ms[cls])
        lines.append(f"| {cls.replace('_', ' ')} | {n} | {ex.replace('|', '/')} |")
    return lines


# -- plots -----------------------------------------------------------------------------------
def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_per_hop(m: dict[str, Any], path: Path) -> None:
    """Grouped bars: strict Hits@1, Hit, F1 and the ceiling per hop (one group "all" without hops)."""
    plt = _pyplot()
    groups = dict(m.get("by_hops") or {}) or {"all": m["overall"]}
    names = [("hits1_strict", "Hits@1 (strict)"), ("hit", "Hit (lenient)"), ("f1", "F1"), ("ceiling", "ceiling")]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.8 + 1.6 * len(groups)), 3.8))
    width = 0.2
    for j, (key, label) in enumerate(names):
        vals = [float(g.get(key) or 0.0) for g in groups.values()]
        xs = [i + (j - 1.5) * width for i in range(len(groups))]
        bars = ax.bar(xs, vals, width, label=label)
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.set_xticks(range(len(groups)), [f"{k}-hop" if k.isdigit() else k for k in groups])
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("score")
    ax.set_title(f"{m.get('method')} on {m.get('dataset', {}).get('name')}")
    ax.legend(fontsize=7, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.1), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_latency(latencies_ms: list[float], m: dict[str, Any], path: Path) -> None:
    """Histogram of per-question latency (log-spaced bins) with p50 and p95 lines."""
    import numpy as np

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    vals = [v for v in latencies_ms if v > 0]
    if vals:
        lo, hi = max(min(vals), 1e-3), max(vals)
        bins = np.geomspace(lo, hi * 1.0001, 40) if hi > lo else 10
        ax.hist(vals, bins=bins, color="#4c72b0")
        if hi > lo:
            ax.set_xscale("log")
        for q, style in (("latency_ms_p50", "--"), ("latency_ms_p95", ":")):
            v = m["cost"][q]
            ax.axvline(v, color="black", linestyle=style, label=f"{q[-3:]} {v:.1f} ms")
        ax.legend(fontsize=8)
    ax.set_xlabel("latency per question (ms)")
    ax.set_ylabel("questions")
    ax.set_title(f"{m.get('method')} on {m.get('dataset', {}).get('name')}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_reliability(cal: dict[str, Any], path: Path) -> None:
    """The reliability diagram: accuracy per confidence bin against the diagonal, bin sizes as labels."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    bins = cal.get("reliability") or []
    ax.plot([0, 1], [0, 1], color="#999999", linestyle="--", linewidth=1, label="perfectly calibrated")
    ax.bar([(b["lo"] + b["hi"]) / 2 for b in bins], [b["accuracy"] for b in bins],
           width=[(b["hi"] - b["lo"]) * 0.9 for b in bins], color="#4C72B0", alpha=0.8, label="accuracy")
    for b in bins:
        ax.text((b["lo"] + b["hi"]) / 2, b["accuracy"] + 0.02, str(b["n"]), ha="center", fontsize=7)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.08)
    ax.set_xlabel("confidence")
    ax.set_ylabel("Hits@1 (strict)")
    ax.set_title(f"AUROC {_fmt(cal.get('auroc'))}, ECE {_fmt(cal.get('ece'))}")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
