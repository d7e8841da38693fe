"""bench/record.py: results files carry their provenance, and one file holds one run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.record import previous_result, provenance, write_result


def test_write_result_adds_provenance_and_needs_a_summary(tmp_path: Path) -> None:
    path = write_result(tmp_path / "r.json", {"summary": {"x": 1.0}, "rows": [1]}, command=["bench/x.py", "--n", "3"])
    data = json.loads(path.read_text())
    assert list(data)[:2] == ["summary", "provenance"] and data["rows"] == [1]
    prov = data["provenance"]
    assert prov["commit"] and prov["command"] == "python bench/x.py --n 3" and prov["machine"]["cpus"] >= 1
    with pytest.raises(ValueError):
        write_result(tmp_path / "bad.json", {"rows": []})


def test_a_file_of_this_commit_is_continued_and_keeps_each_invocation(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    assert previous_result(path) == {}
    write_result(path, {"summary": {"a": 1}}, command=["first"])
    before = previous_result(path)
    assert before["summary"] == {"a": 1}
    write_result(path, {"summary": {"a": 1, "b": 2}}, command=["second"], continues=before)
    prov = json.loads(path.read_text())["provenance"]
    assert prov["command"] == "python second" and [p["command"] for p in prov["earlier"]] == ["python first"]


def test_a_file_of_another_run_is_not_continued(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"summary": {"a": 1}}))  # no provenance: written before bench/record.py
    with pytest.raises(SystemExit, match="--fresh"):
        previous_result(path)
    other = {**provenance(), "commit": "0" * 12}
    path.write_text(json.dumps({"summary": {"a": 1}, "provenance": other}))
    with pytest.raises(SystemExit, match="one file holds one run|One file holds one run"):
        previous_result(path)
    assert previous_result(path, fresh=True) == {}
