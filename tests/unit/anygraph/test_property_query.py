"""Compiled queries over a profiled graph, the key aligner's word rules and the question cues they act on."""

from __future__ import annotations

import pytest

from cypher.compile import PropertyQuery, PropertyStep
from sgr.graph.readonly import check_read_query
from sgr.methods.sgr.profiled import ProfiledAnswerer, Schema, read_schema
from sgr.retrieval.entities import LinkedEntity, possessive
from sgr.retrieval.keys import KeyAligner, KeyMention, key_text, stem
from tests.unit.anygraph.test_graph_profile import MOVIES

ACTED = PropertyStep(("ACTED_IN",), "out", "Movie")


def test_a_literal_condition_is_a_parameter_on_the_property() -> None:
    q = PropertyQuery(["s"], [ACTED], "title", condition=("x", "released", ">", 2000)).compile()
    assert "MATCH (s0)-[r:`ACTED_IN`]->(x:`Movie`)" in q.cypher
    assert "x.`released` > $value" in q.cypher and q.params["value"] == 2000
    assert "2000" not in q.cypher  # the value travels as a parameter
    assert q.cypher.endswith("RETURN DISTINCT x.`title` AS answer, elementId(x) AS id ORDER BY answer LIMIT $limit")
    check_read_query(q.cypher)


def test_order_on_a_relationship_property_and_counts() -> None:
    reviewed = PropertyStep(("REVIEWED",), "out", "Movie")
    q = PropertyQuery(["s"], [reviewed], "title", order=("r", "rating", True)).compile()
    assert "r.`rating` AS key" in q.cypher and "ORDER BY key DESC, answer" in q.cypher  # ties by name
    c = PropertyQuery(["s"], [ACTED], "title", count=True).compile()
    assert c.cypher.endswith("RETURN count(DISTINCT x) AS answer")


def test_two_seeds_meet_at_the_answer_and_lookups_read_the_seed() -> None:
    q = PropertyQuery(["a", "b"], [ACTED], "title", join=[ACTED]).compile()
    assert "MATCH (s1)-[j1:`ACTED_IN`]->(x)" in q.cypher and "elementId(s1) = $s1" in q.cypher
    assert q.params["seeds"] == ["a", "b"] and q.cypher.count("WHERE") == 2
    lookup = PropertyQuery(["a"], [], "name", project="born").compile()
    assert lookup.cypher.endswith("RETURN DISTINCT s0.`born` AS answer, elementId(s0) AS id ORDER BY answer "
                                  "LIMIT $limit")
    redraw = PropertyQuery(["a"], [ACTED], "title").redraw(["m1"]).inline()
    assert 'MATCH p = (s0)-[r:`ACTED_IN`]->(x:`Movie`)' in redraw and '["m1"]' in redraw


def test_identifiers_are_quoted() -> None:
    odd = PropertyStep(("WEIRD`TYPE",), "in", "Odd Label")
    q = PropertyQuery(["s"], [odd], "na`me").compile()
    assert "`WEIRD``TYPE`" in q.cypher and "`Odd Label`" in q.cypher and "`na``me`" in q.cypher


def test_word_rules() -> None:
    assert key_text("ACTED_IN") == "acted in" and key_text("imdbRating") == "imdb rating"
    assert stem("actors") == stem("acted") == "act"
    assert stem("rated") == stem("rating") == stem("rate")
    assert stem("directors") == stem("directed")
    assert possessive("Hanks's") == "Hanks" and possessive("Wachowskis'") == "Wachowskis"


def test_lexical_alignment_needs_no_encoder() -> None:
    from sgr.graph.profile import profile_from_dict

    aligner = KeyAligner(profile_from_dict(MOVIES))
    acted = next(i for i in aligner.items if i.key == "ACTED_IN")
    assert aligner.lexical("actors", acted) == 0.95
    assert aligner.lexical("starred", acted) == 0.9  # a listed synonym
    assert aligner.lexical("directed", acted) == 0.0


class NoKeys:
    def align(self, words, skip=frozenset()):  # noqa: ANN001 - a stand-in for KeyAligner
        return []


