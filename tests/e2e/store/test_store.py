"""The store layer against the real Neo4j: schema, read-only generated queries, caps, EXPLAIN."""

from __future__ import annotations

import pytest

from sgr.core.errors import CypherError


def test_schema_is_idempotent(clean_store):
    clean_store.ensure_schema()
    rows = clean_store.read("SHOW CONSTRAINTS YIELD name RETURN collect(name) AS names")
    assert {"entity_id", "relation_name", "source_path"} <= set(rows[0]["names"])
    idx = clean_store.read("SHOW INDEXES YIELD name, type WHERE type = 'FULLTEXT' RETURN collect(name) AS n")
    assert "entity_name" in idx[0]["n"]


def test_generated_query_is_read_only(clean_store):
    with pytest.raises(CypherError, match="read"):
        clean_store.run_generated("CREATE (:Entity {id: 'x'})")
    assert clean_store.read("MATCH (n) RETURN count(n) AS n")[0]["n"] == 0


def test_generated_query_row_cap_and_timeout(clean_store):
    res = clean_store.run_generated("UNWIND range(1, 5000) AS i RETURN i", row_cap=25)
    assert len(res.rows) == 25 and res.truncated
    with pytest.raises(CypherError):
        clean_store.run_generated(
            "UNWIND range(1, 1000000000) AS i WITH i WHERE i % 7 = 99 RETURN count(i)", timeout_s=0.5)


def test_explain_reports_unknown_relationship_type(webqsp_graph):
    notes = webqsp_graph.explain("MATCH (e:Entity)-[:`no.such.relation`]->(x) RETURN x")
    assert any("UnknownRelationshipType" in n["code"] for n in notes)
    assert webqsp_graph.explain(
        "MATCH (e:Entity)-[:`location.country.languages_spoken`]->(x) RETURN x") == []
    with pytest.raises(CypherError):
        webqsp_graph.explain("MATCH (e RETURN e")


def test_graph_version_changes_with_data(clean_store):
    v0 = clean_store.graph_version()
    clean_store.write("CREATE (:Entity {id: 'a', name: 'a'})")
    assert clean_store.graph_version() != v0


def test_compiled_queries_of_one_shape_are_explained_once(webqsp_graph, monkeypatch, request):
    """The compiler's queries share their plan check by shape (``plan_key``): a second relation path of the same shape
    runs without a second EXPLAIN and returns its own rows; a text without a key is explained per text."""
    import sgr.graph.store as store_mod
    from cypher.compile import compile_schema_path

    explained = []
    check = store_mod.check_plan
    monkeypatch.setattr(store_mod, "check_plan", lambda *a: (explained.append(a), check(*a))[1])
    store = store_mod.GraphStore(webqsp_graph.uri)  # its own memory of plans checked (the fixture's is shared)
    request.addfinalizer(store.close)
    rel = store.read("MATCH (s:Entity)-[r]->(x:Entity) WHERE NOT x:CVT AND NOT s:CVT "
                     "RETURN s.id AS s, type(r) AS t, x.id AS x LIMIT 1")[0]
    other = store.read("MATCH (s:Entity)-[r]->(x:Entity) WHERE NOT x:CVT AND NOT s:CVT AND type(r) <> $t "
                       "RETURN s.id AS s, type(r) AS t, x.id AS x LIMIT 1", {"t": rel["t"]})[0]
    first = compile_schema_path(rel["s"], [(rel["t"], "out")])
    second = compile_schema_path(other["s"], [(other["t"], "out")])
    assert first.cypher != second.cypher and first.plan_key == second.plan_key
    assert rel["x"] in {r["id"] for r in first.run(store).rows}
    assert other["x"] in {r["id"] for r in second.run(store).rows}
    assert len(explained) == 1
    store.run_generated(first.cypher, first.params)  # no key: its own text, explained
    store.run_generated(second.cypher, second.params)
    assert len(explained) == 3
