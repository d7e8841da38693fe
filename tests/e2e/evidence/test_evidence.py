"""Saved evidence against the real Neo4j: subgraph roles, saving without touching data, redraw queries."""

from __future__ import annotations

import hashlib
import json

import pytest

import sgr.evidence as evidence
from sgr.core.errors import InputError
from sgr.graph.store import is_mid
from sgr.core.types import Answer, Prediction, ReasoningPath


def ids(g, role: str) -> list[str]:
    return [n.id for n in g.nodes if n.role == role]


def data_fingerprint(store) -> dict:
    """Everything about the data graph (Entity nodes, their labels/properties, data relationships)."""
    nodes = store.read("MATCH (e:Entity) RETURN e.id AS id, labels(e) AS labels, properties(e) AS props ORDER BY id")
    rels = store.read("MATCH (h:Entity)-[r]->(t:Entity) RETURN h.id AS h, type(r) AS r, t.id AS t, properties(r) AS p "
                      "ORDER BY h, r, t")
    blob = json.dumps([nodes, rels], sort_keys=True, default=str)
    return {"entities": len(nodes), "relationships": len(rels), "sha": hashlib.sha256(blob.encode()).hexdigest(),
            "version": store.graph_version(), "types": store.relation_types()}


def test_subgraph_roles_and_cvt(webqsp_graph, gold, record):
    rec = record("WebQTest-1")  # James K. Polk -> government position CVT -> office
    pred = gold.gold_prediction(webqsp_graph, rec)
    assert pred.paths, "the gold relation path must be walkable in the loaded graph"
    g = evidence.evidence_subgraph(webqsp_graph, pred)
    assert ids(g, evidence.ROLE_TOPIC) == [rec["q_entity"][0]]
    assert set(ids(g, evidence.ROLE_ANSWER)) == {a.id for a in pred.answers}
    assert set(ids(g, evidence.ROLE_ANSWER)) <= set(rec["a_entity"])
    # the middle of each 2-hop path is a CVT: a MID with no name, labelled :CVT in the store
    middles = {p.nodes[1] for p in pred.paths}
    for mid in middles:
        node = next(n for n in g.nodes if n.id == mid)
        assert node.role == evidence.ROLE_PATH and node.cvt and is_mid(mid) and node.name is None
    assert all(e.in_graph for e in g.edges) and all(n.in_graph for n in g.nodes)
    # each edge is stored head->tail; the paths walk some of them backwards
    assert len(g.edges) == len({t for p in pred.paths for t in p.triples()})
    ranks = [a.id for a in pred.answers]
    assert [n.id for n in sorted((n for n in g.nodes if n.role == "answer"), key=lambda n: n.rank)] == ranks


def test_invented_edges_and_unknown_nodes_are_flagged(webqsp_graph):
    rows = webqsp_graph.read("MATCH (h:Entity)-[r:`location.country.languages_spoken`]->(t:Entity) "
                             "RETURN h.id AS h, t.id AS t ORDER BY h, t LIMIT 1")
    h, t = rows[0]["h"], rows[0]["t"]
    real = ReasoningPath(nodes=[h, t], relations=["location.country.languages_spoken"], score=0.9)
    reversed_ = ReasoningPath(nodes=[h, t], relations=["location.country.languages_spoken"], score=0.5,
                              directions=["in"])  # claims t -> h, which the store does not hold
    ghost = ReasoningPath(nodes=[h, "no such entity"], relations=["made.up.relation"], score=0.1)
    pred = Prediction(question_id="q", answers=[Answer(text=t, id=t, score=0.9)], paths=[ghost, reversed_, real])
    g = evidence.evidence_subgraph(webqsp_graph, pred)
    assert [p.score for p in g.paths] == [0.9, 0.5, 0.1]
    by_key = {(e.source, e.type, e.target): e for e in g.edges}
    assert by_key[(h, "location.country.languages_spoken", t)].in_graph
    assert not by_key[(t, "location.country.languages_spoken", h)].in_graph
    assert not by_key[(h, "made.up.relation", "no such entity")].in_graph
    assert g.missing == ["no such entity"]
    qid = evidence.save_evidence(webqsp_graph, "which language?", pred, "test")
    saved = evidence.load_evidence(webqsp_graph, qid)
    assert {link.id for link in saved.links} == {h, t}  # the unknown id is not linked
    assert len(saved.paths) == 3


def test_save_show_clear_leave_data_untouched(webqsp_graph, gold, record):
    before = data_fingerprint(webqsp_graph)
    rec = record("WebQTest-0")
    pred = gold.gold_prediction(webqsp_graph, rec)
    g = evidence.evidence_subgraph(webqsp_graph, pred)
    qid = evidence.save_evidence(webqsp_graph, rec["question"], pred, "gold-walk", graph=g)
    qid2 = evidence.save_evidence(webqsp_graph, rec["question"], pred, "other")
    assert qid != qid2
    assert data_fingerprint(webqsp_graph) == before  # saved evidence sits beside the data

    saved = evidence.load_evidence(webqsp_graph, qid)
    assert saved.text == rec["question"] and saved.method == "gold-walk" and saved.question_id == rec["id"]
    assert saved.answers == pred.answer_texts and saved.answer_ids == [a.id for a in pred.answers]
    assert saved.cypher == pred.cypher
    assert {(lk.id, lk.role, lk.rank) for lk in saved.links} == {(n.id, n.role, n.rank) for n in g.nodes}
    assert saved.asked_at.startswith("20")
    back = saved.to_prediction()
    assert [(p.nodes, p.relations, p.directions) for p in back.paths] == \
        [(p.nodes, p.relations, p.directions) for p in g.paths]
    assert evidence.evidence_subgraph(webqsp_graph, back) == g

    listed = evidence.list_evidence(webqsp_graph)
    assert [s.id for s in listed] == [qid2, qid]  # newest first
    assert listed[1].evidence == len(g.nodes)

    assert evidence.clear_evidence(webqsp_graph, qid2) == 1
    with pytest.raises(InputError, match=qid2):
        evidence.load_evidence(webqsp_graph, qid2)
    assert evidence.clear_evidence(webqsp_graph) == 1
    assert webqsp_graph.read("MATCH (q:SgrQuestion) RETURN count(q) AS n")[0]["n"] == 0
    assert webqsp_graph.read("MATCH ()-[r:SGR_EVIDENCE]->() RETURN count(r) AS n")[0]["n"] == 0
    assert data_fingerprint(webqsp_graph) == before


