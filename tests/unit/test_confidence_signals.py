"""bench/confidence_signals.py: a candidate's AUROCs are oriented so that above 0.5 helps, and the paired share counts
the unanswerable questions whose value is worse than on the full store."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _bench_signals():
    sys.path.insert(0, str(BENCH))  # the script imports its neighbours `confidence` and `record`
    spec = importlib.util.spec_from_file_location("bench_confidence_signals", BENCH / "confidence_signals.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _dev(values_correct, values_wrong, values_gone, name):
    row = lambda i, v, y: (f"WebQTrn-{i}_0", {name: v}, y)  # noqa: E731
    cwq = [row(i, v, 1.0) for i, v in enumerate(values_correct)]
    cwq += [row(100 + i, v, 0.0) for i, v in enumerate(values_wrong)]
    gone = [row(200 + i, v, 0.0) for i, v in enumerate(values_gone)]
    return {"cwq": cwq, "metaqa": [("1hop_dev:1", {name: 0.1}, 1.0), ("1hop_dev:2", {name: 0.9}, 0.0)],
            "unanswerable": gone}


def test_an_absence_that_grows_where_the_answer_is_gone_scores_above_chance():
    bs = _bench_signals()
    dev = _dev([0.0, 0.1, 0.2], [0.3, 0.4], [0.5, 0.6, 0.05], "absence_local")
    fig = bs.alone("absence_local", dev, paired=[(0.5, 0.1), (0.6, 0.6), (0.05, 0.2)])
    assert fig["uc"] == pytest.approx(7 / 9, abs=1e-3)  # lower absence is the correct side: 7 of 9 pairs
    assert fig["cwq"] == 1.0 and fig["metaqa"] == 1.0
    assert fig["paired"] == pytest.approx((1 + 0.5 + 0) / 3, abs=1e-3)  # worse, equal (half), better


def test_a_fit_that_grows_with_correctness_is_read_the_other_way():
    bs = _bench_signals()
    dev = _dev([0.9, 0.8], [0.1], [0.2, 0.3], "answer_type_fit")
    fig = bs.alone("answer_type_fit", dev, paired=[(0.2, 0.9)])
    assert fig["uc"] == 1.0 and fig["cwq"] == 1.0 and fig["paired"] == 1.0
    assert set(bs.HIGHER_IS_BETTER) == set(bs.CANDIDATES)
