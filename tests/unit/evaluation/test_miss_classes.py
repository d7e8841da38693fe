"""bench/sgr_misses.py: each strict miss in one class, ties and temporal cues counted (the records are the shape
``sgr eval`` writes to predictions.jsonl)."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("sgr_misses", ROOT / "bench" / "sgr_misses.py")
misses = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(misses)


def rec(question, gold, answers, ends=(), f1=0.0, topic="Ohio"):
    return {"id": question, "question": question, "gold": gold, "topic_entities": [topic],
            "answers": [{"text": t, "score": s} for t, s in answers],
            "paths": [{"nodes": [topic, e], "names": [topic, e]} for e in ends], "scores": {"f1": f1}}


def test_each_miss_goes_to_the_first_class_that_holds():
    assert misses.classify(rec("q", ["A"], [("A", 1.0), ("B", 1.0)])) is None  # a hit
    assert misses.classify(rec("q", [], [("A", 1.0)])) is None  # no gold: not scored
    assert misses.classify(rec("q", ["A"], [])) == ("no_answer", False)
    assert misses.classify(rec("q", ["a "], [("B", 1.0), ("A", 1.0)])) == ("ranked", True)  # normalised, tied
    assert misses.classify(rec("q", ["A"], [("B", 1.0), ("A", 0.5)], ends=["A"])) == ("ranked", False)
    assert misses.classify(rec("q", ["A"], [("B", 1.0)], ends=["C", "A"])) == ("path_end", False)
    assert misses.classify(rec("q", ["A"], [("B", 1.0)], ends=["C"])) == ("absent", False)


def test_ties_on_hits_and_temporal_cues():
    assert misses.tied_hit(rec("q", ["A"], [("A", 1.0), ("B", 1.0)]))
    assert not misses.tied_hit(rec("q", ["A", "B"], [("A", 1.0), ("B", 1.0)]))  # tied with gold only
    assert not misses.tied_hit(rec("q", ["A"], [("A", 1.0), ("B", 0.5)]))
    assert misses.temporal(rec("who is the governor of ohio now?", ["A"], []))
    assert misses.temporal(rec("who was the governor of ohio in 1990?", ["A"], []))
    assert not misses.temporal(rec("who is the governor of ohio?", ["A"], []))
    assert not misses.temporal(rec("what did the 1990 ohio vote decide?", ["A"], [], topic="1990 ohio vote"))


def test_a_run_folder_is_summarised_with_examples(tmp_path):
    rows = [rec("who is the governor of ohio now?", ["A"], [("B", 1.0), ("A", 1.0)]),
            rec("q2", ["A"], [("A", 1.0), ("C", 1.0)], f1=0.5),
            rec("q3", [f"G{i}" for i in range(51)], [("G0", 1.0)], f1=0.04),
            rec("q4", ["A"], [("B", 1.0)], ends=["D"])]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary, examples = misses.analyse(tmp_path, n_examples=1)
    assert (summary["questions"], summary["misses"], summary["ranked"], summary["absent"]) == (4, 2, 1, 1)
    assert (summary["tied"], summary["tied_hits"], summary["temporal"], summary["many_gold"]) == (1, 1, 1, 1)
    assert summary["many_gold_f1_cost"] == round(0.96 / 4, 4)
    assert examples["ranked"][0]["tied"] and examples["absent"][0]["question"] == "q4"
