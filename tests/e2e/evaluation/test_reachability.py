"""The reachability ceiling against the real Neo4j: hand-built graphs and the WebQSP slice."""

from __future__ import annotations

from collections import defaultdict, deque

import pytest

from sgr.retrieval.entities import EntityLinker
from sgr.evaluation.metrics.reachability import ceiling, reachability
from sgr.graph.store import is_mid
from sgr.core.types import Question


def _load(store, triples, names=None):
    from loaders.writer import GraphBatch, write_graph

    b = GraphBatch()
    for h, r, t in triples:
        b.add_triple(h, r, t)
    write_graph(store, b)


def test_hops_cvt_collapse_and_evidence_shortcuts(clean_store):
    # A -r-> m.cvt1 -s-> B -r-> C ; D isolated-ish; evidence node links A and E directly
    _load(clean_store, [("A", "r", "m.cvt1"), ("m.cvt1", "s", "B"), ("B", "r", "C"), ("E", "r", "F")])
    clean_store.write("MATCH (a:Entity {id: 'A'}), (e:Entity {id: 'E'}) "
                      "CREATE (q:SgrQuestion)-[:SGR_EVIDENCE]->(a), (q)-[:SGR_EVIDENCE]->(e)")
    qs = [Question(id="b1", text="", topic_entities=["A"], answers=["B"]),
          Question(id="c", text="", topic_entities=["A"], answers=["C"]),
          Question(id="self", text="", topic_entities=["B"], answers=["B", "Z"]),
          Question(id="rev", text="", topic_entities=["C"], answers=["A"]),
          Question(id="e", text="", topic_entities=["A"], answers=["E"]),
          Question(id="missing", text="", topic_entities=["A"], answers=["nowhere"]),
          Question(id="notopic", text="", topic_entities=["nobody"], answers=["B"])]
    r1 = reachability(clean_store, qs, k=1)
    assert r1["b1"].reachable is False and r1["b1"].reachable_cvt is True  # the CVT hop is free
    assert r1["c"].reachable is False and r1["c"].reachable_cvt is False
    assert r1["self"].reachable is True  # an answer that is a topic entity: distance 0
    assert r1["e"].reachable is False and r1["e"].reachable_cvt is False  # no path through SgrQuestion
    assert r1["missing"].reachable is False and r1["missing"].answers_found == 0
    assert r1["notopic"].reachable is False and r1["notopic"].topics_found == 0
    r2 = reachability(clean_store, qs, k=2)
    assert r2["b1"].reachable and r2["c"].reachable_cvt and not r2["c"].reachable
    assert r2["rev"].reachable is False and r2["rev"].reachable_cvt is True  # undirected, CVT free
    r3 = reachability(clean_store, qs, k=3)
    assert r3["c"].reachable and r3["rev"].reachable and not r3["e"].reachable
    assert ceiling(r3) == pytest.approx(4 / 7)
    plain = reachability(clean_store, qs, k=1, collapse_cvt=False)
    assert plain["b1"].reachable_cvt is None


def test_per_question_k_defaults_to_hop_count(clean_store):
    _load(clean_store, [("A", "r", "B"), ("B", "r", "C")])
    q1 = Question(id="1", text="", topic_entities=["A"], answers=["C"], hops=1)
    q2 = Question(id="2", text="", topic_entities=["A"], answers=["C"], hops=2)
    q3 = Question(id="3", text="", topic_entities=["A"], answers=["C"])  # default k = 2
    r = reachability(clean_store, [q1, q2, q3])
    assert (r["1"].reachable, r["2"].reachable, r["3"].reachable) == (False, True, True)
    assert (r["1"].k, r["3"].k) == (1, 2)


def test_names_resolve_through_the_fulltext_index(clean_store):
    from loaders.writer import GraphBatch, write_graph

    b = GraphBatch()
    b.add_entity("m.0aaa", "Jamaica")
    b.add_entity("m.0bbb", 'Say "Hi" (song)')
    b.add_triple("m.0aaa", "r", "m.0bbb")
    write_graph(clean_store, b)
    found = EntityLinker(clean_store).resolve(["Jamaica", 'Say "Hi" (song)', "m.0aaa", "Jam", "!!"])
    assert found == {"Jamaica": ["m.0aaa"], 'Say "Hi" (song)': ["m.0bbb"], "m.0aaa": ["m.0aaa"], "Jam": [], "!!": []}
    r = reachability(clean_store, [Question(id="q", text="", topic_entities=["Jamaica"],
                                            answers=['Say "Hi" (song)'])], k=1)
    assert r["q"].reachable


def _bfs(adj, starts, cvt, k):
    """Undirected 0-1 BFS: cost 1 per edge, or 0 into a CVT when ``cvt``; nodes within cost ``k``."""
    dist = {s: 0 for s in starts}
    dq = deque(starts)
    while dq:
        n = dq.popleft()
        for m in adj[n]:
            c = dist[n] + (0 if cvt and is_mid(m) else 1)
            if c <= k and c < dist.get(m, 1 << 30):
                dist[m] = c
                (dq.appendleft if c == dist[n] else dq.append)(m)
    return dist


def test_webqsp_ceiling_matches_a_python_bfs(webqsp_graph, webqsp_records):
    from sgr.datasets import record_to_question

    adj = defaultdict(set)
    for rec in webqsp_records:
        for h, _, t in rec["graph"]:
            adj[h].add(t)
            adj[t].add(h)
    qs = [record_to_question(rec, f"rec{i}") for i, rec in enumerate(webqsp_records)]
    qs = [q for q in qs if q.answers]
    res = reachability(webqsp_graph, qs, k=2)
    n_plain = n_cvt = 0
    for q in qs:
        topics = [t for t in q.topic_entities if t in adj]
        plain = _bfs(adj, topics, cvt=False, k=2)
        exact_cvt = _bfs(adj, topics, cvt=True, k=2)
        assert res[q.id].reachable == any(a in plain for a in q.answers), q.id
        if res[q.id].reachable_cvt:  # the collapsed ceiling never over-estimates
            assert any(a in exact_cvt for a in q.answers), q.id
        assert res[q.id].reachable_cvt or not res[q.id].reachable
        n_plain += res[q.id].reachable
        n_cvt += bool(res[q.id].reachable_cvt)
    assert 0 < n_plain <= n_cvt <= len(qs)
