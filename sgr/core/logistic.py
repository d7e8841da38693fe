"""One small learned scorer for sgr's fitted-on-dev parts: logistic regression over named, standardised features.

    p = σ(w · z + b),   z_i = (x_i − mean_i) / scale_i

The topic scorer (:mod:`sgr.retrieval.mentions`) and the confidence calibrator (:mod:`sgr.methods.confidence`) are
each one of these with their own feature names, fitted by a ``bench/`` script on dev data and shipped as JSON under
``sgr/assets/`` with their provenance (the path ranker has a hidden layer: :mod:`sgr.core.mlp`). A file whose feature
names are not the code's is refused (a stale asset must be refitted, not misread).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np


def feature_matrix(names: Sequence[str], rows: Sequence[Mapping[str, float]]) -> np.ndarray:
    """One row a mapping, one column a feature of ``names`` in order (a missing or None value is 0)."""
    return np.asarray([[float(r.get(n, 0.0) or 0.0) for n in names] for r in rows], dtype=np.float64)


class FeatureScorer:
    """What every saved scorer shares: its features by name, in order, and a JSON file (:meth:`to_dict`)."""

    names: tuple[str, ...]

    def vector(self, values: Mapping[str, float]) -> np.ndarray:
        """The features in order (a missing or None value is 0)."""
        return np.asarray([float(values.get(n, 0.0) or 0.0) for n in self.names], dtype=np.float64)

    def save(self, path: Path) -> Path:
        """Write :meth:`to_dict` as JSON to ``path``; returns it."""
        return save_json(self.to_dict(), path)

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass
class LogisticScorer(FeatureScorer):
    """σ(w·z + b) over the features ``names`` (module docstring)."""

    names: tuple[str, ...]
    weights: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    provenance: dict[str, Any] = field(default_factory=dict)

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

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], names: Sequence[str] | None = None) -> "LogisticScorer":
        """Read a saved scorer; with ``names``, its features must be exactly those (ValueError otherwise)."""
        check_features(d, names)
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
        x = feature_matrix(names, rows)
        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale[scale < 1e-9] = 1.0
        clf = LogisticRegression(C=c, max_iter=5000).fit((x - mean) / scale, np.asarray(labels),
                                                         sample_weight=sample_weight)
        return cls(names, clf.coef_[0].astype(np.float64), float(clf.intercept_[0]), mean, scale,
                   dict(provenance or {}))


def fit_listwise(names: Sequence[str], groups: Sequence[Sequence[Mapping[str, float]]],
                 labels: Sequence[Sequence[int]], *, c: float = 1.0,
                 provenance: dict[str, Any] | None = None) -> LogisticScorer:
    """A scorer that ranks within groups: w maximises Σ_g log Σ_{i ∈ pos(g)} softmax(w·z)_i over the groups with a
    positive item (a question's candidates, the right ones among them: the conditional logit, L2 penalty 1/(2c)·|w|²);
    then σ(a·(w·z) + b) is fitted on every item (Platt scaling), so scores are comparable across groups and the ranking
    within a group is the learned one."""
    from scipy.optimize import minimize
    from sklearn.linear_model import LogisticRegression

    names = tuple(names)
    flat = [r for g in groups for r in g]
    x_all = feature_matrix(names, flat)
    mean, scale = x_all.mean(axis=0), x_all.std(axis=0)
    scale[scale < 1e-9] = 1.0
    kept = [(feature_matrix(names, g) - mean) / scale
            for g, ys in zip(groups, labels) if any(ys) and not all(ys)]
    pos = [np.asarray(ys, dtype=bool) for g, ys in zip(groups, labels) if any(ys) and not all(ys)]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.5 / c * float(w @ w), w / c
        for z, p in zip(kept, pos):
            s = z @ w
            m = s.max()
            e = np.exp(s - m)
            all_ = e.sum()
            good = e[p].sum()
            total -= math.log(good) - math.log(all_)
            grad = grad - (e[p] @ z[p]) / good + (e @ z) / all_
        return total, grad

    w = minimize(loss, np.zeros(len(names)), jac=True, method="L-BFGS-B").x if kept else np.zeros(len(names))
    raw = ((x_all - mean) / scale) @ w
    y = np.asarray([v for ys in labels for v in ys])
    platt = LogisticRegression(C=1e6, max_iter=1000).fit(raw.reshape(-1, 1), y)
    a, b = float(platt.coef_[0][0]), float(platt.intercept_[0])
    return LogisticScorer(names, w * a, b, mean, scale, dict(provenance or {}))


def asset_file(name: str) -> Path:
    """A file shipped in ``sgr/assets/`` (package data)."""
    return Path(str(resources.files("sgr") / "assets" / name))


#: a list of numbers only, as ``json.dumps(indent=…)`` writes it: one number a line
_NUMBER_LIST = re.compile(r"\[\s+(-?[0-9][0-9.eE+-]*(?:,\s+-?[0-9][0-9.eE+-]*)*)\s+\]")


def json_text(d: Mapping[str, Any]) -> str:
    """``d`` as indented JSON, each list of numbers on one line (a saved scorer's weights, a tree's nodes)."""
    return _NUMBER_LIST.sub(lambda m: "[" + " ".join(m.group(1).split()) + "]", json.dumps(d, indent=1)) + "\n"


def save_json(d: Mapping[str, Any], path: Path) -> Path:
    """A saved scorer's file: ``d`` as :func:`json_text` at ``path``; returns it."""
    path.write_text(json_text(d), encoding="utf-8")
    return path


def check_features(d: Mapping[str, Any], names: Sequence[str] | None) -> None:
    """A saved scorer must read exactly the features ``names`` (when given): ValueError naming both otherwise."""
    if names is not None and tuple(d["features"]) != tuple(names):
        raise ValueError(f"features {list(d['features'])} are not this version's {list(names)}: refit")


@lru_cache(maxsize=16)
def load_scorer(path: str, names: tuple[str, ...], kind: type = LogisticScorer) -> Any:
    """The scorer of class ``kind`` (its ``from_dict``) saved at ``path`` with exactly the features ``names``; None
    when there is no file."""
    p = Path(path)
    if not p.is_file():
        return None
    return kind.from_dict(json.loads(p.read_text(encoding="utf-8")), names)
