"""Static read-only checks and Neo4j notifications → problems (cypher/validate.py)."""

import pytest

from cypher.validate import explain_check, relationship_types_in, static_check, validate


def kinds(problems):
    return {p.kind for p in problems}


def test_read_query_passes_static_check():
    q = "MATCH (e:Entity {name: 'a'})-[:`x.y`]->(n) RETURN n.name"
    assert static_check(q, {"x.y"}) == []


@pytest.mark.parametrize("query", [
    "MATCH (n) DETACH DELETE n RETURN 1",
    "CREATE (n:Entity {id: 'x'}) RETURN n",
    "MATCH (n) SET n.name = 'x' RETURN n",
    "MERGE (n:Entity {id: 'x'}) RETURN n",
    "LOAD CSV FROM 'file:///x' AS row RETURN row",
    "CALL apoc.create.node(['X'], {}) YIELD node RETURN node",
])
def test_writes_are_rejected(query):
    assert "write" in kinds(static_check(query))


def test_keywords_inside_strings_are_data():
    q = "MATCH (e:Entity {name: 'CREATE SET DELETE'}) RETURN e"
    assert static_check(q) == []


def test_missing_return_multiple_statements_and_empty():
    assert "no_return" in kinds(static_check("MATCH (n) WITH n"))
    assert "multiple_statements" in kinds(static_check("MATCH (n) RETURN n; MATCH (m) RETURN m"))
    assert kinds(static_check("")) == {"empty"}


def test_relationship_types_outside_the_vocabulary_are_named():
    q = "MATCH (e)-[:`a.b`|made.up]->(x)<-[r:`c.d`]-(y) RETURN x"
    assert relationship_types_in(q) == ["a.b", "made.up", "c.d"]
    probs = static_check(q, {"a.b", "c.d"})
    assert [(p.kind, p.detail) for p in probs] == [("unknown_relationship_type", "made.up")]


def test_explain_reports_unknown_type_and_syntax_errors(webqsp_graph):
    unknown = explain_check(webqsp_graph, "MATCH (e:Entity)-[:`no.such.type`]->(x) RETURN x.name")
    assert "unknown_relationship_type" in kinds(unknown)
    assert any("no.such.type" in (p.detail or p.message) for p in unknown)
    bad = explain_check(webqsp_graph, "MATCH (e:Entity RETURN e")
    assert kinds(bad) == {"syntax"}
    ok = validate(webqsp_graph, "MATCH (e:Entity {name: 'Jamaica'})-[:`location.country.languages_spoken`]->(x) "
                                "RETURN x.name", webqsp_graph.relation_types())
    assert ok.ok, ok.problems
