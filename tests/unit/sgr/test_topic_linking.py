"""Topic linking without a server: how a span names a node, the spans a question offers, and the shipped topic
scorer choosing the question's subject over a better-known name (sgr/retrieval/mentions.py)."""

import pytest

from sgr.retrieval import mentions
from sgr.retrieval.mentions import name_match, possessive, question_words, quoted_spans


def test_name_match_whole_part_and_near_spellings():
    assert name_match("Japan", "Japan") == mentions.NameMatch(1.0, 1.0, "exact")
    assert name_match("the matrix", "The Matrix").method == "normalised"
    part = name_match("portuguese", "Portuguese Language")
    assert part.method == "partial" and part.coverage == 0.5 and part.match == 1.0
    assert name_match("Vicksburg", "Siege of Vicksburg").coverage == pytest.approx(1 / 3)  # "of" is a word of the name
    near = name_match("Stelly McBeam", "Steely McBeam")
    assert near.method == "fulltext" and near.coverage == 1.0 and 0.85 <= near.match < 1.0
    word = name_match("Iclandic", "Icelandic Language")  # a misspelt word of the name
    assert word.method == "fulltext" and word.coverage == 0.5
    assert name_match("burg", "Siege of Vicksburg") is None  # a part of a word is not a part of the name
    assert name_match("Bolivia", "Japan") is None and name_match("", "Japan") is None


def test_quoted_titles_and_possessives_are_spans():
    q = 'Where did the person that stated, "College isn\'t the place to go for ideas.", die at?'
    words = question_words(q)
    [(i, j, text)] = quoted_spans(q)
    assert text == "College isn't the place to go for ideas" and words[i:j] == text.split()
    assert quoted_spans("who said \u201cYes we can!\u201d") == [(2, 5, "Yes we can")]
    assert quoted_spans("no quotes here") == []
    assert possessive("Bragg's") == "Bragg" and possessive("Wachowskis'") == "Wachowskis"


def _cand(span, start, end, node, *, degree, types, match=1.0, coverage=1.0, hits=1, method="exact"):
    c = mentions.MentionCandidate(span, start, end, node, node, match, method, coverage=coverage, degree=degree)
    c.relation_types = list(types)
    type_share = sum(t in mentions.TYPE_RELATIONS for t in types) / len(types)
    c.features.update({"type_node": type_share, "span_hits": mentions.math.log1p(hits)})
    return c


def test_shipped_scorer_links_the_subject_not_the_more_frequent_type_name():
    scorer = mentions.load_link_scorer()
    assert scorer is not None
    q = "which country is the eiffel tower located in?"
    country = _cand("country", 1, 2, "Country", degree=110, hits=30,
                    types=["common.topic.notable_types"] * 9 + ["location.location.containedby"])
    tower = _cand("eiffel tower", 4, 6, "Eiffel Tower", degree=1, types=["location.location.containedby"])
    ranked = mentions.rank(q, [country, tower], {"location.location.containedby": 0.8}, scorer)
    assert [c.id for c in ranked] == ["Eiffel Tower", "Country"]
    assert country.features["after_wh"] == 1.0 and tower.features["after_wh"] == 0.0


def test_shipped_scorer_prefers_the_specific_part_of_a_name_and_the_qualified_place():
    scorer = mentions.load_link_scorer()
    q = "Who fought in the Battle of Vicksburg?"
    battle = _cand("Battle", 4, 5, "Battle of Gettysburg", degree=51, coverage=1 / 3, hits=30, method="partial",
                   types=["military.military_conflict.combatants"])
    siege = _cand("Vicksburg", 6, 7, "Siege of Vicksburg", degree=33, coverage=1 / 3, hits=1, method="partial",
                  types=["military.military_conflict.combatants"])
    rels = {"military.military_conflict.combatants": 0.6}
    assert mentions.rank(q, [battle, siege], rels, scorer)[0].id == "Siege of Vicksburg"
    q = "What building in Vienna, Austria has 50 floors?"
    vienna = _cand("Vienna", 3, 4, "Vienna", degree=40, types=["location.location.contains"])
    austria = _cand("Austria", 4, 5, "Austria", degree=80, types=["location.location.contains"])
    austria.qualifies = True  # an edge joins Vienna and Austria (graph_context)
    ranked = mentions.rank(q, [austria, vienna], {"location.location.contains": 0.5}, scorer)
    assert austria.features["follows_mention"] == 1.0 and vienna.features["follows_mention"] == 0.0
    assert austria.features["inside_named"] == 1.0 and vienna.features["inside_named"] == 0.0
    assert ranked[0].id == "Vienna"


def test_namesakes_are_compared_within_their_span_and_verbatim_names_count():
    q = "what movies can be described by famke janssen"
    tag = _cand("famke janssen", 5, 7, "famke janssen", degree=3, types=["movie.has_tags"], method="id")
    actor = _cand("famke janssen", 5, 7, "Famke Janssen", degree=30, types=["movie.starred_actors"],
                  method="normalised")
    other = _cand("movies", 1, 2, "Movies", degree=300, types=["movie.has_tags"])
    mentions.featurize(q, [tag, actor, other], {"movie.has_tags": 0.8, "movie.starred_actors": 0.3})
    assert tag.features["verbatim"] == 1.0 and actor.features["verbatim"] == 0.0
    assert tag.features["namesake_rel"] == 0.0 and actor.features["namesake_rel"] == pytest.approx(-0.5)
    assert actor.features["namesake_degree"] == 0.0
    assert tag.features["namesake_degree"] == pytest.approx(mentions.math.log1p(3) - mentions.math.log1p(30))
    assert other.features["namesake_degree"] == 0.0  # the only node its span names


def test_the_topic_of_gold_paths_is_the_one_node_starting_the_most():
    from sgr.retrieval.supervision import topic_from_paths

    assert topic_from_paths({"Japan": 2, "Japanese yen": 1}) == "Japan"
    assert topic_from_paths({"Grand Bahama": 1, "Bahamas": 1}) is None  # a one-relation path starts at both ends
    assert topic_from_paths({}) is None

