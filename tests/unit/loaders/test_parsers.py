"""Unit tests of the format parsers, detection and file checks (no Neo4j needed)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from loaders import ntriples, rog, triples
from loaders import api
from loaders.spill import edge_rows, entity_groups
from loaders.detect import detect_format
from loaders.records import EntityType, Literal, Malformed, Name, Skipped, Triple
from sgr.core.errors import InputError, LoadError

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "loaders"
NS = "http://rdf.freebase.com/ns/"


class Parsed:
    """What the spill files of one parsed file hold, read back (names, props, types, triples)."""

    def __init__(self, spill) -> None:
        groups = list(entity_groups(spill.nodes))
        self.names = {g.id: g.display_name for g in groups}
        self.props = {g.id: g.props for g in groups if g.props}
        self.types = {g.id: g.types for g in groups if g.types}
        self.triples = set(edge_rows(spill.edges))
        assert len(self.triples) == spill.triples


def parse_file(path, fmt, **kw):
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        spill, rep = api.parse_file(path, fmt, Path(tmp), **kw)
        return Parsed(spill), rep


def kinds(records):
    out: dict[type, list] = {}
    for r in records:
        out.setdefault(type(r), []).append(r)
    return out


# -- plain triples -----------------------------------------------------------------------------
def test_triples_pipe_and_tab_lines():
    recs = kinds(triples.parse(FIX / "triples_small.txt"))
    got = {(t.head, t.relation, t.tail) for t in recs[Triple]}
    expected = set()
    for line in (FIX / "triples_small.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            expected.add(tuple(line.split("\t") if "\t" in line else line.split("|")))
    assert got == expected
    assert ("Jamaica", "location.country.languages_spoken", "Jamaican English") in got
    assert Malformed not in recs


def test_triples_malformed_lines_name_file_line_and_reason():
    recs = kinds(triples.parse(FIX / "triples_bad.txt"))
    bad = {m.line: m.reason for m in recs[Malformed]}
    assert set(bad) == {2, 3, 4, 6}
    assert "found 2" in bad[2] and "found 4" in bad[3] and "empty head" in bad[4]
    assert "no '|' or TAB" in bad[6]
    assert str(recs[Malformed][0]).startswith(f"{FIX / 'triples_bad.txt'}:2: ")
    assert {(t.head, t.tail) for t in recs[Triple]} == {("a", "b"), ("a", "c")}


def test_triples_bad_encoding_is_one_malformed_line(tmp_path):
    p = tmp_path / "latin1.txt"
    p.write_bytes("a|r|b\nCaf\xe9|r|b\nc|r|d\n".encode("latin-1"))
    recs = kinds(triples.parse(p))
    assert [m.line for m in recs[Malformed]] == [2]
    assert "not valid UTF-8" in recs[Malformed][0].reason and "0xe9" in recs[Malformed][0].reason
    assert len(recs[Triple]) == 2


def test_utf8_bom_is_ignored(tmp_path):
    p = tmp_path / "bom.txt"
    p.write_bytes("\ufeffa|r|b\n".encode("utf-8"))
    assert list(triples.parse(p)) == [Triple("a", "r", "b")]


@pytest.mark.parametrize("content,match", [
    (b"", "empty"),
    ("a|r|b\n".encode("utf-16"), "UTF-16"),
    (b"\x00\x01\x02binary\x00", "binary"),
])
def test_unreadable_files_raise_one_line_input_error(tmp_path, content, match):
    p = tmp_path / "x.txt"
    p.write_bytes(content)
    with pytest.raises(InputError, match=match) as err:
        list(triples.parse(p))
    assert "\n" not in str(err.value)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        list(triples.parse(tmp_path / "nope.txt"))
    with pytest.raises(InputError, match="folder"):
        list(triples.parse(tmp_path))


def test_corrupt_gzip_is_an_input_error(tmp_path):
    p = tmp_path / "x.nt.gz"
    data = gzip.compress(b"<http://a> <http://b> <http://c> .\n" * 2000)
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="gzip"):
        list(ntriples.parse(p))


def test_only_comments_is_no_triples(tmp_path):
    p = tmp_path / "c.txt"
    p.write_text("# nothing\n\n# here\n")
    with pytest.raises(InputError, match="no triples"):
        parse_file(p, "triples")


# -- N-Triples ---------------------------------------------------------------------------------
def test_ntriples_names_literals_cvts_and_housekeeping():
    batch, rep = parse_file(FIX / "freebase_small.nt", "ntriples")
    assert batch.triples == {
        ("m.03_r3", "location.country.languages_spoken", "m.01428y"),
        ("m.03_r3", "government.governmental_jurisdiction.governing_officials", "m.0c9v2_q"),
        ("m.0c9v2_q", "government.government_position_held.office_holder", "m.0b6k40"),
        ("m.03_r3", "location.country.capital", "m.04_rh"),
    }
    assert batch.names["m.03_r3"] == "Jamaica"  # the English name, not the French one
    assert batch.names["m.0b6k40"] == 'Andrew "Andy" Holness'  # escapes undone
    assert batch.names["m.0c9v2_q"] is None and batch.names["m.04_rh"] is None  # CVTs
    assert rep.cvts == 2 and rep.entities == 5
    props = batch.props["m.03_r3"]
    assert props["location.location.area"] == pytest.approx(10991.0)
    assert props["location.statistical_region.population"] == 2890299
    assert props["location.dated_location.date_founded"] == "1962-08-06"
    assert props["location.country.iso_alpha_3"] == "JAM"
    assert props["base.schemastaging.motto"] == "Out of Many, One People"  # @de one skipped
    assert rep.skipped == {
        "type.object.name@fr": 1, "base.schemastaging.motto@de": 1, "rdf:type": 1,
        "freebase.valuenotation.is_reviewed": 1, "kg.object_profile.prominent_type": 1,
    }
    # type.object.type and common.topic.notable_types become the entity's types, in input order
    assert batch.types == {"m.03_r3": ["location.country", "m.01mp"]} and rep.types == 2
    assert rep.malformed_count == 1 and "expected <subject> <predicate> <object>" in rep.malformed[0]
    assert rep.malformed[0].startswith(f"{FIX / 'freebase_small.nt'}:22: ")


def test_ntriples_keep_all_keeps_housekeeping():
    batch, rep = parse_file(FIX / "freebase_small.nt", "ntriples", keep_all=True)
    rels = {r for _, r, _ in batch.triples}
    assert {"type.object.type", "common.topic.notable_types", "rdf:type",
            "freebase.valuenotation.is_reviewed", "kg.object_profile.prominent_type"} <= rels
    assert len(batch.triples) == 9
    assert set(rep.skipped) == {"type.object.name@fr", "base.schemastaging.motto@de"}
    assert batch.names["location.country"] == "location.country"  # a non-MID id names itself


def test_ntriples_line_level_details():
    name = ntriples.parse_line(f'<{NS}m.1> <{NS}type.object.name> "Caf\\u00e9 \\U0001F600"@en-GB .')
    assert name == Name("m.1", "Café 😀")
    assert ntriples.parse_line(f'<{NS}m.1> <{NS}x.y.flag> "true"^^<http://www.w3.org/2001/XMLSchema#boolean> .') \
        == Literal("m.1", "x.y.flag", True)
    assert ntriples.parse_line(f"_:b1 <{NS}x.y.z> <http://example.org/thing> .") \
        == Triple("_:b1", "x.y.z", "http://example.org/thing")
    assert ntriples.parse_line(f"<{NS}m.1>\t<{NS}x.y.z>\t<{NS}m.2>\t.") == Triple("m.1", "x.y.z", "m.2")
    assert isinstance(ntriples.parse_line(f"<{NS}m.1> <{NS}common.topic.alias> \"x\" ."), Skipped)
    assert ntriples.parse_line("   ") is None
    assert "subject" in ntriples.parse_line(f'"lit" <{NS}x> <{NS}m.2> .')
    assert ntriples.is_housekeeping("type.object.key") and not ntriples.is_housekeeping("type.object.name")
    assert ntriples.parse_line(f"<{NS}m.1> <{NS}type.object.type> <{NS}film.actor> .") \
        == EntityType("m.1", "film.actor", "type.object.type")


@pytest.mark.parametrize("keep_all", [False, True])
def test_ntriples_fast_path_reads_like_the_full_grammar(tmp_path, keep_all):
    lines = [f"<{NS}m.1> <{NS}film.actor.film> <{NS}m.2> .",  # the fast path
             f"<{NS}m.1> <{NS}type.object.type> <{NS}film.actor> .",  # a type: the full grammar
             f"<{NS}m.1> <{NS}common.topic.notable_types> <{NS}m.0t> .",
             f"<{NS}m.1> <{NS}type.object.key> <{NS}m.3> .",  # housekeeping
             f"<{NS}m.1> <{NS}kg.x.y> <{NS}m.3> .",
             f"<{NS}m.1> <{NS}type.object.name> <{NS}m.4> .",  # a name relation with an IRI object is an edge
             f"<{NS}m.1> <{NS}film.actor.film> <{NS}m.2> .  ",  # trailing blanks
             f"<{NS}m.1> <{NS}film.actor.film> <{NS}m.2>.",  # no blank before the dot
             f"<{NS}m.é> <{NS}film.actor.film> <{NS}m.ü> .",
             f"<{NS}m.1> <{NS}film.actor.film> <{NS}m.2 x> .",  # malformed
             f"<{NS}m.1> <{NS}film.actor.film> <{NS}> .",  # empty object id
             f"<{NS}m.1> <{NS}film.actor.film> <{NS}m.2> . # comment"]
    path = tmp_path / "fb.nt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = [r if not isinstance(r, Malformed) else r.reason for r in ntriples.parse(path, keep_all)]
    want = []
    for line in lines:
        res = ntriples.parse_line(line, keep_all)
        want.append(res)
        if keep_all and isinstance(res, EntityType):
            want.append(Triple(res.entity, res.relation, res.type))
    assert got == want
    assert got[0] == Triple("m.1", "film.actor.film", "m.2") and isinstance(got[-3], str)


def test_ntriples_gzip_reads_like_plain(tmp_path):
    gz = tmp_path / "fb.nt.gz"
    gz.write_bytes(gzip.compress((FIX / "freebase_small.nt").read_bytes()))
    plain, _ = parse_file(FIX / "freebase_small.nt", "ntriples")
    zipped, _ = parse_file(gz, detect_format(gz))
    assert zipped.triples == plain.triples and zipped.names == plain.names


# -- RoG records -------------------------------------------------------------------------------
def test_rog_jsonl_merges_all_question_graphs():
    batch, rep = parse_file(FIX / "rog_small.jsonl", "rog")
    expected = set()
    for line in (FIX / "rog_small.jsonl").read_text().splitlines():
        if line.strip():
            expected |= {tuple(t) for t in json.loads(line)["graph"]}
    assert batch.triples == expected and len(expected) == 7  # one triple repeated across questions
    assert batch.names["m.0c9v2_q"] is None and rep.cvts == 1
    assert batch.names["Andrew Holness"] == "Andrew Holness"
    assert rep.malformed_count == 0


def test_rog_malformed_records_keep_the_good_triples():
    recs = kinds(rog.parse(FIX / "rog_bad.jsonl"))
    by_line: dict[int, list[str]] = {}
    for m in recs[Malformed]:
        by_line.setdefault(m.line, []).append(m.reason)
    assert set(by_line) == {2, 3, 4, 5}
    assert "invalid JSON" in by_line[2][0]
    assert "no `graph` field" in by_line[3][0]
    assert "JSON object" in by_line[4][0]
    assert len(by_line[5]) == 4  # ["only","two"], empty relation, "nope", a number
    assert {(t.head, t.tail) for t in recs[Triple]} == {("A", "B"), ("B", "m.0abc"), ("C", "D")}


def test_rog_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(x) for x in (FIX / "rog_small.jsonl").read_text().splitlines() if x.strip()]
    table = pa.table({"id": [r["id"] for r in rows], "graph": [r["graph"] for r in rows]})
    p = tmp_path / "rog.parquet"
    pq.write_table(table, p)
    assert detect_format(p) == "rog"
    batch, rep = parse_file(p, "rog")
    jsonl, _ = parse_file(FIX / "rog_small.jsonl", "rog")
    assert batch.triples == jsonl.triples
    pq.write_table(pa.table({"id": ["x"]}), tmp_path / "nograph.parquet")
    with pytest.raises(InputError, match="no `graph` column"):
        parse_file(tmp_path / "nograph.parquet", "rog")


# -- detection and the error budget ------------------------------------------------------------
def test_format_detection(tmp_path):
    assert detect_format(FIX / "rog_small.jsonl") == "rog"
    assert detect_format(FIX / "freebase_small.nt") == "ntriples"
    assert detect_format(FIX / "triples_small.txt") == "triples"
    sniffed = tmp_path / "data.txt"
    sniffed.write_bytes((FIX / "freebase_small.nt").read_bytes())
    assert detect_format(sniffed) == "ntriples"
    sniffed.write_text('{"graph": []}\n')
    assert detect_format(sniffed) == "rog"
    assert detect_format(sniffed, forced="triples") == "triples"
    sniffed.write_text("just words\n")
    with pytest.raises(InputError, match="--format"):
        detect_format(sniffed)
    with pytest.raises(InputError, match="unknown format"):
        detect_format(sniffed, forced="csv")


def test_error_budget_stops_with_the_first_bad_line_on_one_line():
    with pytest.raises(LoadError) as err:
        parse_file(FIX / "triples_bad.txt", "triples", error_budget=2)
    msg = str(err.value)
    assert "over the --max-errors budget" in msg
    assert f"first: {FIX / 'triples_bad.txt'}:2:" in msg and "\n" not in msg
    batch, rep = parse_file(FIX / "triples_bad.txt", "triples", error_budget=4)
    assert rep.malformed_count == 4 and len(batch.triples) == 2


# -- stated maximums (issue 42 item 7) -------------------------------------------------------------
def _gzip_stream(path: Path, block: bytes, total: int, head: bytes = b"", tail: bytes = b"") -> None:
    """``head`` + ``block`` repeated to ``total`` bytes + ``tail``, gzip-compressed (written in pieces)."""
    with gzip.open(path, "wb", compresslevel=9) as gz:
        gz.write(head)
        for _ in range(total // len(block)):
            gz.write(block)
        gz.write(tail)


def test_a_line_over_the_limit_is_one_malformed_line_read_in_bounded_memory(tmp_path, monkeypatch):
    import resource

    from loaders import records

    monkeypatch.setattr(records, "MAX_LINE_BYTES", 4 * 2**20)
    path = tmp_path / "long.txt"
    path.write_bytes(b"a|r|b\n" + b"x" * (40 * 2**20) + b"|r|c\nd|r|e\n")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    recs = list(triples.parse(path))
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert [type(r) for r in recs] == [Triple, Malformed, Triple]
    assert recs[1].line == 2 and "longer than 4,194,304 bytes" in recs[1].reason
    assert grown_mb < 30  # the 40 MB line was never held whole


@pytest.mark.parametrize("what", ["one endless line", "newlines"])
def test_a_gzip_bomb_is_refused(tmp_path, what):
    path = tmp_path / "bomb.txt.gz"
    block = b"x" * 2**20 if what == "one endless line" else b"\n" * 2**20
    _gzip_stream(path, block, 96 * 2**20, head=b"a|r|b\n")
    assert path.stat().st_size < 2 * 2**20
    with pytest.raises(InputError, match="decompression bomb") as err:
        list(triples.parse(path))
    assert "\n" not in str(err.value)


def test_ordinary_gzip_text_is_not_a_bomb(tmp_path):
    path = tmp_path / "kb.txt.gz"
    lines = b"".join(f"Movie {i}|directed_by|Director {i % 977}\n".encode() for i in range(600_000))
    with gzip.open(path, "wb") as gz:
        gz.write(lines)
    assert sum(1 for r in triples.parse(path) if isinstance(r, Triple)) == 600_000


@pytest.mark.parametrize("line,field", [
    ("a|" + "r" * 70_000 + "|b", "relation"), ("h" * 2_001 + "|r|t", "head"), ("h|r|" + "t" * 5_000, "tail")])
def test_names_over_their_limit_are_malformed_before_anything_is_written(tmp_path, line, field):
    path = tmp_path / "t.txt"
    path.write_text(f"a|r|b\n{line}\nc|r|d\n")
    parsed, rep = parse_file(path, "triples", error_budget=5)
    assert rep.malformed_count == 1 and f"the {field} is" in rep.malformed[0] and ":2:" in rep.malformed[0]
    assert parsed.triples == {("a", "r", "b"), ("c", "r", "d")}


def test_ntriples_long_name_and_property_key_are_malformed(tmp_path):
    path = tmp_path / "x.nt"
    path.write_text(f'<{NS}m.1> <{NS}type.object.name> "{"n" * 3000}"@en .\n'
                    f'<{NS}m.1> <{NS}{"k" * 1500}> "v" .\n'
                    f'<{NS}m.1> <{NS}location.location.contains> <{NS}m.2> .\n')
    parsed, rep = parse_file(path, "ntriples", error_budget=5)
    assert rep.malformed_count == 2 and len(parsed.triples) == 1


def test_rog_graph_entry_as_an_object_is_not_a_triple(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "q", "graph": [{"head": "a", "relation": "r", "tail": "b"}, ["c", "r", "d"]]})
                    + "\n" + json.dumps({"id": "q2", "graph": {"a": 1, "b": 2, "c": 3}}) + "\n")
    recs = kinds(rog.parse(path))
    assert [(t.head, t.relation, t.tail) for t in recs[Triple]] == [("c", "r", "d")]
    assert len(recs[Malformed]) == 2


# -- N-Triples read in blocks (pyarrow kernels for the common lines) ------------------------------------
def _spilled(path: Path, blocks: bool, keep_all: bool = False):
    """(report fields, skipped, edges lines sorted, nodes facts in order without 'a' lines, entities) of ``path``
    read in blocks (``api.collect``) or record by record (``ntriples.parse``)."""
    import tempfile

    from loaders.records import LineReader
    from loaders.spill import Spill

    with tempfile.TemporaryDirectory() as tmp:
        spill = Spill(Path(tmp))
        if blocks:
            rep, skipped, _ = api.collect(path, "ntriples", LineReader(path), spill, keep_all)
        else:
            c = api._Collector(path, spill, None)
            reader = LineReader(path)
            for rec in ntriples.parse(path, keep_all, reader):
                c.take(rec, rec.line if isinstance(rec, Malformed) else reader.lines)
            rep, skipped = c.report, c.skipped
            rep.lines = reader.lines
        spill.close()
        edges = sorted(spill.edges_path.read_text(encoding="utf-8").splitlines())
        nodes = spill.nodes_path.read_text(encoding="utf-8").splitlines()
    facts = [line for line in nodes if line.split("\t")[1] != "a"]
    entities = {line.split("\t")[0] for line in nodes}
    counts = (rep.lines, rep.names, rep.types, rep.literals, rep.malformed_count, rep.malformed)
    return counts, dict(skipped), edges, facts, entities, dict(spill.prop_kinds)


BLOCK_LINES = [
    f"<{NS}m.1> <{NS}film.actor.film> <{NS}m.2> .",
    f'<{NS}m.1> <{NS}type.object.name> "Éric First"@en .',  # read line by line (non-ASCII first letter) ...
    f'<{NS}m.1> <{NS}type.object.name> "Eric Second"@en .',  # ... so the block's names keep their order
    f'<{NS}m.2> <{NS}type.object.name> " padded "@en .',
    f'<{NS}m.3> <{NS}type.object.name> "Quote \\" inside"@en .',
    f'<{NS}m.4> <{NS}type.object.name> "Français"@fr .',
    f'<{NS}m.5> <{NS}type.object.name> "Tagged"@en-GB .',
    f'<{NS}m.6> <{NS}type.object.name> "Untagged" .',
    f'<{NS}m.7> <{NS}type.object.name> ""@en .',
    f'<{NS}m.8> <{NS}type.object.name> "Plain, name (with) punctuation!"@en .',
    f"<{NS}m.8> <{NS}type.object.type> <{NS}film.actor> .",
    f"<{NS}m.8> <{NS}common.topic.notable_types> <{NS}m.0t> .",
    f"<{NS}m.8> <{NS}type.object.key> <{NS}m.3> .",
    f"<{NS}m.8> <{NS}kg.x.y> <{NS}m.3> .",
    f"<{NS}m.8> <{NS}type.object.name> <{NS}m.4> .",
    f'<{NS}m.8> <{NS}people.person.height> "1.85"^^<http://www.w3.org/2001/XMLSchema#double> .',
    f"<{NS}m.é> <{NS}type.object.type> <{NS}film.film> .",  # a type read line by line ...
    f"<{NS}m.é> <{NS}type.object.type> <{NS}film.actor> .",  # ... and one in the block: order kept
    f"<{NS}m.1> <{NS}film.actor.film> <{NS}m.2> .  ",
    f"<{NS}m.1> <{NS}film.actor.film> <{NS}m.2> .\r",
    f"<{NS}m.1> <{NS}film.actor.film> <{NS}m.2 x> .",
    f"<{NS}m.{'x' * 2001}> <{NS}film.actor.film> <{NS}m.2> .",  # over the id limit: malformed
    "",
    "# a comment",
    f"<{NS}m.9> <{NS}film.actor.film> <{NS}m.1> . # comment",
    f"<{NS}m.9> <{NS}film.actor.film> <{NS}m.1> .",  # a repeat
]


@pytest.mark.parametrize("keep_all", [False, True])
@pytest.mark.parametrize("block_bytes", [64, 8 * 2**20])
def test_ntriples_blocks_read_like_the_record_parser(tmp_path, monkeypatch, keep_all, block_bytes):
    from loaders import records

    monkeypatch.setattr(records, "BLOCK_BYTES", block_bytes)
    path = tmp_path / "fb.nt"
    body = ("\ufeff" + "\n".join(BLOCK_LINES * 3)).encode("utf-8")
    cut = body.index(b"\n", 200) + 1
    path.write_bytes(body[:cut] + b"<bad \xff utf8> .\n" + body[cut:])  # and no line break at the end
    assert _spilled(path, blocks=True, keep_all=keep_all) == _spilled(path, blocks=False, keep_all=keep_all)
    counts, skipped, edges, facts, _, _ = _spilled(path, blocks=True, keep_all=keep_all)
    assert counts[0] == 3 * len(BLOCK_LINES) + 1 and counts[4] == 10  # 3 x 3 bad lines + the bad UTF-8 one
    names = [f for f in facts if f.startswith("m.1\tn\t")]
    assert names[:2] == ['m.1\tn\t"Éric First"', 'm.1\tn\t"Eric Second"']
    assert [f for f in facts if f.startswith("m.é\tt\t")][:2] == ["m.é\tt\tfilm.film", "m.é\tt\tfilm.actor"]
    assert ("type.object.key" in skipped) != keep_all


def test_ntriples_blocks_skip_a_line_over_the_limit(tmp_path, monkeypatch):
    from loaders import records

    monkeypatch.setattr(records, "MAX_LINE_BYTES", 2**20)
    monkeypatch.setattr(records, "BLOCK_BYTES", 2**16)
    path = tmp_path / "long.nt"
    edge = f"<{NS}m.1> <{NS}film.actor.film> <{NS}m.2> .\n".encode()
    path.write_bytes(edge + b"<" + b"x" * (3 * 2**20) + b"> .\n" + edge * 3)
    counts, _, edges, _, _, _ = _spilled(path, blocks=True)
    assert counts[0] == 5 and counts[4] == 1 and ":2: the line is longer than 1,048,576 bytes" in counts[5][0]
    assert len(edges) == 4
