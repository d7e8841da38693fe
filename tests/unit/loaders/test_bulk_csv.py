"""The bulk path's node CSV: one file per set of literal columns, the overflow file, and what goes to fixups."""

from __future__ import annotations

import csv
import json

import pytest

from loaders import bulk
from loaders.spill import EntityFacts


def read_back(groups: list[str]) -> dict[str, dict[str, str]]:
    """Entity id -> {column: cell} over every node file group (empty cells left out, as the importer does),
    without the node-number column."""
    rows: dict[str, dict[str, str]] = {}
    for group in groups:
        header_path, body_path = group.split("=", 1)[1].split(",")
        header = next(csv.reader(open(header_path, encoding="utf-8")))
        for row in csv.reader(open(body_path, encoding="utf-8")):
            assert len(row) == len(header)
            cells = {h: c for h, c in zip(header, row) if c != ""}
            cells.pop(":ID", None)
            key = cells.get("id:ID", cells.get("id"))
            assert key not in rows
            rows[key] = cells
    return rows


@pytest.mark.parametrize("max_files", [500, 2])
def test_rows_carry_their_own_columns(tmp_path, monkeypatch, max_files):  # the entity ids as the importer's keys
    monkeypatch.setattr(bulk, "MAX_NODE_FILES", max_files)  # 2: later column sets share the wide file
    facts = [EntityFacts("m.a", "A", {}, ["film.actor"]),
             EntityFacts("m.b", None, {"x.y.from": "1999-01-02"}),
             EntityFacts("m.c", "C", {"x.y.height": 1.5, "x.y.from": "2001"}),
             EntityFacts("m.d", "D", {"x.y.count": 3}),
             EntityFacts("m.e", "E, \"quoted\"", {"x.y.count": 4, "x.y.mixed": ["p", "q"]}),
             EntityFacts("m.f", "F", {"x.y.from": ""})]
    plan = bulk.column_plan({"x.y.from": {"str"}, "x.y.height": {"float"}, "x.y.count": {"int"},
                             "x.y.mixed": {"str", "int"}})
    stats = bulk.write_node_csv(iter(facts), plan, tmp_path, actual_ids=False)
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


def test_node_numbers_are_the_ranks_the_relationship_file_uses(tmp_path, monkeypatch):
    from loaders.spill import Spill

    spill = Spill(tmp_path / "spill")
    for h, r, t in [("m.b", "r.z", "m.a"), ("m.a", "r.y", "m.c"), ("m.c", "r.y", "m.b"), ("x\tz", "r.y", "m.a"),
                    ("m.a", "r.y", "m.b"), ("m.b", "r.y", "m.a")]:
        spill.triple(h, r, t)
    spill.name("m.a", "A")
    done = spill.sort()
    stats = bulk.write_node_csv(bulk.entity_groups(done.nodes), {}, tmp_path)
    header_path, body_path = stats.groups[0].split("=", 1)[1].split(",")
    assert next(csv.reader(open(header_path)))[:2] == [":ID", "id"]
    number = {row[1]: int(row[0]) for row in csv.reader(open(body_path, encoding="utf-8"))}
    assert sorted(number.values()) == list(range(4))
    from loaders import records

    for block_bytes in (bulk.REL_BLOCK_BYTES, 40):  # 40: column batches and id blocks of one or two lines
        monkeypatch.setattr(bulk, "REL_BLOCK_BYTES", block_bytes)
        monkeypatch.setattr(records, "BLOCK_BYTES", min(block_bytes, records.BLOCK_BYTES))
        rels = bulk.write_relationship_csv(done.edges, done.nodes, tmp_path)
        assert rels.types == ["r.y", "r.z"]  # the most frequent type first
        lines = [row for row in csv.reader(open(tmp_path / "rels.csv", encoding="utf-8"))]
        names = {v: k for k, v in number.items()}
        assert sorted((names[int(h)], r, names[int(t)]) for h, t, r in lines) == sorted(
            [("m.b", "r.z", "m.a"), ("m.a", "r.y", "m.c"), ("m.c", "r.y", "m.b"), ("x\tz", "r.y", "m.a"),
             ("m.a", "r.y", "m.b"), ("m.b", "r.y", "m.a")])
        assert [r for _, _, r in lines][-1] == "r.z"
