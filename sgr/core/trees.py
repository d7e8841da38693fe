"""Boosted decision trees over named features: the confidence calibrator's scorer (:mod:`sgr.methods.confidence`).

    p = σ(b + Σ_t f_t(x)),   f_t a regression tree of depth ≤ d (gradient boosting on the log-loss)

A logistic score (:mod:`sgr.core.logistic`) gives each feature one weight whatever the others say; trees let a
feature count for more or less depending on the others. Fitted by scikit-learn's
``HistGradientBoostingClassifier``; saved as JSON (each tree's nodes: feature, threshold, children, leaf value) and
evaluated here with numpy, so reading a saved scorer needs no scikit-learn, and gives what scikit-learn gives.

A feature's part in one score (:meth:`BoostedTrees.contributions`) is read by occlusion: the logit less the logit with
that feature at its mean over the fitting rows (negative: it pulled the score down).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sgr.core.logistic import FeatureScorer, check_features, feature_matrix

#: a tree's node arrays, as saved (``feature`` −1 marks a leaf)
NODE_FIELDS = ("feature", "threshold", "left", "right", "value")


@dataclass
class Tree:
    """One regression tree: at node i, go left when x[feature[i]] ≤ threshold[i]; a leaf (feature −1) adds value[i]."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray

    def __call__(self, x: np.ndarray) -> float:
        i = 0
        while self.feature[i] >= 0:
            i = self.left[i] if x[self.feature[i]] <= self.threshold[i] else self.right[i]
        return float(self.value[i])

    def to_dict(self) -> dict[str, list]:
        # thresholds unrounded: a split can sit exactly on a value the fitting rows hold
        return {f: getattr(self, f).tolist() for f in NODE_FIELDS}

    @classmethod
    def from_dict(cls, d: Mapping[str, Sequence[float]]) -> "Tree":
        ints = {k: np.asarray(d[k], dtype=np.int64) for k in ("feature", "left", "right")}
        return cls(ints["feature"], np.asarray(d["threshold"], dtype=np.float64), ints["left"], ints["right"],
                   np.asarray(d["value"], dtype=np.float64))


@dataclass
class BoostedTrees(FeatureScorer):
    """σ(bias + Σ trees) over the features ``names`` (module docstring)."""

    names: tuple[str, ...]
    bias: float
    trees: list[Tree]
    mean: np.ndarray
    params: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)

    def logit(self, values: Mapping[str, float]) -> float:
        return self._logit(self.vector(values))

    def _logit(self, x: np.ndarray) -> float:
        return self.bias + sum(t(x) for t in self.trees)

    def score(self, values: Mapping[str, float]) -> float:
        return 1.0 / (1.0 + math.exp(-self.logit(values)))

    def contributions(self, values: Mapping[str, float]) -> dict[str, float]:
        """Each feature's part of the logit by occlusion: the logit less the logit with that feature at its mean."""
        x = self.vector(values)
        full = self._logit(x)
        out = {}
        for i, name in enumerate(self.names):
            moved = x.copy()
            moved[i] = self.mean[i]
            out[name] = full - self._logit(moved) if moved[i] != x[i] else 0.0
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "boosted_trees", "features": list(self.names), "bias": self.bias,
                "mean": self.mean.round(6).tolist(), "params": self.params,
                "trees": [t.to_dict() for t in self.trees], "provenance": self.provenance}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], names: Sequence[str] | None = None) -> "BoostedTrees":
        """Read a saved scorer; with ``names``, its features must be exactly those (ValueError otherwise)."""
        check_features(d, names)
        return cls(tuple(d["features"]), float(d["bias"]), [Tree.from_dict(t) for t in d["trees"]],
                   np.asarray(d["mean"], dtype=np.float64), dict(d.get("params") or {}),
                   dict(d.get("provenance") or {}))

    @classmethod
    def fit(cls, names: Sequence[str], rows: Sequence[Mapping[str, float]], labels: Sequence[int], *,
            params: Mapping[str, Any], provenance: dict[str, Any] | None = None) -> "BoostedTrees":
        """Gradient-boosted trees (scikit-learn's ``HistGradientBoostingClassifier`` with ``params``, seed 0, no early
        stopping) read back into :class:`Tree` s from its fitted predictors (private attributes: the unit test that
        compares the scores with scikit-learn's fails if a version moves them)."""
        from sklearn.ensemble import HistGradientBoostingClassifier

        names = tuple(names)
        x = feature_matrix(names, rows)
        clf = HistGradientBoostingClassifier(**params, early_stopping=False, random_state=0).fit(x, np.asarray(labels))
        trees = []
        for (pred,) in clf._predictors:  # one tree an iteration for a binary task
            nodes = pred.nodes
            leaf = nodes["is_leaf"].astype(bool)
            trees.append(Tree(np.where(leaf, -1, nodes["feature_idx"]).astype(np.int64),
                              nodes["num_threshold"].astype(np.float64), nodes["left"].astype(np.int64),
                              nodes["right"].astype(np.int64), np.where(leaf, nodes["value"], 0.0)))
        bias = float(np.ravel(clf._baseline_prediction)[0])
        return cls(names, bias, trees, x.mean(axis=0), dict(params), dict(provenance or {}))
