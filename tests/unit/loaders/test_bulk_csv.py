"""The bulk path's node CSV: one file per set of literal columns, the overflow file, and what goes to fixups."""

from __future__ import annotations

import csv
import json

import pytest

from loaders import bulk
from loaders.spill import EntityFacts


def read_back(groups: list[str]) -> dict[str, dict[str, str]]:
    """Entity id -> {column: cell} over every node file group (empty cells left out, as the importer does)."""
    rows: dict[str, dict[str, str]] = {}
    for group in groups:
        header_path, body_path = group.split("=", 1)[1].split(",")
        header = next(csv.reader(open(header_path, encoding="utf-8")))
        for row in csv.reader(open(body_path, encoding="utf-8")):
            assert len(row) == len(header)
            cells = {h: c for h, c in zip(header, row) if c != ""}
            assert cells["id:ID"] not in rows
            rows[cells["id:ID"]] = cells
    return rows


@pytest.mark.parametrize("max_files", [500, 2])
def test_rows_carry_their_own_columns(tmp_path, monkeypatch, max_files):
    monkeypatch.setattr(bulk, "MAX_NODE_FILES", max_files)  # 2: later column sets share the wide file
    facts = [EntityFacts("m.a", "A", {}, ["film.actor"]),
             EntityFacts("m.b", None, {"x.y.from": "1999-01-02"}),
             EntityFacts("m.c", "C", {"x.y.height": 1.5, "x.y.from": "2001"}),
             EntityFacts("m.d", "D", {"x.y.count": 3}),
             EntityFacts("m.e", "E, \"quoted\"", {"x.y.count": 4, "x.y.mixed": ["p", "q"]}),
             EntityFacts("m.f", "F", {"x.y.from": ""})]
    plan = bulk.column_plan({"x.y.from": {"str"}, "x.y.height": {"float"}, "x.y.count": {"int"},
                             "x.y.mixed": {"str", "int"}})
    stats = bulk.write_node_csv(iter(facts), plan, tmp_path)
    assert (stats.entities, stats.cvts) == (6, 1)
    rows = read_back(stats.groups)
    assert len(stats.groups) == (4 if max_files == 500 else 3)  # (), from, from+height, count; or 2 + the wide one
    assert rows["m.a"] == {"id:ID": "m.a", "name": "A", ":LABEL": "Entity", "types:string[]": "film.actor"}
    assert rows["m.b"] == {"id:ID": "m.b", ":LABEL": "Entity;CVT", "x.y.from:string": "1999-01-02"}
    assert rows["m.c"]["x.y.height:double"] == "1.5" and rows["m.c"]["x.y.from:string"] == "2001"
    assert rows["m.d"]["x.y.count:long"] == "3" and rows["m.e"]["name"] == 'E, "quoted"'
    assert "x.y.from:string" not in rows["m.f"]  # an empty string cannot be a CSV cell: set after the import
    fixups = [json.loads(line) for line in open(tmp_path / "fixups.jsonl", encoding="utf-8")]
    assert fixups == [{"id": "m.e", "props": {"x.y.mixed": ["p", "q"]}}, {"id": "m.f", "props": {"x.y.from": ""}}]
