"""predictions.jsonl handling, metrics.json/report.md/PNGs and run comparison, on hand-made records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sgr.evaluation.compare import compare_runs, comparison_markdown
from sgr.evaluation.predictions import PredictionLog, prediction_record, read_predictions, repair_tail
from sgr.evaluation.report import build_metrics, write_report
from sgr.core.errors import InputError
from sgr.core.types import Answer, Prediction, Question, Usage


def test_partial_last_line_is_ignored_and_cut_before_appending(tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"id": "a", "x": 1}\n{"id": "b", "x": 2}\n{"id": "c", "x"')
    assert set(read_predictions(path)) == {"a", "b"}
    assert repair_tail(path) == len('{"id": "c", "x"')
    with PredictionLog(path) as log:
        log.append({"id": "c", "x": 3})
    lines = path.read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["a", "b", "c"]
    assert repair_tail(path) == 0


def test_last_record_per_id_wins_and_garbage_lines_are_skipped(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "a", "error": "boom"}\nnot json\n{"id": "a", "error": null}\n')
    recs = read_predictions(path)
    assert list(recs) == ["a"] and recs["a"]["error"] is None
    only_partial = tmp_path / "q.jsonl"
    only_partial.write_text('{"id": "a"')
    assert read_predictions(only_partial) == {}
    repair_tail(only_partial)
    assert only_partial.read_text() == ""


def _rec(qid, answers, gold, hops=None, qtype=None, ms=10.0, error=None, llm=0, cached=0):
    """A record; ``cached`` of the ``llm`` calls came from the call cache (their tokens counted apart)."""
    q = Question(id=qid, text="q", answers=gold, hops=hops, qtype=qtype)
    billed = llm - cached
    pred = Prediction(question_id=qid, answers=[Answer(text=a) for a in answers],
                      usage=Usage(llm_calls=llm, prompt_tokens=50 * billed, completion_tokens=5 * billed,
                                  llm_cached_calls=cached, cached_prompt_tokens=50 * cached,
                                  cached_completion_tokens=5 * cached, total_seconds=ms / 1000))
    return prediction_record(q, None if error else pred, error)


def _info(n, sessions=((1.0, 4),)):
    return {"dataset": {"name": "toy", "selected": n, "total": n, "selection": {}},
            "method": "m", "sessions": [{"seconds": s, "answered": a} for s, a in sessions]}


def test_build_metrics_overall_breakdowns_errors_and_no_gold():
    recs = [_rec("1", ["A", "x"], ["a"], hops=1, qtype="t1"),
            _rec("2", ["x", "B"], ["b"], hops=2, qtype="t1"),
            _rec("3", [], ["c"], hops=2, qtype="t2", error="ValueError: boom"),
            _rec("4", ["d"], [], hops=1)]
    m = build_metrics(recs, _info(5))
    assert m["n_done"] == 4 and m["n_questions"] == 5 and not m["complete"]
    assert m["n_errors"] == 1 and m["n_no_gold"] == 1
    ov = m["overall"]
    assert ov["n"] == 3
    assert ov["hits1_strict"] == pytest.approx(1 / 3)
    assert ov["hit"] == pytest.approx(2 / 3)
    assert ov["f1"] == pytest.approx((2 / 3 + 2 / 3 + 0) / 3)
    assert m["by_hops"]["1"]["n"] == 1 and m["by_hops"]["1"]["hits1_strict"] == 1.0
    assert m["by_hops"]["2"]["n"] == 2 and m["by_hops"]["2"]["hit"] == 0.5
    assert m["by_type"]["t1"]["hit"] == 1.0 and m["by_type"]["t2"]["hit"] == 0.0
    assert "ceiling" not in ov
    # cost over the 3 questions the method answered (the one that raised has no usage); throughput over all 4
    assert m["cost"]["n"] == 3 and m["cost"]["questions_per_s"] == 4.0
    assert recs[2]["usage"] == {}


def test_report_shows_billed_and_cached_tokens_apart(tmp_path):
    d = tmp_path / "run"
    _write_run(d, [_rec("1", ["a"], ["a"], llm=3, cached=2), _rec("2", ["b"], ["b"], llm=2, cached=2),
                   _rec("3", ["c"], ["c"], llm=1)], 3)
    c = write_report(d, plots=False)["cost"]
    assert (c["llm_calls_total"], c["llm_cached_calls_total"]) == (6, 4)
    assert (c["prompt_tokens_total"], c["cached_prompt_tokens_total"]) == (50 * 2, 50 * 4)
    assert (c["completion_tokens_total"], c["cached_completion_tokens_total"]) == (5 * 2, 5 * 4)
    assert c["prompt_tokens_median"] == 50.0 and c["cached_prompt_tokens_median"] == 100.0
    md = (d / "report.md").read_text()
    assert "| prompt tokens billed: total / median | 100 / 50.0 |" in md
    assert "| prompt tokens cached: total / median | 200 / 100.0 |" in md
    assert "| LLM calls: total / median / from the cache | 6 / 2.0 / 4 |" in md


def test_build_metrics_merges_the_ceiling():
    recs = [_rec("1", ["a"], ["a"], hops=1), _rec("2", ["x"], ["b"], hops=2), _rec("3", [], ["c"], hops=2)]
    reach = {"k": None, "questions": {
        "1": {"k": 1, "reachable": True, "reachable_cvt": None, "topics_found": 1, "answers_found": 1},
        "2": {"k": 2, "reachable": True, "reachable_cvt": None, "topics_found": 1, "answers_found": 1},
        "3": {"k": 2, "reachable": False, "reachable_cvt": None, "topics_found": 0, "answers_found": 1}}}
    m = build_metrics(recs, _info(3), reach)
    assert m["overall"]["ceiling"] == pytest.approx(2 / 3) and m["overall"]["ceiling_k"] == [1, 2]
    assert "ceiling_cvt" not in m["overall"]
    assert m["by_hops"]["1"]["ceiling"] == 1.0 and m["by_hops"]["2"]["ceiling"] == 0.5
    assert m["ceiling"]["topics_missing"] == 1


def _write_run(d: Path, recs, n):
    d.mkdir()
    (d / "run.json").write_text(json.dumps(_info(n)))
    with PredictionLog(d / "predictions.jsonl") as log:
        for r in recs:
            log.append(r)


def test_write_report_files_and_compare(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _write_run(a, [_rec("1", ["x", "a"], ["a"], hops=1, ms=5), _rec("2", ["b"], ["b"], hops=2, ms=50)], 2)
    _write_run(b, [_rec("1", ["a"], ["a"], hops=1, ms=20, llm=2), _rec("2", ["z"], ["b"], hops=2, ms=30, llm=1),
                   _rec("3", ["c"], ["c"], hops=2)], 3)
    ma, mb = write_report(a), write_report(b)
    for d in (a, b):
        assert json.loads((d / "metrics.json").read_text())["n_done"] in (2, 3)
        for png in ("per_hop.png", "latency.png"):
            assert (d / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (a / "report.md").read_text()
    assert "Hit (lenient: any answer; RoG-style 'Hits@1')" in md and "| 2 | 1 |" in md
    assert ma["overall"]["hits1_strict"] == 0.5 and mb["overall"]["hits1_strict"] == pytest.approx(2 / 3)

    cmp = compare_runs(a, b)
    row = {r.label: r for r in cmp.rows}
    assert row["Hits@1 (strict: top answer)"].delta == pytest.approx(2 / 3 - 0.5)
    assert row["LLM calls (median)"].a == 0 and row["LLM calls (median)"].b == 1.0  # median of 2, 1, 0
    assert (cmp.shared, cmp.b_better, cmp.a_better, cmp.same) == (2, 1, 1, 0)
    text = comparison_markdown(cmp)
    assert "Δ (B − A)" in text and "+0.167" in text
    with pytest.raises(InputError):
        compare_runs(a, tmp_path / "nope")
