"""A small learned ranker with one hidden layer, for candidates whose right one depends on how their terms combine.

    f(z) = v · tanh(W z + c),   s = σ(a·f(z) + b),   z_i = (x_i − mean_i) / scale_i

A linear score (:mod:`sgr.core.logistic`) gives each term one weight for every candidate; when a term means opposite
things in different question shapes — a relation that matches the question well is the answer path of "who directed
X?" and the trap of "what did *the director of* X write?" — its fitted weight goes to about zero and both shapes lose.
One hidden layer lets a term's weight depend on the others (the hop prior, the described bridge, the path's shape).

Fitting is listwise, as :func:`sgr.core.logistic.fit_listwise`: W, c, v maximise Σ_g log Σ_{i ∈ pos(g)} softmax(f)_i
over each group's candidates (a question's paths; Adam, weight decay), for ``seeds`` nets whose hidden layers are then
concatenated with v divided by their number (the mean of their f, one net in the file), and a, b are fitted on every
candidate (Platt scaling) so that s reads as the chance that the candidate is right. Saved as JSON with its feature
names and provenance, like the logistic scorer; a file whose names are not the code's is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sgr.core.logistic import FeatureScorer, check_features, feature_matrix, load_scorer


@dataclass
class MLPScorer(FeatureScorer):
    """σ(a·v·tanh(W z + c) + b) over the features ``names`` (module docstring)."""

    names: tuple[str, ...]
    w: np.ndarray  # (hidden, features)
    c: np.ndarray  # (hidden,)
    v: np.ndarray  # (hidden,)
    a: float
    b: float
    mean: np.ndarray
    scale: np.ndarray
    provenance: dict[str, Any] = field(default_factory=dict)

    def logits(self, x: np.ndarray) -> np.ndarray:
        """a·f(z) + b for the rows of ``x`` (raw feature values, in :attr:`names` order)."""
        z = (x - self.mean) / self.scale
        return self.a * (np.tanh(z @ self.w.T + self.c) @ self.v) + self.b

    def score(self, values: Mapping[str, float]) -> float:
        return float(1.0 / (1.0 + np.exp(-self.logits(self.vector(values)[None, :])[0])))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "mlp", "features": list(self.names), "w": self.w.round(6).tolist(),
                "c": self.c.round(6).tolist(), "v": self.v.round(6).tolist(), "a": round(self.a, 6),
                "b": round(self.b, 6), "mean": self.mean.round(6).tolist(), "scale": self.scale.round(6).tolist(),
                "provenance": self.provenance}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], names: Sequence[str] | None = None) -> "MLPScorer":
        """Read a saved scorer; with ``names``, its features must be exactly those (ValueError otherwise)."""
        check_features(d, names)
        if d.get("kind") != "mlp":
            raise ValueError("not a one-hidden-layer ranker (no \"kind\": \"mlp\"): refit")
        arr = lambda k: np.asarray(d[k], dtype=np.float64)  # noqa: E731
        return cls(tuple(d["features"]), arr("w"), arr("c"), arr("v"), float(d["a"]), float(d["b"]), arr("mean"),
                   arr("scale"), dict(d.get("provenance") or {}))


def fit_listwise_mlp(names: Sequence[str], groups: Sequence[Sequence[Mapping[str, float]]],
                     labels: Sequence[Sequence[int]], *, hidden: int = 32, weight_decay: float = 1e-3,
                     epochs: int = 30, seeds: Sequence[int] = (0, 1, 2), lr: float = 3e-3, batch: int = 32,
                     provenance: dict[str, Any] | None = None) -> MLPScorer:
    """Fit an :class:`MLPScorer` that ranks within groups (module docstring); groups without a right candidate, or
    with only right ones, teach the ranking nothing and only enter the Platt scaling."""
    import torch
    from sklearn.linear_model import LogisticRegression

    names = tuple(names)
    mats = [feature_matrix(names, g) for g in groups]
    x_all = np.concatenate(mats) if mats else np.zeros((0, len(names)))
    mean, scale = x_all.mean(axis=0), x_all.std(axis=0)
    scale[scale < 1e-9] = 1.0
    kept = [(m, ys) for m, ys in zip(mats, labels) if any(ys) and not all(ys)]
    width = max((len(m) for m, _ in kept), default=1)  # groups padded to one width, masked out of the softmax
    z_all = torch.zeros((len(kept), width, len(names)))
    real = torch.zeros((len(kept), width), dtype=torch.bool)
    right = torch.zeros((len(kept), width), dtype=torch.bool)
    for i, (m, ys) in enumerate(kept):
        z_all[i, :len(m)] = torch.tensor((m - mean) / scale, dtype=torch.float32)
        real[i, :len(m)] = True
        right[i, :len(m)] = torch.tensor(ys, dtype=torch.bool)
    ws, cs, vs = [], [], []
    for seed in seeds:
        torch.manual_seed(seed)
        net = torch.nn.Sequential(torch.nn.Linear(len(names), hidden), torch.nn.Tanh(),
                                  torch.nn.Linear(hidden, 1, bias=False))
        opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
        order = np.random.default_rng(seed)
        for _ in range(epochs if kept else 0):
            perm = torch.as_tensor(order.permutation(len(kept)))
            for i in range(0, len(perm), batch):
                idx = perm[i:i + batch]
                s = net(z_all[idx]).squeeze(-1)
                every = torch.logsumexp(s.masked_fill(~real[idx], -1e9), dim=1)
                good = torch.logsumexp(s.masked_fill(~right[idx], -1e9), dim=1)
                opt.zero_grad()
                (every - good).mean().backward()
                opt.step()
        ws.append(net[0].weight.detach().double().numpy())
        cs.append(net[0].bias.detach().double().numpy())
        vs.append(net[2].weight.detach().double().numpy()[0] / len(seeds))
    scorer = MLPScorer(names, np.concatenate(ws), np.concatenate(cs), np.concatenate(vs), 1.0, 0.0, mean, scale,
                       dict(provenance or {}))
    raw = scorer.logits(x_all)
    y = np.asarray([v for ys in labels for v in ys])
    platt = LogisticRegression(C=1e6, max_iter=1000).fit(raw.reshape(-1, 1), y)
    scorer.a, scorer.b = float(platt.coef_[0][0]), float(platt.intercept_[0])
    return scorer


def load_mlp(path: str, names: tuple[str, ...]) -> MLPScorer | None:
    """The scorer saved at ``path`` with exactly the features ``names``; None when there is no file."""
    return load_scorer(path, names, MLPScorer)