def _drawn(store, query: str) -> tuple[set[str], set[tuple[str, str, str]]]:
    """Node ids and (head, type, tail) of the paths a redraw query returns."""
    nodes = store.read(f"CALL {{ {query} }} UNWIND nodes(p) AS n RETURN DISTINCT n.id AS id")
    rels = store.read(f"CALL {{ {query} }} UNWIND relationships(p) AS r "
                      "RETURN DISTINCT startNode(r).id AS h, type(r) AS t, endNode(r).id AS e")
    return {r["id"] for r in nodes}, {(r["h"], r["t"], r["e"]) for r in rels}


def test_redraw_query_draws_exactly_the_saved_evidence(webqsp_graph, gold, record):
    rec = record("WebQTest-1")
    pred = gold.gold_prediction(webqsp_graph, rec)
    g = evidence.evidence_subgraph(webqsp_graph, pred)
    qid = evidence.save_evidence(webqsp_graph, rec["question"], pred, "gold-walk", graph=g)
    evidence.save_evidence(webqsp_graph, "another question", pred, "gold-walk")  # must not leak in
    nodes, rels = _drawn(webqsp_graph, evidence.redraw_query(question_id=qid))
    assert nodes == {qid} | {n.id for n in g.nodes}
    data_rels = {r for r in rels if r[1] != "SGR_EVIDENCE"}
    assert data_rels == set(g.triples())
    assert {r for r in rels if r[1] == "SGR_EVIDENCE"} == {(qid, "SGR_EVIDENCE", n.id) for n in g.nodes}
    # the same evidence, unsaved: the same query without the question, lone entities named
    nodes2, rels2 = _drawn(webqsp_graph, evidence.redraw_query(triples=g.triples(), node_ids=[n.id for n in g.nodes]))
    assert nodes2 == {n.id for n in g.nodes} and rels2 == set(g.triples())


def test_redraw_query_draws_lone_nodes_and_quotes_ids(webqsp_graph, gold, record):
    rec = record("WebQTest-0")
    pred = gold.gold_prediction(webqsp_graph, rec)
    for a in pred.answers:
        a.paths = []
    pred.paths = []
    g = evidence.evidence_subgraph(webqsp_graph, pred, topic_ids=[rec["q_entity"][0]])
    assert g.edges == [] and g.nodes
    nodes, rels = _drawn(webqsp_graph, evidence.redraw_query(node_ids=[n.id for n in g.nodes]))
    assert nodes == {n.id for n in g.nodes} and rels == set()
    saved = evidence.redraw_query(question_id='x"y')
    assert '{id: "x\\"y"}' in saved and len(saved.splitlines()) == 9
    unsaved = evidence.redraw_query(triples=[("it's", 'say "hi"', "a\\b")], node_ids=["it's", "lone"])
    assert '\n  ["it\'s", "say \\"hi\\"", "a\\\\b"]\n' in unsaved and '\n  "lone"\n' in unsaved
    for q in (saved, unsaved):  # both parse and run (and find nothing)
        assert webqsp_graph.read(f"CALL {{ {q} }} RETURN count(*) AS n")[0]["n"] == 0


def test_inspect_prediction_saves_and_writes_html(webqsp_graph, gold, record, tmp_path):
    rec = record("WebQTest-0")
    pred = gold.gold_prediction(webqsp_graph, rec)
    ins = evidence.inspect_prediction(webqsp_graph, rec["question"], pred, "gold-walk", save=True,
                                      html=tmp_path / "out" / "q.html")
    assert ins.question_id and ins.query == evidence.redraw_query(question_id=ins.question_id)
    assert ins.html.is_file() and rec["question"] in ins.html.read_text()
    text = "\n".join(ins.lines())
    assert ins.question_id in text and ins.query in text
    unsaved = evidence.inspect_prediction(webqsp_graph, rec["question"], pred, "gold-walk")
    assert unsaved.question_id is None and "SgrQuestion" not in unsaved.query
    assert webqsp_graph.read("MATCH (q:SgrQuestion) RETURN count(q) AS n")[0]["n"] == 1
    saved, again = evidence.inspect_saved(webqsp_graph, ins.question_id, html=tmp_path / "again.html")
    assert saved.id == ins.question_id and again.query == ins.query and again.html.is_file()


def test_given_topics_join_only_when_they_are_entities(webqsp_graph, gold, record):
    rec = record("WebQTest-0")
    pred = gold.gold_prediction(webqsp_graph, rec)
    pred.paths = []
    for a in pred.answers:
        a.paths = []
    g = evidence.evidence_subgraph(webqsp_graph, pred, topic_ids=[rec["q_entity"][0], "not an entity"])
    assert ids(g, evidence.ROLE_TOPIC) == [rec["q_entity"][0]]
    assert g.missing == [] and g.edges == []
    assert set(ids(g, evidence.ROLE_ANSWER)) == {a.id for a in pred.answers}
