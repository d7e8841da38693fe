"""Neo4j's own plan decides what is a read (issue 42 item 2), against the real server.

Each query of ``tests/unit/test_readonly.py::BYPASSES`` runs through :meth:`GraphStore.run_generated` with the text
filter switched off: only the EXPLAIN plan check stands between it and the server. None may change the graph, list
users or settings, or stop another session's query.
"""

from __future__ import annotations

import threading
import time

import pytest
from neo4j import GraphDatabase

import sgr.graph.store as store_mod
from sgr.core.config import Neo4jSettings
from sgr.core.errors import CypherError
from tests.unit.test_readonly import BYPASSES

pytestmark = pytest.mark.neo4j

MORE = {
    "load-csv": "LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l",
    "write": "CREATE (n:Entity {id: 'pwned'}) RETURN n",
    "write-in-subquery": "CALL { CREATE (n:Entity {id: 'pwned'}) RETURN n } RETURN n",
    "call-in-transactions": "MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS RETURN 1",
    "procedure-write": "CALL db.createLabel('Pwned')",
    "procedure-dbms": "CALL dbms.components() YIELD name RETURN name",
    "show-functions": "SHOW FUNCTIONS YIELD name RETURN name",
    "show-procedures": "SHOW PROCEDURES YIELD name RETURN name",
    "use-system": "USE system MATCH (n) RETURN n",
}


@pytest.fixture()
def no_text_filter(monkeypatch):
    """Only the plan check decides (the text filter, the first refusal, is switched off)."""
    monkeypatch.setattr(store_mod, "check_read_query", lambda query: None)


def _counts(store) -> tuple[int, int, list]:
    nodes = store.read("MATCH (n) RETURN count(n) AS n")[0]["n"]
    rels = store.read("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
    labels = sorted(store.read("CALL db.labels() YIELD label RETURN label"), key=str)
    return nodes, rels, labels


@pytest.mark.parametrize("query", list(BYPASSES.values()) + list(MORE.values()), ids=list(BYPASSES) + list(MORE))
def test_plan_check_refuses_without_the_text_filter(webqsp_graph, no_text_filter, query):
    before = _counts(webqsp_graph)
    with pytest.raises(CypherError) as err:
        webqsp_graph.run_generated(query, timeout_s=10)
    assert "\n" not in str(err.value)
    assert _counts(webqsp_graph) == before


@pytest.mark.parametrize("query", [
    "MATCH (n:Entity) RETURN count(n) AS n", "SHOW INDEXES YIELD name RETURN name",
    "CALL db.labels() YIELD label RETURN label", "CALL apoc.meta.stats() YIELD relTypesCount RETURN relTypesCount",
    "CALL db.index.fulltext.queryNodes('entity_name', 'Jamaica') YIELD node RETURN node.name LIMIT 3",
    "MATCH (e:Entity {name: 'Jamaica'})-[r]-(x) RETURN type(r) AS t, x.name AS x LIMIT 5",
    "MATCH (a:Entity {name: 'Jamaica'}), (b:Entity) WHERE a <> b WITH a, b LIMIT 5 "
    "MATCH p = shortestPath((a)-[*..3]-(b)) RETURN length(p) LIMIT 1",
    "MATCH (a:Entity {name: 'Jamaica'}), (b:Entity) WHERE a <> b WITH a, b LIMIT 5 "
    "MATCH p = allShortestPaths((a)-[*..4]-(b)) RETURN [r IN relationships(p) | type(r)] AS rels LIMIT 5",
    "MATCH (a:Entity) WHERE EXISTS { (a)--() } RETURN COUNT { (a)--() } AS d LIMIT 2",
    "CYPHER 5 MATCH (n) RETURN n LIMIT 1", "UNWIND [3, 1, 2] AS x WITH DISTINCT x ORDER BY x RETURN collect(x)",
])
def test_plan_check_admits_reads(webqsp_graph, no_text_filter, query):
    webqsp_graph.run_generated(query, timeout_s=30)


def test_terminate_cannot_stop_another_sessions_query(webqsp_graph, no_text_filter):
    """The attack of the issue: SHOW TRANSACTIONS … TERMINATE TRANSACTIONS killed a query of another session."""
    s = Neo4jSettings()
    victim: dict = {}

    def run_victim() -> None:
        with GraphDatabase.driver(webqsp_graph.uri, auth=(s.user, s.resolved_password())) as d, d.session() as ses:
            try:
                victim["rows"] = ses.run("UNWIND range(1, 30000000) AS victim WITH victim WHERE victim % 7 = 0 "
                                         "RETURN count(*) AS n").data()
            except Exception as exc:  # noqa: BLE001 - a terminated victim is what the test looks for
                victim["error"] = str(exc)

    t = threading.Thread(target=run_victim)
    t.start()
    attack = BYPASSES["terminate-after-show"]
    deadline = time.time() + 20
    seen = False
    while t.is_alive() and time.time() < deadline and not seen:
        with GraphDatabase.driver(webqsp_graph.uri, auth=(s.user, s.resolved_password())) as d, d.session() as ses:
            seen = any("victim" in (r["q"] or "") for r in ses.run(
                "SHOW TRANSACTIONS YIELD currentQuery AS q RETURN q").data())
        time.sleep(0.05)
    with pytest.raises(CypherError):
        webqsp_graph.run_generated(attack, timeout_s=10)
    t.join(120)
    assert seen, "the victim query ended before the attack could run"
    assert "error" not in victim and victim["rows"] == [{"n": 30000000 // 7}]


def test_explain_refuses_a_plan_that_writes(webqsp_graph, no_text_filter):
    with pytest.raises(CypherError, match="Create"):
        webqsp_graph.explain("CREATE (n:Entity {id: 'pwned'}) RETURN n")
    assert webqsp_graph.explain("MATCH (e:Entity)-[:`no.such.relation`]->(x) RETURN x")
