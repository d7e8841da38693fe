"""Inverse relations found in real Neo4j and walked by compiled paths and by SGR's validation
(sgr/graph/inverses.py, cypher/compile.py, sgr/methods/sgr/subgraph.py)."""

from cypher.compile import compile_schema_path
from loaders.writer import GraphBatch, write_graph
from sgr.graph.inverses import inverse_relations

CAST, ACTOR, ROLES = "tv.tv_program.regular_cast", "tv.regular_tv_appearance.actor", "tv.tv_actor.starring_roles"
SPOKEN, OFFICIAL = "location.country.languages_spoken", "location.country.official_language"


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
    batch.add_triple("Jamaica", SPOKEN, "Jamaican English")  # entity-to-entity facts never pair
    batch.add_triple("Jamaican English", OFFICIAL, "Jamaica")
    write_graph(store, batch)


def test_the_pair_is_found_and_the_compiled_path_walks_both_names(clean_store):
    cast_graph(clean_store)
    inv = inverse_relations(clean_store)
    assert inv == {ACTOR: ROLES, ROLES: ACTOR}
    steps = [(CAST, "out"), (ACTOR, "out")]
    plain, both = (compile_schema_path("The Jeffersons", steps, inverses=m) for m in (None, inv))
    plain_rows = clean_store.run_generated(plain.cypher, plain.params).rows
    both_rows = clean_store.run_generated(both.cypher, both.params).rows
    assert {r["name"] for r in plain_rows} == {"Isabel Sanford", "Sherman Hemsley", "Marla Gibbs"}
    assert {r["name"] for r in both_rows} == {"Isabel Sanford", "Sherman Hemsley", "Marla Gibbs", "Roxie Roker"}
    roxie = next(r for r in both_rows if r["name"] == "Roxie Roker")
    assert roxie["path_ids"] == [["The Jeffersons", "m.0cast3", "Roxie Roker"]]
