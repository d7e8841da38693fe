"""A large plain file parsed in byte ranges on several processes gives the sequential parse's spill."""

from __future__ import annotations

import pytest

from loaders import api, parallel
from loaders.spill import edge_rows, entity_groups

NS = "http://rdf.freebase.com/ns/"


def freebase_lines(n: int) -> list[str]:
    lines = []
    for i in range(n):
        lines.append(f"<{NS}m.e{i}> <{NS}film.actor.film> <{NS}m.e{(i * 7) % n}> .")
        lines.append(f'<{NS}m.e{i % 50}> <{NS}type.object.name> "Name {i}"@en .')  # first name seen is kept
        lines.append(f"<{NS}m.e{i % 30}> <{NS}type.object.type> <{NS}t.{i % 4}> .")
        if i % 97 == 0:
            lines.append("this line is malformed")
    return lines


def test_line_ranges_cut_at_line_starts(tmp_path):
    path = tmp_path / "x.nt"
    path.write_bytes(b"a\nbb\n\nccc\nd")  # no final newline
    data = path.read_bytes()
    for parts in range(1, 7):
        ranges = parallel.line_ranges(path, parts)
        assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
        assert all(e == s2 for (_, e), (s2, _) in zip(ranges, ranges[1:]))
        assert all(s == 0 or data[s - 1:s] == b"\n" for s, _ in ranges)


@pytest.mark.parametrize("parts", [2, 3])
def test_parallel_parse_gives_the_sequential_spill(tmp_path, monkeypatch, parts):
    path = tmp_path / "fb.nt"
    path.write_text("\n".join(freebase_lines(400)) + "\n")
    seq, seq_report = api.parse_file(path, "ntriples", tmp_path / "seq", error_budget=100)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: parts)
    assert parallel.parallel_parts(path, "ntriples") == parts
    par, par_report = api.parse_file(path, "ntriples", tmp_path / "par", error_budget=100)
    assert list(edge_rows(par.edges)) == list(edge_rows(seq.edges))
    assert [(f.id, f.name, f.props, f.types) for f in entity_groups(par.nodes)] == \
        [(f.id, f.name, f.props, f.types) for f in entity_groups(seq.nodes)]
    for key in ("lines", "triples", "entities", "names", "types", "malformed_count", "malformed", "skipped"):
        assert getattr(par_report, key) == getattr(seq_report, key), key  # line numbers made global
    with pytest.raises(api.LoadError, match="over the --max-errors budget"):
        api.parse_file(path, "ntriples", tmp_path / "budget", error_budget=2)
