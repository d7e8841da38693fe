"""Precision, recall and F1 of the predicted answer set against the gold set.

Answers are compared as sets of normalised strings (:func:`sgr.core.text.normalize`), the entity-set
F1 of GNN-RAG / SubgraphRAG-style KGQA evaluation (Mavromatis & Karypis 2024, GNN-RAG §5):

    P = |Pred ∩ Gold| / |Pred|,   R = |Pred ∩ Gold| / |Gold|,   F1 = 2PR / (P + R)

An empty prediction scores P = R = F1 = 0; duplicates (after normalisation) count once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sgr.core.text import normalize_set


@dataclass(frozen=True)
class SetScores:
    precision: float
    recall: float
    f1: float


def set_scores(predicted: Sequence[str], gold: Sequence[str]) -> SetScores:
    """Precision, recall and F1 of ``predicted`` (as a set) against ``gold``."""
    pred = normalize_set(predicted)
    ref = normalize_set(gold)
    if not pred or not ref:
        return SetScores(0.0, 0.0, 0.0)
    common = len(pred & ref)
    if common == 0:
        return SetScores(0.0, 0.0, 0.0)
    p = common / len(pred)
    r = common / len(ref)
    return SetScores(p, r, 2 * p * r / (p + r))


def f1(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """F1 of the predicted answer set."""
    return set_scores(predicted, gold).f1
