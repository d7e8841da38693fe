"""Calibrated confidence and abstention without a server (sgr/methods/confidence.py, the calibration metrics)."""

import json

import numpy as np
import pytest

from sgr.core.types import Answer, Prediction, ReasoningPath
from sgr.evaluation.metrics.calibration import auroc, calibration_summary, ece, hits1_at_coverage
from sgr.methods import confidence as conf


def _data(n=600, seed=0):
    """Signals whose G_q score decides correctness, with noise: P(correct) rises with gq_top."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for _ in range(n):
        g = float(rng.uniform(0, 1))
        rows.append({"answered": 1.0, "gq_top": g, "vote_margin": float(rng.uniform(0, 1)), "unchecked": 0.0})
        labels.append(int(rng.uniform(0, 1) < g))
    return rows, labels


def test_calibrator_is_monotone_in_its_evidence_and_round_trips():
    rows, y = _data()
    cal = conf.fit_calibrator(rows, y, [i % 5 for i in range(len(rows))], signals=("gq_top", "vote_margin"))
    ps = [cal.probability({"gq_top": g, "vote_margin": 0.5}) for g in np.linspace(0, 1, 21)]
    assert all(b >= a - 1e-12 for a, b in zip(ps, ps[1:])) and ps[-1] - ps[0] > 0.5  # monotone, and it moves
    again = conf.Calibrator.from_dict(cal.to_dict())
    assert again.probability({"gq_top": 0.7}) == pytest.approx(cal.probability({"gq_top": 0.7}))
    assert 0.0 < cal.threshold < 1.0
    kept = np.mean([cal.probability(r) >= cal.threshold for r, lab in zip(rows, y) if lab])
    assert kept >= 0.94  # the threshold keeps the stated share of correct answers (0.95) on the rows it was fitted on
    # only the rows ``iso`` marks set the map and the threshold: fewer correct answers there lower it
    low = conf.fit_calibrator(rows, y, [i % 5 for i in range(len(rows))], iso=[r["gq_top"] < 0.5 for r in rows],
                              signals=("gq_top", "vote_margin"))
    assert low.threshold < cal.threshold
    with pytest.raises(ValueError, match="unknown signals"):
        conf.Calibrator.from_dict(cal.to_dict() | {"features": ["gq_top", "made_up"]})


def test_boosted_trees_read_back_score_as_scikit_learn_does():
    from sklearn.ensemble import HistGradientBoostingClassifier

    from sgr.core.trees import BoostedTrees

    rows, y = _data()
    names = ("gq_top", "vote_margin")
    params = {"max_depth": 3, "max_iter": 30, "learning_rate": 0.1, "min_samples_leaf": 20}
    trees = BoostedTrees.fit(names, rows, y, params=params)
    again = BoostedTrees.from_dict(json.loads(json.dumps(trees.to_dict())), names)
    x = np.asarray([[r[n] for n in names] for r in rows])
    clf = HistGradientBoostingClassifier(**params, early_stopping=False, random_state=0).fit(x, y)
    assert np.allclose([again.score(r) for r in rows], clf.predict_proba(x)[:, 1], atol=1e-12)
    # a feature's part is read by occlusion: at its mean it has none, and the parts explain a high and a low score
    assert trees.contributions({"gq_top": float(trees.mean[0]), "vote_margin": float(trees.mean[1])}) == {
        "gq_top": 0.0, "vote_margin": 0.0}
    assert trees.contributions({"gq_top": 0.02, "vote_margin": 0.5})["gq_top"] < 0
    assert trees.contributions({"gq_top": 0.98, "vote_margin": 0.5})["gq_top"] > 0
    with pytest.raises(ValueError, match="refit"):
        BoostedTrees.from_dict(trees.to_dict(), ("gq_top",))


def test_a_calibrator_of_boosted_trees_rises_with_its_evidence_and_round_trips():
    rows, y = _data(n=1200)
    signals = ("gq_top", "vote_margin")
    cal = conf.fit_calibrator(rows, y, [i % 5 for i in range(len(rows))], signals=signals, trees=conf.TREE_PARAMS)
    assert cal.to_dict()["kind"] == "boosted_trees"
    # the isotonic map is monotone in the trees' score; the trees need not be in each signal, but the evidence
    # that decides correctness moves the confidence from low to high
    assert all(b >= a for a, b in zip(cal.iso_y, cal.iso_y[1:]))
    ps = [cal.probability({"gq_top": g, "vote_margin": 0.5}) for g in np.linspace(0.05, 0.95, 10)]
    assert ps[-1] - ps[0] > 0.5 and np.corrcoef(ps, np.arange(10))[0, 1] > 0.9
    again = conf.Calibrator.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert again.probability(rows[0]) == pytest.approx(cal.probability(rows[0]))
    assert again.scorer.names == signals and 0.0 < cal.threshold < 1.0


def _pred(confidence, answers=("Japanese yen",), threshold=0.4, error=None):
    p = Prediction(question_id="q", method="sgr", error=error,
                   answers=[Answer(text=a, id=a, score=1.0, paths=[ReasoningPath(nodes=["Japan", a],
                                                                                 relations=["r"])])
                            for a in answers])
    p.confidence = confidence
    p.extra["confidence"] = {"calibrated_for": None, "threshold": threshold, "signals": {}}
    return p


def test_abstention_below_the_threshold_and_min_confidence_zero_never_abstains():
    assert conf.abstention(_pred(0.9)) == (False, [])
    abstain, reasons = conf.abstention(_pred(0.1))
    assert abstain and reasons  # below the calibrator's threshold, with a reason
    assert conf.abstention(_pred(0.1), min_confidence=0.0) == (False, [])  # today's behaviour: always answer
    assert conf.abstention(_pred(None))[0] is False  # uncalibrated: nothing abstains on an unknown number
    nothing = conf.abstention(_pred(0.0, answers=(), error="no graph node matches the question's entities"))
    assert nothing == (True, [conf.REASONS["no_entity"]])
    unmet = _pred(0.1)
    unmet.extra["signals"] = {"ev_unjoined": 1.0}  # two entities named, the answer meets one
    assert conf.REASONS["unjoined"] in conf.abstention(unmet)[1]
    assert conf.REASONS["unjoined"] not in conf.abstention(_pred(0.1))[1]


def test_generic_signals_read_the_answers():
    p = _pred(None, answers=("a", "b"))
    p.answers[0].score, p.answers[1].score = 2.0, 1.0
    s = conf.generic_signals(p)
    assert s["answered"] == 1.0 and s["score_margin"] == pytest.approx(0.5) and s["path_length"] == 1.0


def test_calibration_metrics():
    perfect = [(0.9, 1.0), (0.8, 1.0), (0.2, 0.0), (0.1, 0.0)]
    assert auroc(perfect) == 1.0 and auroc([(0.5, 1.0), (0.5, 0.0)]) == 0.5 and auroc([(0.5, 1.0)]) is None
    assert hits1_at_coverage(perfect, 0.5) == 1.0 and hits1_at_coverage(perfect, 1.0) == 0.5
    calibrated = [(0.75, 1.0)] * 3 + [(0.75, 0.0)]
    assert ece(calibrated) == pytest.approx(0.0) and ece([(0.9, 0.0)]) == pytest.approx(0.9)
    summary = calibration_summary(perfect)
    assert summary.n == 4 and set(summary.hits1_at_coverage) == {"100%", "80%", "50%"}
