"""Per-question answer scores and their means: the one place that applies every answer metric.

Each question gets a :class:`QuestionScores` (strict Hits@1, lenient Hit, precision, recall, F1,
exact-set accuracy; see the metric modules); a set of questions gets a :class:`MetricSummary`
holding the arithmetic mean of each score, i.e. macro-averaged over questions (the convention of
the MetaQA, WebQSP and CWQ evaluations).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

from sgr.evaluation.metrics.exact_set import exact_set
from sgr.evaluation.metrics.f1 import set_scores
from sgr.evaluation.metrics.hit import hit
from sgr.evaluation.metrics.hits1_strict import hits1_strict

#: Score names, in report order.
METRIC_NAMES: tuple[str, ...] = ("hits1_strict", "hit", "precision", "recall", "f1", "exact_set")

#: How the metrics are labelled for people (the lenient Hit always says what it is).
METRIC_LABELS: dict[str, str] = {
    "hits1_strict": "Hits@1 (strict: top answer)",
    "hit": "Hit (lenient: any answer; RoG-style 'Hits@1')",
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1",
    "exact_set": "Exact-set accuracy",
    "ceiling": "Reachability ceiling",
}


@dataclass(frozen=True)
class QuestionScores:
    hits1_strict: float
    hit: float
    precision: float
    recall: float
    f1: float
    exact_set: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def score_answers(predicted: Sequence[str], gold: Sequence[str]) -> QuestionScores:
    """All answer metrics of one ranked prediction against the gold answers."""
    s = set_scores(predicted, gold)
    return QuestionScores(hits1_strict=hits1_strict(predicted, gold), hit=hit(predicted, gold),
                          precision=s.precision, recall=s.recall, f1=s.f1,
                          exact_set=exact_set(predicted, gold))


@dataclass
class MetricSummary:
    """Means of the per-question scores over ``n`` questions (all 0.0 when ``n == 0``)."""

    n: int
    hits1_strict: float = 0.0
    hit: float = 0.0
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    exact_set: float = 0.0

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def summarize(scores: Sequence[QuestionScores]) -> MetricSummary:
    """Macro-average ``scores``."""
    n = len(scores)
    if n == 0:
        return MetricSummary(n=0)
    means = {f.name: sum(getattr(s, f.name) for s in scores) / n for f in fields(QuestionScores)}
    return MetricSummary(n=n, **means)
