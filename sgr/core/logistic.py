"""One small learned scorer for sgr's fitted-on-dev parts: logistic regression over named, standardised features.

    p = σ(w · z + b),   z_i = (x_i − mean_i) / scale_i

The path ranker (:mod:`sgr.methods.sgr.path_ranker`), the topic scorer (:mod:`sgr.retrieval.mentions`) and the
confidence calibrator (:mod:`sgr.methods.confidence`) are each one of these with their own feature names, fitted by a
``bench/`` script on dev data and shipped as JSON under ``sgr/assets/`` with their provenance. A file whose feature
names are not the code's is refused (a stale asset must be refitted, not misread).
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


@dataclass
class LogisticScorer:
    """σ(w·z + b) over the features ``names`` (module docstring)."""

    names: tuple[str, ...]
    weights: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    provenance: dict[str, Any] = field(default_factory=dict)

    def vector(self, values: Mapping[str, float]) -> np.ndarray:
        """The features in order (a missing or None value is 0)."""
        return np.asarray([float(values.get(n, 0.0) or 0.0) for n in self.names], dtype=np.float64)

    def contributions(self, values: Mapping[str, float]) -> dict[str, float]:
        """Each feature's part of the logit, w_i·z_i."""
        z = (self.vector(values) - self.mean) / self.scale
        return dict(zip(self.names, (z * self.weights).tolist()))

    def score(self, values: Mapping[str, float]) -> float:
        z = (self.vector(values) - self.mean) / self.scale
        return 1.0 / (1.0 + math.exp(-float(z @ self.weights + self.bias)))

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.names), "weights": self.weights.round(6).tolist(), "bias": round(self.bias, 6),
                "mean": self.mean.round(6).tolist(), "scale": self.scale.round(6).tolist(),
                "provenance": self.provenance}

    def save(self, path: Path) -> Path:
        """Write :meth:`to_dict` as JSON to ``path``; returns it."""
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
        return path

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], names: Sequence[str] | None = None) -> "LogisticScorer":
        """Read a saved scorer; with ``names``, its features must be exactly those (ValueError otherwise)."""
        if names is not None and tuple(d["features"]) != tuple(names):
            raise ValueError(f"features {list(d['features'])} are not this version's {list(names)}: refit")
        return cls(tuple(d["features"]), np.asarray(d["weights"], dtype=np.float64), float(d["bias"]),
                   np.asarray(d["mean"], dtype=np.float64), np.asarray(d["scale"], dtype=np.float64),
                   dict(d.get("provenance") or {}))

    @classmethod
    def fit(cls, names: Sequence[str], rows: Sequence[Mapping[str, float]], labels: Sequence[int], *, c: float = 1.0,
            sample_weight: Sequence[float] | None = None, provenance: dict[str, Any] | None = None
            ) -> "LogisticScorer":
        """L2-regularised logistic regression (scikit-learn) on standardised features."""
        from sklearn.linear_model import LogisticRegression

        names = tuple(names)
        x = np.asarray([[float(r.get(n, 0.0) or 0.0) for n in names] for r in rows], dtype=np.float64)
        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale[scale < 1e-9] = 1.0
        clf = LogisticRegression(C=c, max_iter=5000).fit((x - mean) / scale, np.asarray(labels),
                                                         sample_weight=sample_weight)
        return cls(names, clf.coef_[0].astype(np.float64), float(clf.intercept_[0]), mean, scale,
                   dict(provenance or {}))


def asset_file(name: str) -> Path:
    """A file shipped in ``sgr/assets/`` (package data)."""
    return Path(str(resources.files("sgr") / "assets" / name))


@lru_cache(maxsize=16)
def load_scorer(path: str, names: tuple[str, ...]) -> LogisticScorer | None:
    """The scorer saved at ``path`` with exactly the features ``names``; None when there is no file."""
    p = Path(path)
    if not p.is_file():
        return None
    return LogisticScorer.from_dict(json.loads(p.read_text(encoding="utf-8")), names)
