"""SGR's validation and voting formulas (sgr/methods/sgr/reasoning.py, SGR eqs. 12–13 and 17–18)."""

import math

import pytest

from sgr.methods.sgr.reasoning import (Candidate, aggregate_votes, consistency, delta_decides, reliability,
                           select_answers, validate_candidates, validation_score)
from sgr.core.types import ReasoningPath


def path(answer, rels=("r",), score=1.0):
    return ReasoningPath(nodes=["s", answer], relations=list(rels), names=["S", answer.upper()], score=score)


def test_validation_and_reliability_are_convex_mixtures():
    assert validation_score(0.8, 0.5, 0.3) == pytest.approx(0.3 * 0.8 + 0.7 * 0.5)
    assert reliability(0.2, 1.0, 0.25) == pytest.approx(0.25 * 0.2 + 0.75 * 1.0)


def test_consistency_is_one_at_the_best_path_and_decays_with_the_gap():
    assert consistency(2.0, 2.0, 0.1) == 1.0
    assert consistency(1.9, 2.0, 0.1) == pytest.approx(math.exp(-1.0))
    assert consistency(0.0, 2.0, 0.1) < 1e-8


def test_threshold_keeps_only_answers_with_v_at_least_epsilon():
    cands = [Candidate("a", "A", gamma=1.0, delta=0.0), Candidate("b", "B", gamma=0.5, delta=1.0),
             Candidate("c", "C", gamma=0.0, delta=1.0)]
    valid = validate_candidates(cands, mu=0.3, epsilon=0.65)
    # v: a = 0.7, b = 0.3 + 0.35 = 0.65, c = 0.3
    assert [c.key for c in valid] == ["a", "b"]
    assert not cands[2].valid and cands[2].v == pytest.approx(0.3)


def test_delta_only_matters_inside_the_band():
    # v = 0.3 δ + 0.7 γ ≥ 0.7: decided by γ alone when γ ≥ 1 or 0.3 + 0.7 γ < 0.7
    assert not delta_decides(1.0, 0.3, 0.7)
    assert not delta_decides(0.5, 0.3, 0.7)
    assert delta_decides(0.8, 0.3, 0.7)


def test_votes_sum_reliabilities_of_paths_with_the_same_answer():
    paths = [path("x"), path("y", ("q",)), path("x", ("q",))]
    votes = aggregate_votes(paths, rhos=[0.5, 0.9, 0.1], etas=[1.0, 1.0, 0.2], lam=0.5)
    # ω = [0.75, 0.95, 0.15] → x: 0.9, y: 0.95
    assert [(v.key, round(v.support, 6)) for v in votes] == [("y", 0.95), ("x", 0.9)]
    assert len(votes[1].paths) == 2
    assert [v.key for v in select_answers(votes, ratio=0.96)] == ["y"]
    assert [v.key for v in select_answers(votes, ratio=0.9)] == ["y", "x"]
