"""Breakdowns of the answer metrics by a question attribute (MetaQA hop count, CWQ-style type).

``breakdown(pairs)`` groups ``(key, QuestionScores)`` pairs by key and macro-averages each group
(:func:`sgr.evaluation.metrics.scores.summarize`); questions without the attribute (key ``None``) are left
out, so a dataset without hop counts yields an empty breakdown.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from sgr.evaluation.metrics.scores import MetricSummary, QuestionScores, summarize


def breakdown(pairs: Iterable[tuple[object, QuestionScores]]) -> dict[str, MetricSummary]:
    """``{str(key): summary}`` sorted by key (numerically when all keys are integers)."""
    groups: dict[object, list[QuestionScores]] = defaultdict(list)
    for key, scores in pairs:
        if key is None or key == "":
            continue
        groups[key].append(scores)
    return {str(k): summarize(groups[k]) for k in _sorted_keys(groups)}


def rate_by(pairs: Iterable[tuple[object, bool]]) -> dict[str, float]:
    """Share of ``True`` per key (for the per-hop reachability ceiling); ``None`` keys left out."""
    hits: dict[object, list[int]] = defaultdict(lambda: [0, 0])
    for key, ok in pairs:
        if key is None or key == "":
            continue
        hits[key][0] += int(bool(ok))
        hits[key][1] += 1
    return {str(k): hits[k][0] / hits[k][1] for k in _sorted_keys(hits)}


def _sorted_keys(groups: dict[object, object]) -> list[object]:
    keys = list(groups)
    if all(isinstance(k, int) for k in keys):
        return sorted(keys)  # type: ignore[type-var]
    return sorted(keys, key=str)
