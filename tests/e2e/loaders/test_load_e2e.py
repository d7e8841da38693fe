"""End-to-end loader tests against the real Neo4j (the session server of tests/conftest.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from loaders.api import load_files
from sgr.graph.stats import graph_stats

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "loaders"
SGR = Path(sys.executable).with_name("sgr")


def graph_counts(store) -> dict[str, int]:
    one = lambda q: store.read(q)[0]["n"]  # noqa: E731
    return {
        "entities": one("MATCH (e:Entity) RETURN count(e) AS n"),
        "cvts": one("MATCH (e:CVT) RETURN count(e) AS n"),
        "rels": one("MATCH (:Entity)-[r]->(:Entity) RETURN count(r) AS n"),
        "distinct_rels": one("MATCH (h:Entity)-[r]->(t:Entity) WITH DISTINCT h, type(r) AS ty, t RETURN count(*) AS n"),
        "relations": one("MATCH (r:Relation) RETURN count(r) AS n"),
        "sources": one("MATCH (s:Source) RETURN count(s) AS n"),
    }


def distinct_triples_of(path: Path) -> set[tuple[str, str, str]]:
    """The fixture's distinct triples, read without the loader's code."""
    out = set()
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            out.add(tuple(x.strip() for x in (line.split("\t") if "\t" in line else line.split("|"))))
    return out


def stored_triples(store) -> set[tuple[str, str, str]]:
    rows = store.read("MATCH (h:Entity)-[r]->(t:Entity) RETURN h.id AS h, type(r) AS r, t.id AS t")
    return {(x["h"], x["r"], x["t"]) for x in rows}


def run_cli(args: list[str], uri: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "NEO4J_URI": uri, "COLUMNS": "200"}
    return subprocess.run([str(SGR), *args], capture_output=True, text=True, env=env, timeout=timeout)


def test_counts_equal_distinct_triples_of_fixture(clean_store):
    path = FIX / "triples_small.txt"
    expected = distinct_triples_of(path)
    report = load_files(clean_store, [path], fmt="triples")
    assert report.files[0].triples == len(expected)
    assert stored_triples(clean_store) == expected
    c = graph_counts(clean_store)
    assert c["rels"] == c["distinct_rels"] == len(expected)
    assert c["entities"] == len({h for h, _, _ in expected} | {t for _, _, t in expected})
    assert c["cvts"] == 1  # m.0c9v2_q has no name
    assert c["relations"] == len({r for _, r, _ in expected}) and c["sources"] == 1


def test_rog_and_ntriples_into_one_graph(clean_store):
    rog_expected = set()
    for line in (FIX / "rog_small.jsonl").read_text().splitlines():
        if line.strip():
            rog_expected |= {tuple(t) for t in json.loads(line)["graph"]}
    load_files(clean_store, [FIX / "rog_small.jsonl", FIX / "freebase_small.nt"])
    triples = stored_triples(clean_store)
    assert rog_expected <= triples
    assert ("m.0c9v2_q", "government.government_position_held.office_holder", "m.0b6k40") in triples
    jam = clean_store.read("MATCH (e:Entity {id: 'm.03_r3'}) RETURN e.name AS name, "
                           "e.`location.statistical_region.population` AS pop, labels(e) AS labels")[0]
    assert jam["name"] == "Jamaica" and jam["pop"] == 2890299 and "CVT" not in jam["labels"]
    # the CVT id appears in both files; a MID without a name stays :CVT
    cvt = clean_store.read("MATCH (e:Entity {id: 'm.0c9v2_q'}) RETURN labels(e) AS l, e.name AS n")[0]
    assert "CVT" in cvt["l"] and cvt["n"] is None
    assert not clean_store.read("MATCH ()-[r:`type.object.type`]->() RETURN r LIMIT 1")  # housekeeping skipped
    hits = clean_store.read("CALL db.index.fulltext.queryNodes('entity_name', 'Holness') "
                            "YIELD node RETURN node.id AS id")
    assert {h["id"] for h in hits} == {"Andrew Holness", "m.0b6k40"}


def test_name_arriving_later_removes_cvt(clean_store, tmp_path):
    first = tmp_path / "edges.txt"
    first.write_text("m.0abc|x.y.z|m.0def\n")
    load_files(clean_store, [first])
    assert graph_counts(clean_store)["cvts"] == 2
    names = tmp_path / "names.nt"
    names.write_text(f'<{"http://rdf.freebase.com/ns/"}m.0abc> <http://rdf.freebase.com/ns/type.object.name> "Abc"@en .\n')
    load_files(clean_store, [names])
    rows = clean_store.read("MATCH (e:Entity) RETURN e.id AS id, e.name AS name, 'CVT' IN labels(e) AS cvt ORDER BY id")
    assert rows == [{"id": "m.0abc", "name": "Abc", "cvt": False}, {"id": "m.0def", "name": None, "cvt": True}]


def test_loading_twice_changes_no_counts(clean_store):
    paths = [FIX / "triples_small.txt", FIX / "rog_small.jsonl", FIX / "freebase_small.nt"]
    load_files(clean_store, paths)
    before = graph_counts(clean_store)
    again = load_files(clean_store, paths)
    assert [f.status for f in again.files] == ["unchanged"] * 3
    assert graph_counts(clean_store) == before
    forced = load_files(clean_store, paths, force=True)  # really writes again, through MERGE
    assert [f.status for f in forced.files] == ["loaded"] * 3
    assert graph_counts(clean_store) == before
    assert before["rels"] == before["distinct_rels"]


def test_resume_after_kill_minus_9(clean_store, neo4j_uri, tmp_path):
    n_heads, per_head = 1500, 10  # 5,500 entities: enough for bulk mode (full-text index rebuilt)
    big = tmp_path / "big.txt"
    with open(big, "w") as fh:
        for i in range(n_heads):
            for j in range(per_head):
                fh.write(f"movie {i}|rel_{j % 4}|person {(i * 7 + j) % 4000}\n")
    expected = distinct_triples_of(big)
    env = {**os.environ, "NEO4J_URI": neo4j_uri}
    proc = subprocess.Popen([str(SGR), "load", "triples", str(big), "--batch-size", "500"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    rels = 0
    try:
        while time.time() < deadline and proc.poll() is None:
            rels = clean_store.read("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
            if rels > 0:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the load finished before it could be killed; make the file bigger"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    partial = graph_counts(clean_store)
    assert 0 < partial["rels"] < len(expected), "expected a load killed half-way"
    assert partial["sources"] == 0  # no Source record for an unfinished file

    rerun = load_files(clean_store, [big], fmt="triples")  # the same load, run again (in-process: faster)
    assert rerun.files[0].status == "loaded"
    final = graph_counts(clean_store)
    assert final["rels"] == final["distinct_rels"] == len(expected)
    assert final["entities"] == len({h for h, _, _ in expected} | {t for _, _, t in expected})
    assert final["sources"] == 1 and final["relations"] == 4
    names = clean_store.read("SHOW INDEXES YIELD name, state WHERE name = 'entity_name' RETURN state")
    assert names and names[0]["state"] == "ONLINE"


def test_stats_leave_bookkeeping_out(clean_store):
    load_files(clean_store, [FIX / "triples_small.txt", FIX / "freebase_small.nt"])
    clean_store.write("MATCH (e:Entity {id: 'Jamaica'}) CREATE (q:SgrQuestion {id: 'q'})-[:SGR_EVIDENCE]->(e) "
                      "CREATE (:SgrMeta {k: 1})")
    st = graph_stats(clean_store, top=3)
    c = graph_counts(clean_store)
    assert st.nodes == st.entities == c["entities"]
    assert st.cvts == c["cvts"]
    assert st.relationships == c["rels"] == len(distinct_triples_of(FIX / "triples_small.txt")) + 4
    assert st.relation_types == len(clean_store.relation_types())
    assert all(not r.name.startswith("SGR_") for r in st.top_relations) and len(st.top_relations) == 3
    assert st.top_relations[0].count >= st.top_relations[-1].count
    assert {Path(s.path).name for s in st.sources} == {"triples_small.txt", "freebase_small.nt"}
    assert all(s.sha256 and s.loaded_at for s in st.sources)


def test_cli_load_and_stats_json(clean_store, neo4j_uri):
    res = run_cli(["load", "freebase", str(FIX / "rog_small.jsonl")], neo4j_uri)
    assert res.returncode == 0, res.stderr
    assert "rog_small.jsonl" in res.stdout
    res = run_cli(["stats", "--json"], neo4j_uri)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["relationships"] == 7 and data["cvts"] == 1 and data["sources"][0]["triples"] == 7


def _one_error_line(res: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in res.stderr + res.stdout
    lines = [x for x in res.stderr.splitlines() if x.strip() and "error:" in x]
    assert len(lines) == 1, res.stderr
    return lines[0]


def test_cli_missing_file_is_one_line(neo4j_uri, tmp_path):
    res = run_cli(["load", "triples", str(tmp_path / "missing.txt")], neo4j_uri)
    assert res.returncode != 0
    assert "no such file" in _one_error_line(res)


def test_cli_unreachable_neo4j_is_one_line(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = run_cli(["load", "triples", str(FIX / "triples_small.txt")], f"bolt://127.0.0.1:{port}")
    assert res.returncode == 3
    assert "not reachable" in _one_error_line(res)


def test_cli_error_budget(clean_store, neo4j_uri):
    bad = FIX / "triples_bad.txt"
    res = run_cli(["load", "triples", str(bad), "--max-errors", "2"], neo4j_uri)
    assert res.returncode == 4 and "Traceback" not in res.stderr
    assert f"{bad}:2:" in res.stderr and "--max-errors" in res.stderr
    assert graph_counts(clean_store)["rels"] == 0  # nothing from the file past the budget
    res = run_cli(["load", "triples", str(bad), "--max-errors", "10"], neo4j_uri)
    assert res.returncode == 0, res.stderr
    assert "4 malformed lines" in res.stderr and f"{bad}:3:" in res.stderr
    assert graph_counts(clean_store)["rels"] == 2


def test_a_relation_name_over_the_limit_leaves_nothing_half_loaded(clean_store, neo4j_uri, tmp_path):
    """Issue 42 item 7: a 70,000-character relation committed relationships with no vocabulary entry or source
    record, and failed the same way on every rerun. It is now a malformed line, found before anything is written."""
    path = tmp_path / "long.txt"
    path.write_text("A|rel.ok|B\n" + "C|" + "r" * 70_000 + "|D\n" + "E|rel.ok|F\n")
    for _ in range(2):  # the rerun finds the file loaded
        res = run_cli(["load", "triples", str(path), "--max-errors", "5"], neo4j_uri)
        assert res.returncode == 0, res.stderr
    assert "the relation is 70,000 characters long" in res.stderr or "already loaded" in res.stdout
    counts = graph_counts(clean_store)
    assert counts["rels"] == 2 and counts["relations"] == 1 and counts["sources"] == 1
    assert stored_triples(clean_store) == {("A", "rel.ok", "B"), ("E", "rel.ok", "F")}


def test_a_file_named_like_markup_loads_and_stats_still_print(clean_store, neo4j_uri, tmp_path):
    """Issue 42 item 4: a loaded file named a[/b]c.txt made every later `sgr stats` fail (Rich MarkupError)."""
    folder = tmp_path / "a["
    folder.mkdir()
    path = folder / "b]c.txt"  # the path holds "a[/b]c.txt", a Rich closing tag
    path.write_text("A|rel.ok|B\n")
    res = run_cli(["load", "triples", str(path)], neo4j_uri)
    assert res.returncode == 0, res.stderr
    res = run_cli(["stats"], neo4j_uri)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert "a[/b]c.txt" in "".join(ln.strip() for ln in res.stdout.splitlines())
