"""Entity linking and dataset-string resolution against the real Neo4j with the WebQSP slice
(sgr/retrieval/entities.py)."""

import pytest

from loaders.writer import GraphBatch, write_graph
from sgr.retrieval.entities import EntityLinker, spans


def test_spans_skip_stop_words():
    assert "ben franklin" in spans("what else did ben franklin invent?")
    assert "what else" not in spans("what else did ben franklin invent?")


def test_resolve_by_id_then_exact_name(clean_store):
    b = GraphBatch()
    b.add_entity("m.0aaa", "Jamaica")
    b.add_entity("m.0bbb", 'Say "Hi" (song)')
    b.add_triple("m.0aaa", "r", "m.0bbb")
    write_graph(clean_store, b)
    linker = EntityLinker(clean_store)
    found = linker.resolve(["Jamaica", 'Say "Hi" (song)', "m.0aaa", "Jam", "!!", ""])
    assert found == {"Jamaica": ["m.0aaa"], 'Say "Hi" (song)': ["m.0bbb"], "m.0aaa": ["m.0aaa"], "Jam": [], "!!": []}
    assert linker.resolve(["Jamaica"], by_name=False) == {"Jamaica": []}  # ids only


def test_given_topics_exact_and_cvt_mid(webqsp_graph):
    linker = EntityLinker(webqsp_graph)
    out = linker.link_given(["Jamaica", "m.0bfmkl4"])
    assert [(e.id, e.method) for e in out] == [("Jamaica", "given"), ("m.0bfmkl4", "mid")]


def test_normalised_and_fuzzy_mentions(webqsp_graph):
    linker = EntityLinker(webqsp_graph)
    assert linker.link_mention("jamaica").id == "Jamaica"
    e = linker.link_mention("Jamaca")  # misspelt: full-text fuzzy match
    assert e is not None and e.id == "Jamaica" and e.method == "fulltext"
    assert linker.link_mention("zzzz qqqq") is None


def test_question_spans_link_without_topics(webqsp_graph):
    linker = EntityLinker(webqsp_graph)
    out = linker.link_question("who plays ken barlow in coronation street?")
    assert {"Coronation Street", "Ken Barlow"} <= {e.id for e in out}


def test_ties_are_broken_by_relation_match(webqsp_graph):
    webqsp_graph.write("CREATE (:Entity {id: 'dup-1', name: 'Jamaica'})")
    linker = EntityLinker(webqsp_graph)
    e = linker.link_mention("Jamaica", {"location.country.languages_spoken": 1.0})
    assert e.id == "Jamaica"  # the node with the question's relations, not the isolated duplicate
    e2 = linker.link_mention("Jamaica", {})
    assert e2.id == "Jamaica"  # without relation scores: degree decides


def test_relation_profile_samples_a_hub_and_counts_its_degree(clean_store, monkeypatch):
    from sgr.retrieval import entities

    b = GraphBatch()
    b.add_entity("m.hub", "Hub")
    for i in range(6):
        b.add_triple("m.hub", f"x.y.r{i}", f"m.n{i}")
    write_graph(clean_store, b)
    clean_store.write("MATCH (e:Entity {id: 'm.hub'}) CREATE (:SgrQuestion {id: 'q'})-[:SGR_EVIDENCE]->(e)")
    linker = EntityLinker(clean_store)
    types, degree = linker.relation_profile(["m.hub"])["m.hub"]
    assert sorted(types) == [f"x.y.r{i}" for i in range(6)] and degree == 6  # the evidence link is not data
    monkeypatch.setattr(entities, "HUB_EDGE_SAMPLE", 4)
    types, degree = linker.relation_profile(["m.hub"])["m.hub"]
    assert len(types) == 4 and set(types) < {f"x.y.r{i}" for i in range(6)} and degree == 6
    assert sorted(clean_store.relation_types_at(["m.hub", "m.n0"])["m.n0"]) == ["x.y.r0"]  # the store's one sample
    from sgr.graph import store as store_module

    monkeypatch.setattr(store_module, "HUB_EDGE_SAMPLE", 2)
    assert len(clean_store.relation_types_at(["m.hub"])["m.hub"]) == 2
