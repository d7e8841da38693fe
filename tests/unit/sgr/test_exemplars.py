"""The exemplar pool's nearest training questions: a cosine never above 1 and exactly 1 for the same masked text,
since it is a retrieved plan's δ and ρ."""

from __future__ import annotations

import numpy as np
import pytest

from sgr.llm import encoders
from sgr.methods.sgr.exemplars import Exemplar, ExemplarPool


def test_a_question_alike_once_entities_are_masked_has_cosine_one_at_most() -> None:
    pool = ExemplarPool([Exemplar("who owns the part of beta?", ["a.b.c"], "beta"),
                         Exemplar("who directed the godfather?", ["film.film.directed_by"], "the godfather")])
    (best, cos), (_, other) = pool.nearest("who owns the part of alpha?", k=2, entity="Alpha")
    assert best.entity == "beta"
    assert cos == 1.0, cos  # the same text after masking: float32 rounding gave 1.0000001 or 0.99999994 before
    assert -1.0 <= other < cos


def below_one_unit_vector(dim: int = 384) -> np.ndarray:
    """A float32 unit vector whose float32 dot product with itself is below 1 (as a cached embedding can be)."""
    rng = np.random.default_rng(0)
    for _ in range(1000):
        v = rng.standard_normal(dim).astype(np.float32)
        v /= np.linalg.norm(v)
        if float(v @ v) < 1.0:
            return v
    raise AssertionError("no float32 unit vector with v·v < 1 in 1,000 draws")


def test_the_same_masked_text_gives_cosine_exactly_one_whichever_way_float32_rounds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    v = below_one_unit_vector()
    assert float(v @ v) < 1.0  # a plan of δ = this, γ = 0 would fall below ε = μ·1 by float32 rounding alone
    monkeypatch.setattr(encoders, "embed_texts", lambda texts, name="minilm": np.stack([v] * len(texts)))
    pool = ExemplarPool([Exemplar("who directed films for the writer of beta?", ["written_by", "directed_by"], "beta")])
    [(_, cos)] = pool.nearest("who directed films for the writer of alpha?", k=1, entity="alpha")
    assert cos == 1.0, cos
