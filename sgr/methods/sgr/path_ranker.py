"""s(P) learned on dev questions: a logistic path ranker over the terms G_q already computes.

SGR scores a schema path by relevance, entity alignment and constraint satisfaction (§3.1.2); how much each term
weighs — and, above all, how much a longer path must earn before it beats the one-hop path that reaches the entity
a compositional question only describes — was a hand-set sum (``w_rel``, ``w_align``, ``w_con``, ``w_len``). The ranker
learns those weights, per question shape, from dev questions whose gold answers say which schema paths are right:

    s(P) = σ(w · φ(P, q) + b)

φ (:data:`FEATURES`) holds the terms of :meth:`sgr.methods.sgr.subgraph.SubgraphBuilder` (relation scores: mean,
first, last, weakest; cos(q, text(P)); the order of the model's relations; alignment with the other linked entities;
an end named in the question; the type check), the path's shape (entity hops, CVT steps) and P(h(P) | q) of the hop
model (:mod:`sgr.retrieval.hops`), the size of its answer set, and whether it ends on another linked entity. The
target is whether the path reaches a gold answer. ``bench/path_ranker.py`` builds the examples from CWQ dev (on
WebQSP train bases) and MetaQA dev, fits the weights (scikit-learn), checks them on held-out dev questions and
writes ``sgr/assets/path_ranker.json``; without that file G_q keeps the hand-set sum.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

ASSET = "path_ranker.json"

#: φ(P, q), in order (module docstring).
FEATURES = ("rel_mean", "rel_first", "rel_last", "rel_min", "path_sim", "order", "alignment", "named_end",
            "type_check", "hops1", "hops2", "hops3", "cvt_steps", "p_hops", "p_hops_gap", "log_answers",
            "ends_on_linked")


def path_features(parts: Mapping[str, float]) -> np.ndarray:
    """φ as a vector from the ``parts`` dict G_q records per schema path (missing terms are 0)."""
    return np.asarray([float(parts.get(f, 0.0)) for f in FEATURES], dtype=np.float64)


@dataclass
class PathRanker:
    """σ(w·φ + b) with φ standardised by the training mean and scale."""

    weights: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    features: tuple[str, ...] = FEATURES
    provenance: dict[str, Any] = field(default_factory=dict)

    def score(self, parts: Mapping[str, float]) -> float:
        z = (path_features(parts) - self.mean) / self.scale
        return 1.0 / (1.0 + math.exp(-float(z @ self.weights + self.bias)))

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "weights": self.weights.round(6).tolist(),
                "bias": round(self.bias, 6), "mean": self.mean.round(6).tolist(),
                "scale": self.scale.round(6).tolist(), "provenance": self.provenance}

    def save(self, path: Path | str) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
        return path

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "PathRanker":
        if tuple(d["features"]) != FEATURES:
            raise ValueError(f"path ranker features {d['features']} are not this version's {list(FEATURES)}")
        return cls(np.asarray(d["weights"], dtype=np.float64), float(d["bias"]),
                   np.asarray(d["mean"], dtype=np.float64), np.asarray(d["scale"], dtype=np.float64),
                   FEATURES, dict(d.get("provenance") or {}))


def asset_path() -> Path:
    return Path(str(resources.files("sgr") / "assets" / ASSET))


@lru_cache(maxsize=4)
def load_path_ranker(path: str | None = None) -> PathRanker | None:
    """The ranker at ``path`` (default: the shipped one), or None when there is none."""
    p = Path(path) if path else asset_path()
    if not p.is_file():
        return None
    return PathRanker.from_dict(json.loads(p.read_text(encoding="utf-8")))


def train_path_ranker(rows: Sequence[Mapping[str, float]], labels: Sequence[int], *, c: float = 1.0,
                      sample_weight: Sequence[float] | None = None,
                      provenance: dict[str, Any] | None = None) -> PathRanker:
    """Fit the weights on schema paths' ``parts`` dicts and 0/1 labels (logistic regression, L2, standardised φ)."""
    from sklearn.linear_model import LogisticRegression

    x = np.stack([path_features(r) for r in rows])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    clf = LogisticRegression(C=c, max_iter=5000)
    clf.fit((x - mean) / scale, np.asarray(labels), sample_weight=sample_weight)
    return PathRanker(clf.coef_[0].astype(np.float64), float(clf.intercept_[0]), mean, scale, FEATURES,
                      dict(provenance or {}))
