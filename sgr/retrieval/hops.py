"""How far the answer lies from the topic entity: P(hops | question), learned on dev questions.

A compositional question names one entity and describes another ("where did *the composer of* Can I Live II grow
up?"): the answer is one entity hop beyond the entity a one-hop reading reaches. Which reading is meant shows in the
phrasing, not in the relation names, so G_q's length term (:mod:`sgr.methods.sgr.subgraph`) and the expansion depth
read this distribution instead of a fixed "one hop is likelier" penalty.

The model is multinomial logistic regression (scikit-learn) over the sentence embedding of the question with its
topic entity masked (``X``), classes :data:`HOP_CLASSES` (entity hops, CVT nodes not counted; 3 = three or more).
It is trained on dev data only — MetaQA dev (hops from the file), WebQSP train paths (hops from the gold relation
path, CVT steps from the graph), CWQ dev questions built on WebQSP *train* questions (hops of the shortest walk from
the topic to a gold answer in the graph) — by ``bench/hops.py``, which writes the shipped weights
(``sgr/assets/hop_model.json``, with their provenance) and ``bench/results/hops.json``.

    P(h | q) = softmax(W·e(q) + b)_h,   e(q) = the L2-normalised MiniLM embedding of the masked question
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from sgr.core.logistic import asset_file

HOP_CLASSES = (1, 2, 3)
ASSET = "hop_model.json"


def hop_class(hops: int) -> int:
    """The class of an entity-hop count (at least 1, at most the last class)."""
    return min(max(1, int(hops)), HOP_CLASSES[-1])


@dataclass
class HopModel:
    """Multinomial logistic regression over question embeddings (module docstring)."""

    encoder: str
    classes: tuple[int, ...]
    coef: np.ndarray  # (classes, dim)
    intercept: np.ndarray  # (classes,)
    provenance: dict[str, Any] = field(default_factory=dict)

    def probabilities(self, questions: Sequence[str]) -> np.ndarray:
        """P(h | q) for each (masked) question: an (n, classes) array whose rows sum to 1."""
        from sgr.llm.encoders import embed_texts

        if not questions:
            return np.zeros((0, len(self.classes)), dtype=np.float32)
        logits = embed_texts(list(questions), self.encoder) @ self.coef.T + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def distribution(self, question: str) -> dict[int, float]:
        """P(h | q) of one question as ``{hops: probability}``."""
        return {c: float(p) for c, p in zip(self.classes, self.probabilities([question])[0])}

    def to_dict(self) -> dict[str, Any]:
        return {"encoder": self.encoder, "classes": list(self.classes), "coef": self.coef.round(6).tolist(),
                "intercept": self.intercept.round(6).tolist(), "provenance": self.provenance}

    def save(self, path: Path | str) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_dict()) + "\n", encoding="utf-8")
        return path

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "HopModel":
        return cls(str(d["encoder"]), tuple(int(c) for c in d["classes"]), np.asarray(d["coef"], dtype=np.float32),
                   np.asarray(d["intercept"], dtype=np.float32), dict(d.get("provenance") or {}))


def asset_path() -> Path:
    """Where the shipped hop model lives (package data)."""
    return asset_file(ASSET)


@lru_cache(maxsize=4)
def load_hop_model(path: str | None = None) -> HopModel | None:
    """The hop model at ``path`` (default: the shipped one); None when there is none (G_q then uses the fixed
    length penalty)."""
    p = Path(path) if path else asset_path()
    if not p.is_file():
        return None
    return HopModel.from_dict(json.loads(p.read_text(encoding="utf-8")))


def train_hop_model(questions: Sequence[str], hops: Sequence[int], *, encoder: str = "minilm", c: float = 1.0,
                    sample_weight: Sequence[float] | None = None,
                    provenance: dict[str, Any] | None = None) -> HopModel:
    """Fit the model on (masked question, entity hops) pairs (hops above the last class count as the last)."""
    from sklearn.linear_model import LogisticRegression

    from sgr.llm.encoders import embed_texts

    y = np.asarray([hop_class(h) for h in hops])
    x = embed_texts(list(questions), encoder)
    clf = LogisticRegression(C=c, max_iter=2000)
    clf.fit(x, y, sample_weight=None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64))
    coef = np.zeros((len(HOP_CLASSES), x.shape[1]), dtype=np.float32)
    intercept = np.full(len(HOP_CLASSES), -30.0, dtype=np.float32)  # a class absent from the data: never predicted
    for i, cls in enumerate(clf.classes_):
        j = HOP_CLASSES.index(int(cls))
        if len(clf.classes_) == 2:  # binary: sklearn keeps one row (the second class against the first)
            coef[j] = clf.coef_[0] * (1 if i == 1 else 0)
            intercept[j] = clf.intercept_[0] * (1 if i == 1 else 0)
        else:
            coef[j], intercept[j] = clf.coef_[i], clf.intercept_[i]
    return HopModel(encoder, HOP_CLASSES, coef, intercept, dict(provenance or {}))


def length_penalty(hops: int, distribution: dict[int, float] | None) -> float:
    """The length term's penalty units for a path of ``hops`` entity hops: without a distribution, one unit per hop
    beyond the first; with P(h | q), the probability the likeliest hop count has over this one (0 for the likeliest
    count, at most 1)."""
    if not distribution:
        return float(max(0, hops - 1))
    return max(distribution.values()) - distribution.get(hop_class(hops), 0.0)
