"""bench/confidence.py's fitting choices: folds keep a CWQ base question together, C is chosen by grouped
cross-validation on dev, and the compact signal set is one the calibrator reads."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

from sgr.methods import confidence as conf

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _bench_confidence():
    sys.path.insert(0, str(BENCH))  # the script imports its neighbour `record`
    spec = importlib.util.spec_from_file_location("bench_confidence", BENCH / "confidence.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rows(n=240, seed=0, noise=0):
    """CWQ-like rows (two questions per base) and MetaQA-like rows whose gq_top decides correctness, with ``noise``
    uninformative signals beside it."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        g = float(rng.uniform(0, 1))
        sig = {"answered": 1.0, "gq_top": g, **{s: float(rng.normal()) for s in conf.SIGNALS[5:5 + noise]}}
        qid = f"WebQTrn-{i // 2}_{i % 2}" if i < n // 2 else f"1hop_dev:{i}"
        rows.append((qid, sig, float(rng.uniform(0, 1) < g)))
    return rows


def test_folds_keep_a_base_question_together():
    bc = _bench_confidence()
    rows = _rows()
    fold = bc.folds(rows, 5, seed=0)
    by_base: dict[str, set[int]] = {}
    for (qid, _, _), f in zip(rows, fold):
        by_base.setdefault(bc.group(qid), set()).add(f)
    assert all(len(f) == 1 for f in by_base.values()) and set(fold) == set(range(5))


def test_cv_auroc_sees_the_informative_signal():
    bc = _bench_confidence()
    rows = _rows()
    assert bc.cv_auroc(rows, ("answered", "gq_top"), 1.0) > 0.7
    assert abs(bc.cv_auroc(rows, ("answered", conf.SIGNALS[5]), 1.0) - 0.5) < 0.15  # absent: 0 everywhere


def test_choose_c_picks_from_the_grid_and_the_fit_stays_monotone():
    bc = _bench_confidence()
    rows = _rows(noise=8)
    signals = ("answered", "gq_top") + conf.SIGNALS[5:13]
    c, tried = bc.choose_c(rows, signals)
    assert c in bc.C_GRID and set(tried) == {str(g) for g in bc.C_GRID}
    assert tried[str(c)] == max(tried.values())
    cal = bc.fit(rows, 0.95, {}, signals, c)
    ps = [cal.probability({"answered": 1.0, "gq_top": g}) for g in np.linspace(0, 1, 11)]
    assert all(b >= a - 1e-12 for a, b in zip(ps, ps[1:])) and ps[-1] > ps[0]
    assert conf.Calibrator.from_dict(cal.to_dict()).scorer.names == signals


def test_signal_sets_agree():
    assert set(conf.COMPACT_SIGNALS) <= set(conf.SIGNALS)
    reasoned = {s for xs in conf.REASON_SIGNALS.values() for s in xs}
    assert reasoned <= set(conf.SIGNALS)
    from sgr.methods.sgr.trace import EVIDENCE_SIGNALS

    # a reason is named from its signals (the graph's naming says nothing against an answer; an unmet entity is
    # named as a fact, read by no calibrator)
    assert set(EVIDENCE_SIGNALS) - {"dotted_names", "ev_unjoined"} <= reasoned


def test_dataset_of_tells_the_dev_sets_apart_and_cv_ranks_within_each():
    bc = _bench_confidence()
    assert [bc.dataset_of(q) for q in ("WebQTrn-12_3a", "WebQTrn-12", "2hop_dev:4")] == ["cwq", "webqsp-train",
                                                                                          "metaqa"]
    assert bc.group("WebQTrn-12") == bc.group("WebQTrn-12_3a")  # a WebQSP question and CWQ's built on it: one unit
    rows = _rows()
    # WebQSP train rows right more often at every gq_top: across sets the signal would mix, within each it ranks
    rng = np.random.default_rng(1)
    rows += [(f"WebQTrn-{500 + i}", {"answered": 1.0, "gq_top": g}, float(rng.uniform(0, 1) < 0.5 + g / 2))
             for i, g in enumerate(rng.uniform(0, 1, 120))]
    assert bc.cv_auroc(rows, ("answered", "gq_top"), 1.0) > 0.65


def test_the_webqsp_unanswerable_store_holds_no_triple_of_the_pools_answers(tmp_path):
    bc = _bench_confidence()
    pool = [{"id": "WebQTrn-1", "question": "what do people speak in singapore", "q_entity": ["Singapore"],
             "answer": ["English Language"], "graph": []},
            {"id": "WebQTrn-2", "question": "where is bob marley grave", "q_entity": ["Bob Marley"],
             "answer": ["Bob Marley Mausoleum"], "graph": []},
            {"id": "WebQTrn-3", "question": "who did hera marry", "q_entity": ["Hera"], "answer": ["Zeus"],
             "graph": []}]
    answerable = tmp_path / "answerable.jsonl"
    answerable.write_text("".join(json.dumps(r) + "\n" for r in pool))
    questions, graphs = bc.webqsp_unanswerable_files(answerable, 2, tmp_path / "out")
    assert [json.loads(line)["id"] for line in open(questions)] == ["WebQTrn-1", "WebQTrn-2"]
    kept = zeus = 0
    for g in graphs:
        for line in open(g):
            for h, _, t in json.loads(line)["graph"]:
                assert not {h, t} & {"English Language", "Bob Marley Mausoleum"}
                kept += 1
                zeus += "Zeus" in (h, t)  # the third question's answer is not in the pool: kept
    assert kept > 30000 and zeus > 0
