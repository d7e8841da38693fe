"""Hit: some gold answer appears anywhere in the output (lenient).

This is the measure that RoG-style papers report as "Hits@1" (Luo et al. 2024, RoG, §5.1 and its
``eval_hit``: 1 when any gold answer string occurs in the model's output). Here the output is the
list of predicted answers, and a gold answer *occurs* in a predicted answer when its normalised form
is a whole-word subsequence of the predicted answer's normalised form (so ``"Jamaican English"``
occurs in ``"jamaican english language"``, but ``"us"`` does not occur in ``"business"``). Rank
does not matter. Always report it labelled as the lenient measure, next to
:mod:`sgr.evaluation.metrics.hits1_strict`.
"""

from __future__ import annotations

from collections.abc import Sequence

from sgr.core.text import normalize, normalize_set


def occurs_in(gold_norm: str, predicted_norm: str) -> bool:
    """Whole-word containment of one normalised string in another."""
    if not gold_norm or not predicted_norm:
        return False
    return f" {gold_norm} " in f" {predicted_norm} "


def hit(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """1.0 if some gold answer occurs in some predicted answer, else 0.0."""
    gold_n = normalize_set(gold)
    if not gold_n:
        return 0.0
    for p in predicted:
        pn = normalize(p)
        if pn in gold_n or any(occurs_in(g, pn) for g in gold_n):
            return 1.0
    return 0.0
