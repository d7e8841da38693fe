"""Subgraph generation G_q against the real Neo4j (sgr/methods/sgr/subgraph.py)."""

import pytest

from sgr.llm.encoders import embed_texts
from sgr.retrieval.entities import EntityLinker
from sgr.methods.sgr.schema import QuestionSchema, rule_constraints
from sgr.retrieval.relations import ScoredRelation, load_retriever
from sgr.methods.sgr.subgraph import (ExpansionConfig, SubgraphBuilder, lcs, neighbourhood_relation_types,
                                      question_depth)

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


def test_expansion_goes_a_hop_deeper_when_the_question_asks_for_a_far_answer(metaqa_graph):
    """The hop model reads "the films that share actors with X" as three hops: G_q expands to three (two relations
    out of X to its co-actors' films, one to their genres); a one-hop question, or ``deeper_at`` above 1, stays at
    the configured two."""
    b, retr = builder(metaqa_graph)
    seeds = EntityLinker(metaqa_graph).link_given(["A Dirty Shame"])

    def expand(q: str, **cfg):  # noqa: ANN202
        c = ExpansionConfig(hops=2, **cfg)
        c = c.at_depth(question_depth(c, q, "A Dirty Shame"))  # as the answerer decides it, after linking
        return b.build(QuestionSchema(q, relations=retr.retrieve(q, 10)), seeds, c,
                       masked_question=q.replace("A Dirty Shame", "X"))

    far = "what genres do the films that share actors with A Dirty Shame fall under"
    deep = expand(far)
    assert deep.cost["hops"] == 3
    three = [sp for sp in deep.schema_paths if sp.hops == 3]
    assert three and all(sp.hops <= 3 for sp in deep.schema_paths)
    assert any(sp.relations[-1] == "has_genre" for sp in three), [sp.relations for sp in three[:5]]
    off = expand(far, deeper_at=2.0)
    assert off.cost["hops"] == 2 and all(sp.hops <= 2 for sp in off.schema_paths)
    near = expand("what genre is A Dirty Shame")
    assert near.cost["hops"] == 2


@pytest.mark.parametrize("question,relation", [("what genre is A Dirty Shame", "has_genre"),
                                               ("who directed A Dirty Shame", "directed_by")])
def test_g_q_reads_the_word_that_asks_for_the_last_relation(metaqa_graph, question, relation):
    """On the real graph, G_q gives the one-hop path that the question's word asks for ("genre", "directed") the
    highest ``lex_last`` of its one-hop paths, from the shipped word–relation lexicon."""
    b, retr = builder(metaqa_graph)
    seeds = EntityLinker(metaqa_graph).link_given(["A Dirty Shame"])
    g = b.build(QuestionSchema(question, relations=retr.retrieve(question, 10)), seeds, ExpansionConfig(hops=2),
                masked_question=question.replace("A Dirty Shame", "X"))
    one = {sp.relations[-1]: sp.parts["lex_last"] for sp in g.schema_paths if len(sp.relations) == 1}
    assert len(one) > 1 and one[relation] > 0 and one[relation] == max(one.values()), one


def test_g_q_marks_the_paths_that_walk_back_and_whether_the_question_asks_for_others(metaqa_graph):
    """A path whose last relation walks back the one before it ends on the others around one node: "who co-starred
    in X" asks for them (``walks_back_unasked`` 0), "what genre is X" does not (1); other paths are 0 in both."""
    b, retr = builder(metaqa_graph)
    seeds = EntityLinker(metaqa_graph).link_given(["A Dirty Shame"])
    for question, asked in (("who co-starred in A Dirty Shame", True), ("what genre is A Dirty Shame", False)):
        g = b.build(QuestionSchema(question, relations=retr.retrieve(question, 10)), seeds, ExpansionConfig(hops=2),
                    masked_question=question.replace("A Dirty Shame", "X"))
        back = [sp for sp in g.schema_paths if sp.parts["walks_back"]]
        assert back and all(sp.relations[-1] == sp.relations[-2] for sp in back), question
        assert all(sp.parts["walks_back_unasked"] == (0.0 if asked else 1.0) for sp in back), question
        assert not any(sp.parts["walks_back"] or sp.parts["walks_back_unasked"] for sp in g.schema_paths
                       if len(sp.relations) < 2)
