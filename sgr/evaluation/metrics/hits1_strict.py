"""Strict Hits@1: the top-ranked answer is a gold answer.

``hits1_strict = 1`` when the first predicted answer, normalised (:func:`sgr.core.text.normalize`),
equals some normalised gold answer; ``0`` otherwise, also when nothing is predicted. This is
Hits@1 in its ranking sense (the metric of the MetaQA and embedding-based KGQA papers, e.g.
Saxena et al. 2020, EmbedKGQA §4.3); do not confuse it with the lenient :mod:`sgr.evaluation.metrics.hit`.
"""

from __future__ import annotations

from collections.abc import Sequence

from sgr.core.text import normalize, normalize_set


def hits1_strict(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """1.0 if ``predicted[0]`` matches a gold answer after normalisation, else 0.0."""
    if not predicted:
        return 0.0
    top = normalize(predicted[0])
    return 1.0 if top and top in normalize_set(gold) else 0.0
