"""Exact-set accuracy: the predicted answer set equals the gold set.

1 when the normalised predicted set equals the normalised gold set (order and duplicates do not
matter), 0 otherwise: the strictest set metric, as in CWQ/WebQSP "exact match" of answer sets.
"""

from __future__ import annotations

from collections.abc import Sequence

from sgr.core.text import normalize_set


def exact_set(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """1.0 if the normalised sets are equal and non-empty, else 0.0."""
    ref = normalize_set(gold)
    return 1.0 if ref and normalize_set(predicted) == ref else 0.0