@pytest.mark.parametrize("question, count, compare, extreme", [
    ("How many movies did Tom Hanks act in after 2000?", True, (">", 2000), None),
    ("Which movies did Tom Hanks rate above 80.5?", False, (">", 80.5), None),
    ("Which movies released since 2003 did Tom Hanks act in?", False, (">=", 2003), None),
    ("What is the most recent movie Tom Hanks acted in?", False, None, ("most recent", True)),
    ("Who is the oldest actor in Tom Hanks?", False, None, ("oldest", False)),
    ("Which movie did Tom Hanks rate highest?", False, None, ("highest", True)),
])
def test_constraint_cues(question: str, count: bool, compare, extreme) -> None:
    words = question.rstrip("?").split()
    start = words.index("Tom")
    entity = LinkedEntity("Tom Hanks", "id", "Tom Hanks", 1.0, "exact", span=(start, start + 2))
    s = read_schema(question, [entity], NoKeys())
    assert s.count is count
    assert (s.compare[:2] if s.compare else None) == compare
    assert (s.extreme[:2] if s.extreme else None) == extreme


def test_cue_words_inside_a_name_do_not_count() -> None:
    q = "Who directed The Last Count?"
    entity = LinkedEntity("The Last Count", "id", "The Last Count", 1.0, "exact", span=(2, 5))
    s = read_schema(q, [entity], NoKeys())
    assert not s.count and s.extreme is None


@pytest.mark.parametrize("question, asked", [
    ("what film genre is The Lacemaker", False),  # "film" modifies "genre"
    ("who are movie co-directors of Ole Bornedal", False),
    ("which person directed The Lacemaker", True),  # the verb takes its object: "person" is asked for
    ("which films did Ole Bornedal direct", True),
])
def test_a_label_word_before_a_relation_noun_is_not_what_is_asked(question: str, asked: bool) -> None:
    words = question.split()
    at = next(i for i, w in enumerate(words) if w in ("film", "movie", "person", "films"))
    label = KeyMention(at, words[at], "label", "Movie", "Movie", 0.9)
    relation = KeyMention(at + 1, words[at + 1], "relationship", "HAS_GENRE", "HAS_GENRE", 0.9)
    s = Schema(words, [], [label, relation] if words[at + 1] not in ("did",) else [label])
    assert ProfiledAnswerer.asked_noun(s, label) is asked


def test_walks_name_each_node_by_its_label_and_stay_reads() -> None:
    q = PropertyQuery(["a", "b"], [ACTED], "title", join=[ACTED]).walks(["m1"], {"Movie": "title", "Person": "name"})
    check_read_query(q.cypher)
    assert q.params["names"] == {"Movie": "title", "Person": "name"} and q.params["answers"] == ["m1"]
    assert "WITH [p, q] AS walks" in q.cypher and "n[$names[l]]" in q.cypher  # the second seed's walk too
    lookup = PropertyQuery(["a"], [], "name", project="born").walks([], {"Person": "name"})
    assert "MATCH p = (s0)" in lookup.cypher and "answers" not in lookup.params


def test_compare_words_are_the_number_words_and_the_year_words() -> None:
    from sgr.core.lexicon import COMPARE_OPS, NUMBER_OPS

    assert COMPARE_OPS.items() >= NUMBER_OPS.items()
    assert (COMPARE_OPS["after"], COMPARE_OPS["since"], COMPARE_OPS["before"], COMPARE_OPS["until"]) == \
        (">", ">=", "<", "<=")


def test_a_span_is_also_tried_as_written() -> None:
    from sgr.retrieval.entities import ProfileLinker

    linker = ProfileLinker.__new__(ProfileLinker)  # spans need no store
    linker.max_len = 8
    texts = {(i, j): [t for a, b, t in linker.spans("What year is Frost/Nixon from?") if (a, b) == (i, j)]
             for i, j in [(3, 5), (0, 1)]}
    assert texts[(3, 5)] == ["Frost Nixon", "Frost/Nixon"] and texts[(0, 1)] == []  # "what": a stop word
    bracketed = {t for _, _, t in linker.spans("who directed [50/50]")}
    assert "50/50" in bracketed


def test_profiled_evidence_is_drawn_by_element_id() -> None:
    from sgr.evidence.graph import redraw_query

    q = redraw_query(triples=[("4:x:1", "ACTED_IN", "4:x:2")], node_ids=["4:x:3"], profiled=True)
    assert ":Entity" not in q and "elementId(h) = t[0] AND elementId(x) = t[2]" in q
    assert 'elementId(e) IN [\n  "4:x:3"\n]' in q
    saved = redraw_query(question_id="abc", profiled=True)
    assert ":Entity" not in saved and "SGR_EVIDENCE" in saved
    assert ":Entity" in redraw_query(triples=[("a", "r", "b")])  # sgr's own graphs as before
