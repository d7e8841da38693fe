"""Streaming loads (chunk boundaries, late names, types), the deadlock-free schedule, and the bulk
path (neo4j-admin import) giving the same graph as the transactional path. Real Neo4j throughout."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from loaders import bulk
from loaders import spill as spill_mod
from loaders.api import load_files
from loaders.schedule import bucket, partition_rounds, round_robin
from sgr.graph.stats import graph_stats

NS = "http://rdf.freebase.com/ns/"
FIX_TRIPLES = Path(__file__).resolve().parents[2] / "fixtures" / "loaders" / "triples_small.txt"
XSD = "http://www.w3.org/2001/XMLSchema#"


def fb(s: str, p: str, o: str) -> str:
    return f"<{NS}{s}> <{NS}{p}> <{NS}{o}> ."


def lit(s: str, p: str, text: str, suffix: str = "") -> str:
    return f'<{NS}{s}> <{NS}{p}> "{text}"{suffix} .'


def tricky_ntriples(path: Path, entities: int = 60) -> Path:
    """A Freebase-shaped file exercising what the CSV path must carry exactly."""
    lines = []
    for i in range(entities):
        lines.append(fb(f"m.e{i}", "people.person.place_of_birth", f"m.e{(i * 7 + 3) % entities}"))
        lines.append(fb(f"m.e{i}", "film.actor.film", f"m.cvt{i % 9}"))  # CVT hubs
        lines.append(fb(f"m.cvt{i % 9}", "film.performance.film", f"m.e{(i + 1) % entities}"))
        lines.append(fb(f"m.e{i}", "type.object.type", "people.person"))
        if i % 4 == 0:
            lines.append(lit(f"m.e{i}", "people.person.height_meters", f"1.{i:02d}", f"^^<{XSD}double>"))
        if i % 5 == 0:
            lines.append(lit(f"m.e{i}", "people.person.nickname", f"nick{i}"))
            lines.append(lit(f"m.e{i}", "people.person.nickname", f"alias{i}"))  # multi-valued
        lines.append(lit(f"m.e{i}", "x.y.mixed", str(i), f"^^<{XSD}integer>" if i % 2 else ""))  # int or str
    lines.append(fb("m.e0", "people.person.place_of_birth", "m.e3"))  # repeat of a triple (i = 0)
    lines.append(lit("m.e1", "type.object.name", 'Comma, \\"quoted\\"\\nand a new line', "@en"))
    lines.append(fb("m.e2", "common.topic.notable_types", "m.type1"))
    lines.append(lit("m.e2", "x.y.empty", ""))
    lines.append("this line is malformed")
    # names last: every entity met earlier in a triple loses :CVT (late names), CVT hubs stay CVTs
    lines += [lit(f"m.e{i}", "type.object.name", f"Entity {i}", "@en") for i in range(2, entities)]
    path.write_text("\n".join(lines) + "\n")
    return path


def graph_dump(store) -> dict:
    """Every node (labels, properties) and relationship, and the bookkeeping, for comparison."""
    nodes = store.read("MATCH (n) WHERE NOT n:Source RETURN labels(n) AS l, properties(n) AS p")
    rels = store.read("MATCH (h)-[r]->(t) RETURN h.id AS h, type(r) AS r, t.id AS t")
    sources = store.read("MATCH (s:Source) RETURN s.path AS path, s.sha256 AS sha, s.triples AS n, "
                         "s.format AS f, s.entities AS e, s.literals AS lit, s.malformed AS bad")
    indexes = store.read("SHOW INDEXES YIELD name, type, labelsOrTypes, properties, state "
                         "WHERE type <> 'LOOKUP' AND name IN $own "
                         "RETURN name, type, labelsOrTypes, properties, state ORDER BY name",
                         {"own": ["entity_id", "relation_name", "source_path", "entity_name", "entity_name_exact"]})
    key = lambda d: repr(sorted(d.items()))  # noqa: E731
    return {"nodes": sorted((sorted(n["l"]), key(n["p"])) for n in nodes),
            "rels": sorted((r["h"], r["r"], r["t"]) for r in rels),
            "sources": sources, "indexes": indexes}



@pytest.fixture(scope="module")
def own_server(tmp_path_factory):
    """A store on an embedded server of its own (its own SGR_HOME): the bulk path stops and restarts the server it
    imports into, which must not be the one the rest of the suite shares."""
    import os

    from sgr.graph import server
    from sgr.graph.store import GraphStore

    saved = {k: os.environ.get(k) for k in ("SGR_HOME", "NEO4J_URI")}
    home = tmp_path_factory.mktemp("bulk-home")
    os.environ["SGR_HOME"] = str(home)
    os.environ.pop("NEO4J_URI", None)
    info = server.start(heap="768m", pagecache="128m")
    store = GraphStore(info.uri)
    try:
        yield store
    finally:
        store.close()
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture()
def bulk_store(own_server):
    own_server.clear()
    own_server.ensure_schema()
    return own_server


def test_chunk_boundaries_and_late_names_give_one_graph(clean_store, tmp_path, monkeypatch):
    path = tricky_ntriples(tmp_path / "fb.nt")
    load_files(clean_store, [path], batch_size=20_000)
    whole = graph_dump(clean_store)
    assert len(whole["rels"]) == 60 * 3  # the repeated triple stored once; the type statements are no triples
    clean_store.clear()
    monkeypatch.setattr(spill_mod, "RECENT_IDS", 3)  # the spill's recent-id memory overflows all the time
    load_files(clean_store, [path], batch_size=7, workers=2)  # chunks split entities' facts and hubs
    assert graph_dump(clean_store)["nodes"] == whole["nodes"] and graph_dump(clean_store)["rels"] == whole["rels"]
    row = clean_store.read("MATCH (e:Entity {id: 'm.e59'}) RETURN e.name AS n, labels(e) AS l, e.types AS t")[0]
    assert row == {"n": "Entity 59", "l": ["Entity"], "t": ["people.person"]}  # named at the end of the file
    assert clean_store.read("MATCH (c:CVT) RETURN count(c) AS n")[0]["n"] == 9 + 1  # hubs, and m.e0 (no name)
    assert clean_store.read("MATCH (e:Entity {id: 'm.e1'}) RETURN e.name AS n")[0]["n"] == 'Comma, "quoted"\nand a new line'
    e5 = clean_store.read("MATCH (e:Entity {id: 'm.e5'}) RETURN e.`people.person.nickname` AS nick")[0]
    assert e5["nick"] == ["nick5", "alias5"]


def test_types_stored_and_merged_on_a_later_load(clean_store, tmp_path):
    a = tmp_path / "a.nt"
    a.write_text("\n".join([fb("m.x", "type.object.type", "film.actor"), fb("m.x", "film.actor.film", "m.f"),
                            lit("m.x", "type.object.name", "X", "@en")]) + "\n")
    b = tmp_path / "b.nt"
    b.write_text("\n".join([fb("m.x", "common.topic.notable_types", "m.0type"),
                            fb("m.x", "type.object.type", "film.actor")]) + "\n")
    load_files(clean_store, [a])
    assert clean_store.read("MATCH (e:Entity {id: 'm.x'}) RETURN e.types AS t")[0]["t"] == ["film.actor"]
    load_files(clean_store, [b])
    assert clean_store.read("MATCH (e:Entity {id: 'm.x'}) RETURN e.types AS t")[0]["t"] == ["film.actor", "m.0type"]
    # the type statements are not triples unless --keep-all
    assert clean_store.read("MATCH ()-[r:`type.object.type`]->() RETURN count(r) AS n")[0]["n"] == 0


def test_round_robin_schedule_never_shares_a_node():
    for buckets in (2, 4, 6):
        rounds = round_robin(buckets)
        pairs = [p for r in rounds for p in r]
        assert sorted(pairs) == sorted(itertools.combinations(range(buckets), 2))
        assert all(len({x for p in r for x in p}) == buckets for r in rounds)
    rows = [(f"m.{i % 13}", "r", f"m.{(i * 5) % 17}") for i in range(500)]
    scheduled = partition_rounds(rows, workers=2)
    assert sorted(r for jobs in scheduled for job in jobs for r in job) == sorted(rows)
    for jobs in scheduled:
        seen = [{n for h, _, t in job for n in (h, t)} for job in jobs]
        for x, y in itertools.combinations(seen, 2):
            assert not x & y
    assert bucket("m.1", 4) == bucket("m.1", 4)


@pytest.mark.parametrize("helper_min_triples", [None, 1])  # 1: the large input's writers (column batches, helper)
def test_bulk_path_gives_the_transactional_graph(bulk_store, tmp_path, monkeypatch, helper_min_triples):
    if helper_min_triples is not None:
        monkeypatch.setattr(bulk, "HELPER_MIN_TRIPLES", helper_min_triples)
    path = tricky_ntriples(tmp_path / "fb.nt")
    load_files(bulk_store, [path], bulk=False)
    tx_graph, tx_stats = graph_dump(bulk_store), graph_stats(bulk_store).to_dict()
    bulk_store.clear()
    bulk_store.write("MATCH (n) DETACH DELETE n")
    report = load_files(bulk_store, [path], bulk=True)
    assert report.bulk is not None and "neo4j-admin import" in report.bulk.summary
    assert report.bulk.fixups > 0  # the mixed, multi-valued and empty literals went through Cypher
    bulk_graph, bulk_stats = graph_dump(bulk_store), graph_stats(bulk_store).to_dict()
    assert bulk_graph == tx_graph
    for s in (tx_stats, bulk_stats):
        for src in s["sources"]:
            src.pop("loaded_at")
    assert bulk_stats == tx_stats
    assert report.files[0].malformed_count == 1
    from sgr.graph import server

    # restarted after the import with the heap and page cache the fixture started it with, not the defaults
    args = Path(f"/proc/{server.status().pid}/cmdline").read_bytes().decode().split("\0")
    assert "-Xmx768m" in args and args[args.index("--pagecache") + 1] == "128m"


def test_bulk_refuses_a_database_that_is_not_empty(bulk_store, tmp_path):
    from sgr.core.errors import LoadError

    path = tricky_ntriples(tmp_path / "fb.nt", entities=10)
    load_files(bulk_store, [path])
    with pytest.raises(LoadError, match="not empty"):
        load_files(bulk_store, [path], bulk=True, force=True)


def test_large_input_into_an_empty_database_chooses_the_bulk_path(bulk_store, tmp_path, monkeypatch):
    from loaders import api
    from loaders.api import LoadProgress

    class Notices(LoadProgress):
        def __init__(self) -> None:
            self.lines: list[str] = []

        def notice(self, message: str) -> None:
            self.lines.append(message)

    monkeypatch.setattr(api, "BULK_AUTO_MIN_BYTES", 1)  # every input counts as large
    first = Notices()
    report = load_files(bulk_store, [tricky_ntriples(tmp_path / "a.nt", entities=10)], bulk=None, progress=first)
    assert report.bulk is not None and any("using the bulk path" in line for line in first.lines)
    second = Notices()
    report = load_files(bulk_store, [FIX_TRIPLES], bulk=None, progress=second)
    assert report.bulk is None and any("transactional path is used" in line and "not empty" in line
                                       for line in second.lines)


def test_exact_name_lookup_seeks_an_index_after_a_large_load(bulk_store, tmp_path):
    from neo4j import GraphDatabase

    from sgr.core.config import Neo4jSettings

    load_files(bulk_store, [tricky_ntriples(tmp_path / "fb.nt", entities=2000)])  # indexes deferred, then built
    password = Neo4jSettings().resolved_password()
    with GraphDatabase.driver(bulk_store.uri, auth=("neo4j", password) if password else None) as driver, \
            driver.session() as session:  # the plan: no label scan
        plan = session.run("EXPLAIN MATCH (e:Entity) WHERE e.name = $n RETURN e.id", n="Entity 7").consume().plan
    ops = []
    stack = [plan]
    while stack:
        node = stack.pop()
        ops.append(node["operatorType"].split("@")[0])
        stack.extend(node.get("children", []))
    assert "NodeIndexSeek" in ops and "NodeByLabelScan" not in ops
    assert bulk_store.read("MATCH (e:Entity) WHERE e.name = 'Entity 7' RETURN e.id AS id")[0]["id"] == "m.e7"


def test_a_fresh_large_load_creates_its_deferred_schema_once_after_the_writes(clean_store, tmp_path, monkeypatch):
    """Into a store without entities, the name indexes and the id constraint are not created before the load (only
    to be dropped again): the first data write comes before them, and after the load every schema element is
    online."""
    from loaders.writer import DEFERRED_CONSTRAINT, DEFERRED_INDEXES
    from sgr.graph.store import SCHEMA_STATEMENTS, GraphStore, schema_name

    clean_store.write(f"DROP CONSTRAINT {DEFERRED_CONSTRAINT} IF EXISTS")  # as a new store: none of them yet
    for index in DEFERRED_INDEXES:
        clean_store.write(f"DROP INDEX {index} IF EXISTS")
    statements = []
    write = GraphStore.write
    monkeypatch.setattr(GraphStore, "write", lambda self, q, *a, **k: (statements.append(q), write(self, q, *a, **k))[1])
    load_files(clean_store, [tricky_ntriples(tmp_path / "fb.nt", entities=2000)], bulk=False)
    deferred = {DEFERRED_CONSTRAINT, *DEFERRED_INDEXES}
    first_data = next(i for i, q in enumerate(statements) if q.lstrip().startswith("UNWIND"))
    created = [i for i, q in enumerate(statements) if q.startswith("CREATE") and schema_name(q) in deferred]
    assert created and min(created) > first_data
    online = {r["name"] for r in clean_store.read("SHOW INDEXES YIELD name, state WHERE state = 'ONLINE' "
                                                  "RETURN name")}  # a constraint's index has its name
    assert {schema_name(s) for s in SCHEMA_STATEMENTS} <= online
