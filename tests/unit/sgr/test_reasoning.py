"""SGR's validation and voting formulas (sgr/methods/sgr/reasoning.py, SGR eqs. 12 and 17); decide() is in
test_decision.py."""

import math

import pytest

from sgr.methods.sgr.reasoning import consistency, delta_decides, reliability, validation_score


def test_validation_and_reliability_are_convex_mixtures():
    assert validation_score(0.8, 0.5, 0.3) == pytest.approx(0.3 * 0.8 + 0.7 * 0.5)
    assert reliability(0.2, 1.0, 0.25) == pytest.approx(0.25 * 0.2 + 0.75 * 1.0)


def test_consistency_is_one_at_the_best_path_and_decays_with_the_gap():
    assert consistency(2.0, 2.0, 0.1) == 1.0
    assert consistency(1.9, 2.0, 0.1) == pytest.approx(math.exp(-1.0))
    assert consistency(0.0, 2.0, 0.1) < 1e-8


def test_delta_only_matters_inside_the_band():
    # v = 0.3 δ + 0.7 γ ≥ 0.7: decided by γ alone when γ ≥ 1 or 0.3 + 0.7 γ < 0.7
    assert not delta_decides(1.0, 0.3, 0.7)
    assert not delta_decides(0.5, 0.3, 0.7)
    assert delta_decides(0.8, 0.3, 0.7)
