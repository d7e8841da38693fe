"""Answer metrics on hand-made cases (no Neo4j)."""

from __future__ import annotations

import math

import pytest

from sgr.evaluation.cost import cost_summary, percentile
from sgr.evaluation.metrics.breakdown import breakdown, rate_by
from sgr.evaluation.metrics.exact_set import exact_set
from sgr.evaluation.metrics.f1 import f1, set_scores
from sgr.evaluation.metrics.hit import hit, occurs_in
from sgr.evaluation.metrics.hits1_strict import hits1_strict
from sgr.core.text import normalize, normalize_set
from sgr.evaluation.metrics.scores import QuestionScores, score_answers, summarize


@pytest.mark.parametrize("raw, expected", [
    ("The Godfather", "godfather"),
    ("  the   GODFATHER!! ", "godfather"),
    ("An American in Paris", "american in paris"),
    ("U.S.A.", "usa"),  # punctuation deleted, as in the SQuAD/RoG scripts
    ("Jay-Z", "jayz"),
    ("Jamaican English", "jamaican english"),
    ("Theatre", "theatre"),  # "the" inside a word stays
    ("Amélie", "amélie"),
    ("ｆｕｌｌ width", "full width"),  # NFKC folds full-width letters
    ("The", "the"),  # normalises to nothing: keeps its own lower-cased form
    ("A.", "a"),
    ("!!", "!!"),
    ("", ""),
    (None, ""),
])
def test_normalize(raw, expected):
    assert normalize(raw) == expected


def test_normalize_set_drops_empty_and_duplicates():
    assert normalize_set(["The Wall", "wall", "", None, "Wall."]) == {"wall"}


def test_hits1_strict_only_looks_at_the_top_answer():
    gold = ["Sam Mendes", "Ken Kwapis"]
    assert hits1_strict(["sam mendes", "X"], gold) == 1.0
    assert hits1_strict(["The Sam Mendes."], gold) == 1.0  # article + punctuation normalised away
    assert hits1_strict(["X", "Sam Mendes"], gold) == 0.0  # right answer only at rank 2
    assert hits1_strict([], gold) == 0.0
    assert hits1_strict(["Sam Mendes Jr"], gold) == 0.0  # strict: no containment
    assert hits1_strict(["x"], []) == 0.0


def test_hit_is_lenient_about_rank_and_containment():
    gold = ["Jamaican English"]
    assert hit(["Patois", "Jamaican English"], gold) == 1.0  # any rank
    assert hit(["jamaican english language"], gold) == 1.0  # gold occurs inside an answer
    assert hit(["english"], gold) == 0.0  # an answer inside the gold does not count
    assert hit(["business"], ["US"]) == 0.0  # whole words only
    assert hit(["the U.S. army"], ["US"]) == 1.0
    assert hit(["the US army"], ["USA"]) == 0.0
    assert hit([], gold) == 0.0
    assert hit(["x"], []) == 0.0
    assert occurs_in("a b", "c a b d") and not occurs_in("a b", "ca b")


def test_precision_recall_f1_over_sets():
    gold = ["A", "B", "C", "D"]
    s = set_scores(["a", "b", "x"], gold)
    assert s.precision == pytest.approx(2 / 3)
    assert s.recall == pytest.approx(2 / 4)
    assert s.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert f1(["a", "A", "a."], ["a"]) == 1.0  # duplicates after normalisation count once
    assert set_scores([], gold) == set_scores(["x"], gold) == set_scores(["a"], [])
    assert set_scores(["x"], gold).f1 == 0.0


def test_exact_set():
    assert exact_set(["b", "A"], ["a", "B"]) == 1.0
    assert exact_set(["a"], ["a", "b"]) == 0.0
    assert exact_set(["a", "b", "c"], ["a", "b"]) == 0.0
    assert exact_set([], []) == 0.0


def test_scores_and_summary_are_means_over_questions():
    s1 = score_answers(["a", "z"], ["a", "b"])  # strict 1, hit 1, P .5, R .5
    s2 = score_answers(["z"], ["a"])  # all 0
    assert s1 == QuestionScores(1.0, 1.0, 0.5, 0.5, 0.5, 0.0)
    m = summarize([s1, s2])
    assert m.n == 2 and m.hits1_strict == 0.5 and m.precision == 0.25 and m.exact_set == 0.0
    assert summarize([]).n == 0 and summarize([]).f1 == 0.0


def test_breakdown_groups_and_orders_keys():
    one = QuestionScores(1, 1, 1, 1, 1, 1)
    zero = QuestionScores(0, 0, 0, 0, 0, 0)
    b = breakdown([(2, one), (10, zero), (2, zero), (None, one), (1, one)])
    assert list(b) == ["1", "2", "10"]  # numeric order, None left out
    assert b["2"].n == 2 and b["2"].hits1_strict == 0.5 and b["10"].hit == 0.0
    assert breakdown([(None, one)]) == {}
    assert rate_by([("x", True), ("x", False), ("y", True), (None, False)]) == {"x": 0.5, "y": 1.0}


def test_cost_summary():
    usages = [{"total_seconds": t, "neo4j_queries": q, "neo4j_seconds": t / 2, "llm_calls": c,
               "prompt_tokens": 100 * c, "completion_tokens": 10 * c, "stage_seconds": {"walk": t / 4}}
              for t, q, c in [(0.01, 2, 0), (0.02, 2, 1), (0.03, 4, 1), (1.0, 6, 3)]]
    c = cost_summary(usages, wall_seconds=2.0, answered_in_sessions=4)
    assert c.n == 4
    assert c.latency_ms_p50 == pytest.approx(25.0)
    assert c.latency_ms_max == pytest.approx(1000.0)
    assert c.latency_ms_p50 < c.latency_ms_p95 < c.latency_ms_max
    assert c.questions_per_s == 2.0
    assert c.neo4j_queries_total == 14 and c.neo4j_queries_median == 3.0
    assert c.llm_calls_total == 5 and c.llm_calls_median == 1.0
    assert c.prompt_tokens_total == 500 and c.prompt_tokens_median == 100.0
    assert c.completion_tokens_total == 50
    assert c.stage_ms_p50["walk"] == pytest.approx(6.25)
    assert cost_summary([]).n == 0
    assert percentile([], 50) == 0.0 and math.isclose(percentile([1, 2, 3, 4], 50), 2.5)
