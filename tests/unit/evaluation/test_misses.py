"""Why a run misses (sgr/evaluation/misses.py, in every run's metrics.json and report.md) and the benchmark that adds
the temporal cues and the many-gold cost (bench/sgr_misses.py). The records have the shape ``sgr eval`` writes to
predictions.jsonl."""

import importlib.util
import json
from pathlib import Path

from sgr.evaluation.misses import classify, summarize_misses, tied_hit
from sgr.evaluation.report import build_metrics, markdown_report

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("sgr_misses", ROOT / "bench" / "sgr_misses.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def rec(question, gold, answers, ends=(), f1=0.0, topic="Ohio"):
    return {"id": question, "question": question, "gold": gold, "topic_entities": [topic],
            "answers": [{"text": t, "score": s} for t, s in answers],
            "paths": [{"nodes": [topic, e], "names": [topic, e]} for e in ends], "scores": {"f1": f1}}


def test_each_miss_goes_to_the_first_class_that_holds():
    assert classify(rec("q", ["A"], [("A", 1.0), ("B", 1.0)])) is None  # a hit
    assert classify(rec("q", [], [("A", 1.0)])) is None  # no gold: not scored
    assert classify(rec("q", ["A"], [])) == ("no_answer", False)
    assert classify(rec("q", ["a "], [("B", 1.0), ("A", 1.0)])) == ("ranked", True)  # normalised, tied
    assert classify(rec("q", ["A"], [("B", 1.0), ("A", 0.5)], ends=["A"])) == ("ranked", False)
    assert classify(rec("q", ["A"], [("B", 1.0)], ends=["C", "A"])) == ("path_end", False)
    assert classify(rec("q", ["A"], [("B", 1.0)], ends=["C"])) == ("absent", False)


def test_ties_that_decided_hits():
    assert tied_hit(rec("q", ["A"], [("A", 1.0), ("B", 1.0)]))
    assert not tied_hit(rec("q", ["A", "B"], [("A", 1.0), ("B", 1.0)]))  # tied with gold only
    assert not tied_hit(rec("q", ["A"], [("A", 1.0), ("B", 0.5)]))
    assert not tied_hit(rec("q", ["A"], [("B", 1.0), ("A", 1.0)]))  # a miss


ROWS = [rec("who is the governor of ohio now?", ["A"], [("B", 1.0), ("A", 1.0)]),
        rec("q2", ["A"], [("A", 1.0), ("C", 1.0)], f1=0.5),
        rec("q3", [f"G{i}" for i in range(51)], [("G0", 1.0)], f1=0.04),
        rec("q4", ["A"], [("B", 1.0)], ends=["D"]),
        rec("q5", [], [("B", 1.0)])]


def test_the_summary_counts_scored_questions_and_keeps_examples():
    ms = summarize_misses(ROWS, n_examples=1)
    assert (ms.n, ms.misses, ms.ranked, ms.tied, ms.absent, ms.path_end, ms.tied_hits) == (4, 2, 1, 1, 1, 0, 1)
    assert ms.examples["ranked"] == [{"id": ROWS[0]["id"], "question": ROWS[0]["question"], "gold": ["A"],
                                      "top": ["B", "A"], "tied": True}]
    m = build_metrics([{**r, "usage": {}} for r in ROWS], {"dataset": {"selected": 5}})
    assert m["misses"]["misses"] == 2 and m["misses"]["examples"]["absent"][0]["question"] == "q4"
    md = markdown_report(m, plots=False)
    assert "## Misses" in md and "| ranked | 1 (1 tied) |" in md and "q4 → B (gold: A)" in md


def test_the_benchmark_adds_temporal_cues_and_the_many_gold_cost(tmp_path):
    assert bench.temporal(rec("who is the governor of ohio now?", ["A"], []))
    assert bench.temporal(rec("who was the governor of ohio in 1990?", ["A"], []))
    assert not bench.temporal(rec("who is the governor of ohio?", ["A"], []))
    assert not bench.temporal(rec("what did the 1990 ohio vote decide?", ["A"], [], topic="1990 ohio vote"))
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    summary, examples = bench.analyse(tmp_path, n_examples=1)
    assert (summary["questions"], summary["misses"], summary["temporal"], summary["many_gold"]) == (4, 2, 1, 1)
    assert summary["many_gold_f1_cost"] == round(0.96 / 4, 4) and examples["absent"][0]["question"] == "q4"
