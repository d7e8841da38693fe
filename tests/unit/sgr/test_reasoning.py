"""SGR's validation and voting formulas (sgr/methods/sgr/reasoning.py, SGR eqs. 12 and 17); decide() is in
test_decision.py."""

import math

import pytest

from sgr.core.types import ReasoningPath
from sgr.methods.sgr.reasoning import consistency, delta_decides, independent_walks, reliability, validation_score


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


def test_a_walk_on_from_another_walks_answer_does_not_vote_again():
    """"who played Barbara Gordon": the character's gender votes for "Female" once; the walk through an actress's
    performance on to her gender repeats the actress's walk and is left out. A node only such walks reach keeps them
    (MetaQA: the director of the film an actor starred in)."""
    def walk(*nodes: str) -> ReasoningPath:
        return ReasoningPath(nodes=list(nodes), relations=["r"] * (len(nodes) - 1), score=1.0, source="subgraph")

    actress = walk("Barbara Gordon", "cvt1", "Melinda McGraw")
    gender = walk("Barbara Gordon", "Female")
    on_from_actress = walk("Barbara Gordon", "cvt1", "Melinda McGraw", "Female")
    through_cvt = walk("Barbara Gordon", "cvt2", "Hannah Gunn")  # "cvt2" is no walk's answer: kept
    assert independent_walks([on_from_actress, actress, gender, through_cvt]) == [actress, gender, through_cvt]
    assert independent_walks([on_from_actress, actress]) == [on_from_actress, actress]  # "Female" has no walk of its own
    film, director = walk("Jack O'Connell", "'71"), walk("Jack O'Connell", "'71", "Yann Demange")
    assert independent_walks([film, director]) == [film, director]
