"""Subgraph generation G_q against the real Neo4j (sgr/methods/sgr/subgraph.py)."""

import pytest

from sgr.llm.encoders import embed_texts
from sgr.retrieval.entities import EntityLinker
from sgr.methods.sgr.schema import QuestionSchema, rule_constraints
from sgr.retrieval.relations import ScoredRelation, load_retriever
from sgr.methods.sgr.subgraph import ExpansionConfig, SubgraphBuilder, lcs, neighbourhood_relation_types

REPS = "government.political_district.representatives"
HOLDER = "government.government_position_held.office_holder"


def builder(store):
    retr = load_retriever(store, "cosine")
    return SubgraphBuilder(store, lambda t: embed_texts(list(t)), retr.score_of, retr.vectors), retr


def test_lcs():
    assert lcs(["a", "b", "c"], ["a", "c"]) == 2 and lcs([], ["a"]) == 0


def test_cvt_is_not_a_hop(webqsp_graph):
    b, retr = builder(webqsp_graph)
    q = "who is governor of ohio 2011?"
    schema = QuestionSchema(q, relations=retr.retrieve(q, 10), constraints=rule_constraints(q))
    seeds = EntityLinker(webqsp_graph).link_given(["Ohio"])
    g = b.build(schema, seeds, ExpansionConfig(hops=1))
    via_cvt = [sp for sp in g.schema_paths if sp.steps == ((REPS, "out"), (HOLDER, "out"))]
    assert via_cvt, [sp.steps for sp in g.schema_paths[:5]]
    assert via_cvt[0].hops == 1
    assert "Salmon P. Chase" in via_cvt[0].walks
    walk = via_cvt[0].walks["Salmon P. Chase"][0]
    assert walk[0] == "Ohio" and walk[1] in g.cvt and len(walk) == 3
    assert all(sp.hops <= 1 for sp in g.schema_paths)
    assert all(p.answer not in g.cvt for p in g.paths)  # CVT nodes are never answers


def test_relevant_relation_ranks_first_and_consistency(webqsp_graph):
    b, retr = builder(webqsp_graph)
    q = "what does jamaican people speak?"
    rels = retr.retrieve(q, 10, neighbourhood_relation_types(webqsp_graph, ["Jamaica"]))
    schema = QuestionSchema(q, relations=rels, constraints=rule_constraints(q),
                            ordered=["location.country.languages_spoken"])
    seeds = EntityLinker(webqsp_graph).link_given(["Jamaica"])
    g = b.build(schema, seeds, ExpansionConfig(hops=2))
    top = g.schema_paths[0]
    assert top.steps == (("location.country.languages_spoken", "out"),)
    assert set(top.walks) == {"Jamaican English", "Jamaican Creole English Language"}
    best = g.paths_to("Jamaican English")[0]
    assert g.consistency(best) == pytest.approx(1.0)
    assert g.answer_consistency("Jamaican English") == pytest.approx(1.0)
    assert g.answer_consistency("no such node") == 0.0
    edges = g.edges()
    assert {"source": "Jamaica", "type": "location.country.languages_spoken", "target": "Jamaican English"} in edges


def test_unguided_expansion_ignores_relation_scores(webqsp_graph):
    b, retr = builder(webqsp_graph)
    schema = QuestionSchema("what does jamaican people speak?",
                            relations=[ScoredRelation("location.country.languages_spoken", 1.0, "", 1.0)])
    seeds = EntityLinker(webqsp_graph).link_given(["Jamaica"])
    g = b.build(schema, seeds, ExpansionConfig(hops=1, schema_guided=False))
    assert all(sp.parts["relevance"] == 0.0 for sp in g.schema_paths)
