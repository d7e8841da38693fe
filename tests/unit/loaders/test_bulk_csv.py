"""The bulk path's node CSV: one file per set of literal columns, the overflow file, what goes to fixups, and the
column-batch writer against the row writer."""

from __future__ import annotations

import csv
import json

import pytest

from loaders import bulk, nodecsv
from loaders.spill import EntityFacts, entity_groups


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
    monkeypatch.setattr(nodecsv, "MAX_NODE_FILES", max_files)  # 2: later column sets share the wide file
    facts = [EntityFacts("m.a", "A", {}, ["film.actor"]),
             EntityFacts("m.b", None, {"x.y.from": "1999-01-02"}),
             EntityFacts("m.c", "C", {"x.y.height": 1.5, "x.y.from": "2001"}),
             EntityFacts("m.d", "D", {"x.y.count": 3}),
             EntityFacts("m.e", "E, \"quoted\"", {"x.y.count": 4, "x.y.mixed": ["p", "q"]}),
             EntityFacts("m.f", "F", {"x.y.from": ""})]
    plan = nodecsv.column_plan({"x.y.from": {"str"}, "x.y.height": {"float"}, "x.y.count": {"int"},
                             "x.y.mixed": {"str", "int"}})
    stats = nodecsv.write_node_csv(iter(facts), plan, tmp_path, actual_ids=False)
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
    stats = nodecsv.write_node_csv(entity_groups(done.nodes), {}, tmp_path)
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


def awkward_spill(folder):
    """A sorted spill of entities that take every path of the node writers: names, ids and types with CSV
    quotes, commas, escapes and delimiters, repeated types and keys, values for fixups, many column sets."""
    from loaders.spill import Spill

    spill = Spill(folder)
    for i in range(40):  # plain entities, CVTs and named ids, with column sets of one or two of six keys
        head, tail = f"m.{i:03d}", (f"m.c{i}" if i % 3 else f"Place {i}")
        spill.triple(head, f"r.{i % 4}", tail)
        if i % 2:
            spill.name(head, f"Name {i}" + (", Jr." if i % 5 == 0 else ""))
        spill.entity_type(head, f"t.{i % 3}")
        if i % 4 == 1:
            spill.entity_type(head, "t.extra")
        if i % 3 == 0:
            spill.literal(f"m.c{i + 1}", f"k.n{i % 6}", i)
        if i % 4 == 0:
            spill.literal(f"m.c{i + 2}", f"k.s{i % 5}", f"2001-0{i % 9 + 1}")
        if i % 7 == 0:
            spill.literal(head, "k.ratio", i / 7)
        spill.literal(head, "k.flag", i % 2 == 0)
    spill.triple('m.q"uote', "r.0", "id, with comma")
    spill.triple("tab\there", "r.1", "line\nbreak")
    spill.triple("back\\slash", "r.1", "m.000")
    spill.name("m.000", 'Say "hi"')
    spill.name("m.000", "Second name (ignored)")
    spill.name("m.001", "tab\tand\\backslash")
    spill.name("m.002", "")
    spill.name("m.003", "ünïcode, ok")
    spill.entity_type("m.004", "t.0")  # a repeated type
    spill.entity_type("m.005", "a;b")  # the array delimiter inside a type
    spill.entity_type("m.006", "")
    spill.entity_type("m.007", "t,comma")
    spill.literal("m.008", "k.n0", 5)
    spill.literal("m.008", "k.n0", 6)  # two values: a list
    spill.literal("m.009", "k.n0", 5)
    spill.literal("m.009", "k.n0", 5)  # one value twice
    spill.literal("m.010", "k.s0", "")  # an empty string
    spill.literal("m.011", "k.s0", 'q"uote, and comma')
    spill.literal("m.012", "k.s0", "back\\slash")
    spill.literal("m.013", "k.mixed", 1)
    spill.literal("m.014", "k.mixed", "one")
    spill.literal("m.015", "k.ratio", float("nan"))
    spill.literal("m.016", "k.ratio", 1e16)
    spill.literal("m.017", "name", "a literal called name")
    spill.literal("m.018", "bad:key", 1)
    spill.literal("m.019", "k.n1", 2**40)
    return spill.sort()


@pytest.mark.parametrize("actual_ids", [True, False])
@pytest.mark.parametrize("max_files", [500, 3])
@pytest.mark.parametrize("block_bytes", [None, 97, 1])  # 1: one line a block, each entity's lines carried over
def test_column_batches_write_the_same_files(tmp_path, monkeypatch, actual_ids, max_files, block_bytes):
    monkeypatch.setattr(nodecsv, "MAX_NODE_FILES", max_files)  # 3: most column sets share the wide file
    done = awkward_spill(tmp_path / "spill")
    plan = nodecsv.column_plan(done.prop_kinds)
    one, batches = tmp_path / "rows", tmp_path / "batches"
    one.mkdir()
    batches.mkdir()
    expected = nodecsv.write_node_csv(entity_groups(done.nodes), plan, one, actual_ids)
    got = nodecsv.write_node_csv_blocks(done.nodes, plan, batches, actual_ids, block_bytes)
    assert (got.entities, got.cvts, got.fixups, got.multiline) == \
        (expected.entities, expected.cvts, expected.fixups, expected.multiline)
    assert expected.fixups >= 5 and expected.multiline and len(expected.groups) >= 3
    assert sorted(p.name for p in batches.iterdir()) == sorted(p.name for p in one.iterdir())
    for path in one.iterdir():
        assert (batches / path.name).read_bytes() == path.read_bytes(), path.name


_WRITERS: dict = {}  # the writers :func:`_in_helper` stands in for (helpers are forked: they see it filled)


def _in_helper(name, pid_file, *args):
    """The writer ``name`` of :mod:`loaders.bulk` on ``args``, noting the process it ran in."""
    import os

    with open(pid_file, "a", encoding="utf-8") as fh:
        fh.write(f"{name} {os.getpid()}\n")
    return _WRITERS[name](*args)


def test_a_large_spill_is_written_by_two_helpers_not_the_client(tmp_path, monkeypatch):
    """From HELPER_MIN_TRIPLES triples the node files and the relationship file are written in helper processes
    (the node writer's column batches grew the client by about 240 MB at 5M lines when it ran in the client), and the
    files are those the client writes itself below it."""
    import functools
    import os

    done = awkward_spill(tmp_path / "spill")
    inline = bulk.write_import_csv(done, tmp_path / "inline", 1000)  # 43 triples: below HELPER_MIN_TRIPLES
    pid_file = tmp_path / "pids"
    for name in ("write_node_csv_blocks", "write_relationship_csv"):
        _WRITERS[name] = getattr(bulk, name)
        monkeypatch.setattr(bulk, name, functools.partial(_in_helper, name, pid_file))
    monkeypatch.setattr(bulk, "HELPER_MIN_TRIPLES", 1)
    helped = bulk.write_import_csv(done, tmp_path / "helped", 1000)
    ran = dict(line.split() for line in pid_file.read_text().splitlines())
    assert set(ran) == {"write_node_csv_blocks", "write_relationship_csv"}
    assert str(os.getpid()) not in ran.values()
    assert (helped.entities, helped.cvts, helped.fixups, helped.multiline, helped.relation_types) == \
        (inline.entities, inline.cvts, inline.fixups, inline.multiline, inline.relation_types)
    written = {p.name: p.read_bytes() for p in (tmp_path / "inline").iterdir()}
    assert {p.name: p.read_bytes() for p in (tmp_path / "helped").iterdir()} == written
