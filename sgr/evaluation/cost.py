"""Cost summaries of a run: latency percentiles, Neo4j and LLM totals and medians, throughput.

Per question the runner records the method's :class:`sgr.core.types.Usage` (wall time per stage, Neo4j
query count and time, LLM calls, billed prompt/completion tokens, and apart from them the calls and
tokens answered from the call cache). Billed and cached tokens are summarised separately, so a warm-cache
rerun shows 0 billed tokens for every method alike. Questions whose method raised carry no usage and
are left out (``n`` counts the questions summarised). Here those records are summarised: the median
(p50) and 95th percentile (p95, linear interpolation between order statistics, NumPy's default)
of end-to-end latency, totals and medians of the counters, and questions per second of wall-clock
time over the run's sessions (answered questions / summed session durations).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0–100) of ``values``; 0.0 when empty."""
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else 0.0


@dataclass
class CostSummary:
    n: int
    latency_ms_p50: float = 0.0
    latency_ms_p95: float = 0.0
    latency_ms_mean: float = 0.0
    latency_ms_max: float = 0.0
    total_seconds: float = 0.0  # summed per-question latency
    wall_seconds: float = 0.0  # summed session wall-clock time
    questions_per_s: float = 0.0
    neo4j_queries_total: int = 0
    neo4j_queries_median: float = 0.0
    neo4j_ms_p50: float = 0.0
    neo4j_seconds_total: float = 0.0
    llm_calls_total: int = 0
    llm_calls_median: float = 0.0
    llm_calls_mean: float = 0.0
    prompt_tokens_total: int = 0
    prompt_tokens_median: float = 0.0
    completion_tokens_total: int = 0
    completion_tokens_median: float = 0.0
    llm_cached_calls_total: int = 0
    cached_prompt_tokens_total: int = 0
    cached_prompt_tokens_median: float = 0.0
    cached_completion_tokens_total: int = 0
    cached_completion_tokens_median: float = 0.0
    llm_seconds_total: float = 0.0
    stage_ms_p50: dict[str, float] = field(default_factory=dict)
    stage_seconds_total: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def cost_summary(usages: Sequence[dict[str, Any]], wall_seconds: float = 0.0,
                 answered_in_sessions: int | None = None) -> CostSummary:
    """Summarise per-question usage dicts (``asdict(Usage)``; empty ones, from questions whose method raised,
    are skipped); ``wall_seconds`` is the sessions' wall time."""
    usages = [u for u in usages if u]
    n = len(usages)
    if n == 0:
        return CostSummary(n=0, wall_seconds=wall_seconds)

    def col(key: str) -> list[float]:
        return [float(u.get(key) or 0.0) for u in usages]

    lat = [v * 1000 for v in col("total_seconds")]
    stages: dict[str, list[float]] = defaultdict(list)
    for u in usages:
        for k, v in (u.get("stage_seconds") or {}).items():
            stages[k].append(float(v))
    answered = n if answered_in_sessions is None else answered_in_sessions
    return CostSummary(
        n=n,
        latency_ms_p50=percentile(lat, 50), latency_ms_p95=percentile(lat, 95),
        latency_ms_mean=float(np.mean(lat)), latency_ms_max=float(np.max(lat)),
        total_seconds=sum(col("total_seconds")), wall_seconds=wall_seconds,
        questions_per_s=(answered / wall_seconds) if wall_seconds > 0 else 0.0,
        neo4j_queries_total=int(sum(col("neo4j_queries"))), neo4j_queries_median=percentile(col("neo4j_queries"), 50),
        neo4j_ms_p50=percentile([v * 1000 for v in col("neo4j_seconds")], 50),
        neo4j_seconds_total=sum(col("neo4j_seconds")),
        llm_calls_total=int(sum(col("llm_calls"))), llm_calls_median=percentile(col("llm_calls"), 50),
        llm_calls_mean=float(np.mean(col("llm_calls"))),
        prompt_tokens_total=int(sum(col("prompt_tokens"))), prompt_tokens_median=percentile(col("prompt_tokens"), 50),
        completion_tokens_total=int(sum(col("completion_tokens"))),
        completion_tokens_median=percentile(col("completion_tokens"), 50),
        llm_cached_calls_total=int(sum(col("llm_cached_calls"))),
        cached_prompt_tokens_total=int(sum(col("cached_prompt_tokens"))),
        cached_prompt_tokens_median=percentile(col("cached_prompt_tokens"), 50),
        cached_completion_tokens_total=int(sum(col("cached_completion_tokens"))),
        cached_completion_tokens_median=percentile(col("cached_completion_tokens"), 50),
        llm_seconds_total=sum(col("llm_seconds")),
        stage_ms_p50={k: percentile([x * 1000 for x in v], 50) for k, v in sorted(stages.items())},
        stage_seconds_total={k: sum(v) for k, v in sorted(stages.items())},
    )
