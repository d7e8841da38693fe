"""The exemplar pool's nearest training questions: a cosine never above 1, since it is a retrieved plan's δ and ρ."""

from __future__ import annotations

from sgr.methods.sgr.exemplars import Exemplar, ExemplarPool


def test_a_question_alike_once_entities_are_masked_has_cosine_one_at_most() -> None:
    pool = ExemplarPool([Exemplar("who owns the part of beta?", ["a.b.c"], "beta"),
                         Exemplar("who directed the godfather?", ["film.film.directed_by"], "the godfather")])
    (best, cos), (_, other) = pool.nearest("who owns the part of alpha?", k=2, entity="Alpha")
    assert best.entity == "beta"
    assert 0.999 <= cos <= 1.0, cos  # the same text after masking: float32 rounding gave 1.0000001 before the clip
    assert -1.0 <= other < cos
