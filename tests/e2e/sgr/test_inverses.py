"""Inverse relations found in real Neo4j and walked by compiled paths and by SGR's validation
(sgr/graph/inverses.py, cypher/compile.py, sgr/methods/sgr/subgraph.py)."""

from cypher.compile import compile_schema_path
from loaders.writer import GraphBatch, write_graph
from sgr.graph.inverses import inverse_relations
from sgr.methods.sgr.decision import DecisionInputs

CAST, ACTOR, ROLES = "tv.tv_program.regular_cast", "tv.regular_tv_appearance.actor", "tv.tv_actor.starring_roles"
IN, HAS = "location.location.containedby", "location.location.contains"


def cast_graph(store):
    """The Jeffersons' cast as a Freebase slice keeps it: each CVT's actor edge under one of its two names."""
    batch = GraphBatch()
    for i, actor in enumerate(["Isabel Sanford", "Sherman Hemsley", "Marla Gibbs", "Roxie Roker"]):
        cvt = f"m.0cast{i}"
        batch.add_triple("The Jeffersons", CAST, cvt)
        if i % 2:
            batch.add_triple(actor, ROLES, cvt)
        else:
            batch.add_triple(cvt, ACTOR, actor)
    batch.add_triple("m.0cast0", ROLES, "Isabel Sanford")  # one CVT keeps both names: the evidence of the pair
    batch.add_triple("m.0cast1", ACTOR, "Sherman Hemsley")
    # places: Ohio lies in the Midwest (stored both ways once, one way for the other facts) and contains Columbus
    for h, r, t in [("Ohio", IN, "Midwest"), ("Midwest", HAS, "Ohio"), ("United States", HAS, "Ohio"),
                    ("Ohio", HAS, "Columbus"), ("Columbus", IN, "Ohio")]:
        batch.add_triple(h, r, t)
    write_graph(store, batch)


def rows(store, seed, steps, inverses=None):
    q = compile_schema_path(seed, steps, inverses=inverses)
    return store.run_generated(q.cypher, q.params).rows


def test_the_pairs_are_found_and_a_cvt_step_walks_both_names(clean_store):
    cast_graph(clean_store)
    inv = inverse_relations(clean_store)
    assert inv.pairs == {ACTOR: ROLES, ROLES: ACTOR, IN: HAS, HAS: IN} and inv.directed == {IN, HAS}
    steps = [(CAST, "out"), (ACTOR, "out")]
    assert {r["name"] for r in rows(clean_store, "The Jeffersons", steps)} == {
        "Isabel Sanford", "Sherman Hemsley", "Marla Gibbs"}
    both = rows(clean_store, "The Jeffersons", steps, inv)
    assert {r["name"] for r in both} == {"Isabel Sanford", "Sherman Hemsley", "Marla Gibbs", "Roxie Roker"}
    roxie = next(r for r in both if r["name"] == "Roxie Roker")
    assert roxie["path_ids"] == [["The Jeffersons", "m.0cast3", "Roxie Roker"]]
    assert roxie["path_steps"] == [[[CAST, True], [ROLES, False]]]  # the walk as stored: Roxie -ROLES-> m.0cast3


def test_an_entity_step_walks_the_inverse_name_against_its_own_direction(clean_store):
    cast_graph(clean_store)
    inv = inverse_relations(clean_store)
    assert {r["name"] for r in rows(clean_store, "Ohio", [(IN, "out")])} == {"Midwest"}
    found = {r["name"]: r for r in rows(clean_store, "Ohio", [(IN, "out")], inv)}
    assert set(found) == {"Midwest", "United States"}
    assert found["United States"]["path_steps"] == [[[HAS, False]]]  # stored: United States -contains-> Ohio
    assert {r["name"] for r in rows(clean_store, "Ohio", [(HAS, "out")], inv)} == {"Columbus"}  # never the converse


def test_sgr_grounds_an_answer_reached_through_the_inverse_name_on_stored_edges(clean_store):
    """The answer's walk names the edge the store holds, so its evidence is drawn from real edges."""
    from sgr.core.types import Question
    from sgr.evidence.graph import evidence_subgraph
    from sgr.methods.base import MethodContext
    from sgr.methods.registry import create_method

    cast_graph(clean_store)
    answerer = create_method("sgr-compiled", MethodContext(store=clean_store, options={"hops": 2}))
    result = answerer.run(Question(id="q", text="who played on the jeffersons?", topic_entities=["The Jeffersons"]))
    by_name = {a.text: a for a in result.prediction.answers}
    assert {"Isabel Sanford", "Sherman Hemsley", "Marla Gibbs", "Roxie Roker"} <= set(by_name)
    walk = by_name["Roxie Roker"].paths[0]
    assert walk.triples() == [("The Jeffersons", CAST, "m.0cast3"), ("Roxie Roker", ROLES, "m.0cast3")]
    graph = evidence_subgraph(clean_store, result.prediction, ["The Jeffersons"])
    assert graph.edges and all(e.in_graph for e in graph.edges)
    # the decision reads the candidates' relation paths under one name per pair (the rest of a winning path's set)
    inputs = DecisionInputs.from_dict(result.prediction.extra["decision"]["inputs"])
    assert inputs.same_relation and set(inputs.same_relation.values()) <= {ACTOR, IN}
    assert inputs.relation_path((CAST, ROLES)) == inputs.relation_path((CAST, ACTOR)) == (CAST, ACTOR)


def test_answers_of_one_path_go_first_to_the_one_more_relations_link_to_the_entity(clean_store):
    """The decision reads from the store how many relations link each answer to the linked entity (edges and CVT
    pairs), and among one path's ends the best linked goes first: not the first name, Arabic."""
    from sgr.core.types import Question
    from tests.helpers import compiled_run

    spoken, official = "location.country.languages_spoken", "location.country.official_language"
    batch = GraphBatch()
    for lang in ["Arabic Language", "Kurdish languages", "Turkish Language"]:
        batch.add_triple("Turkey", spoken, lang)
    batch.add_triple("Turkey", official, "Turkish Language")
    batch.add_triple("Turkey", "location.statistical_region.religions", "m.0rel1")  # a CVT to a religion
    batch.add_triple("m.0rel1", "location.religion_percentage.religion", "Islam")
    write_graph(clean_store, batch)
    result = compiled_run(clean_store, Question(id="q", text="what language do people speak in turkey?",
                                                topic_entities=["Turkey"]), hops=1)
    inputs = DecisionInputs.from_dict(result.prediction.extra["decision"]["inputs"])
    assert inputs.links["Turkish Language"] == 2 and inputs.links["Arabic Language"] == 1
    assert clean_store.topic_links(["Turkey"], ["Islam", "Arabic Language"]) == {"Islam": 1, "Arabic Language": 1}
    assert result.prediction.answers[0].text == "Turkish Language"
