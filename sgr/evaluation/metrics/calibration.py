"""How well a confidence tells right answers from wrong ones: risk–coverage, AUROC, ECE, the reliability diagram.

Inputs are pairs (confidence of the top answer, whether the top answer is correct: strict Hits@1), one per question
that has a gold answer and a confidence.

* **Hits@1 at coverage c** — answer only the ⌈c·n⌉ most confident questions: the share of them answered correctly
  (selective prediction's risk–coverage view; coverage 1.0 is plain Hits@1).
* **AUROC** — the probability that a random correct answer has a higher confidence than a random wrong one (ties
  count half; Mann–Whitney U / (n₊·n₋)).
* **ECE** — expected calibration error over ``bins`` equal-width confidence bins: Σ_b (n_b/n)·|acc_b − conf_b|.
* **Reliability** — per bin: mean confidence, accuracy, count (the diagram's bars).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

COVERAGES = (1.0, 0.8, 0.5)


@dataclass
class CalibrationSummary:
    n: int
    auroc: float | None
    ece: float | None
    hits1_at_coverage: dict[str, float] = field(default_factory=dict)
    reliability: list[dict[str, float]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def hits1_at_coverage(pairs: Sequence[tuple[float, float]], coverage: float) -> float | None:
    """Accuracy over the ⌈coverage·n⌉ most confident questions (ties in confidence kept in input order)."""
    if not pairs:
        return None
    k = max(1, math.ceil(coverage * len(pairs)))
    ranked = sorted(range(len(pairs)), key=lambda i: -pairs[i][0])[:k]
    return sum(pairs[i][1] for i in ranked) / k


def auroc(pairs: Sequence[tuple[float, float]]) -> float | None:
    """Mann–Whitney AUROC of confidence for correctness; None when one class is empty."""
    pos = [c for c, y in pairs if y >= 0.5]
    neg = [c for c, y in pairs if y < 0.5]
    if not pos or not neg:
        return None
    order = sorted([(c, 1) for c in pos] + [(c, 0) for c in neg])
    ranks: list[float] = [0.0] * len(order)
    i = 0
    while i < len(order):  # average ranks over ties
        j = i
        while j + 1 < len(order) and order[j + 1][0] == order[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    r_pos = sum(r for r, (_, y) in zip(ranks, order) if y == 1)
    return (r_pos - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def reliability(pairs: Sequence[tuple[float, float]], bins: int = 10) -> list[dict[str, float]]:
    out = []
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = [(c, y) for c, y in pairs if lo <= c < hi or (b == bins - 1 and c == 1.0)]
        if inside:
            out.append({"lo": lo, "hi": hi, "n": len(inside), "confidence": sum(c for c, _ in inside) / len(inside),
                        "accuracy": sum(y for _, y in inside) / len(inside)})
    return out


def ece(pairs: Sequence[tuple[float, float]], bins: int = 10) -> float | None:
    if not pairs:
        return None
    return sum(b["n"] / len(pairs) * abs(b["accuracy"] - b["confidence"]) for b in reliability(pairs, bins))


def calibration_summary(pairs: Sequence[tuple[float, float]], bins: int = 10) -> CalibrationSummary:
    return CalibrationSummary(n=len(pairs), auroc=auroc(pairs), ece=ece(pairs, bins),
                              hits1_at_coverage={f"{c:.0%}": hits1_at_coverage(pairs, c) for c in COVERAGES},
                              reliability=reliability(pairs, bins))
