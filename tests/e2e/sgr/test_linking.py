"""Entity linking against the real Neo4j with the WebQSP slice (sgr/linking.py)."""

from sgr.retrieval.entities import EntityLinker, lucene_query, normalise, spans


def test_normalise_and_lucene_escaping():
    assert normalise("The Galápagos  Islands!") == "galapagos islands"
    assert lucene_query("AC/DC (band)") == "AC\\/DC \\(band\\)"
    assert "ben franklin" in spans("what else did ben franklin invent?")


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
