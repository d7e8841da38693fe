"""Entity linking and dataset-string resolution against the real Neo4j with the WebQSP slice
(sgr/retrieval/entities.py)."""

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
    from sgr.retrieval import mentions

    linker = EntityLinker(webqsp_graph)
    q = "who plays ken barlow in coronation street?"
    out = linker.link_question(q)
    assert out[0].id in {"Coronation Street", "Ken Barlow"}
    named = {(c.span, c.id) for c in mentions.mention_candidates(webqsp_graph, q) if c.method == "normalised"}
    assert {("ken barlow", "Ken Barlow"), ("coronation street", "Coronation Street")} <= named


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


def _link(store, question, relations):
    return EntityLinker(store).link_question(question, relation_scores=relations)


def test_topic_is_the_subject_not_the_more_frequent_type_name(clean_store):
    b = GraphBatch()
    b.add_triple("Eiffel Tower", "location.location.containedby", "Paris")
    b.add_triple("Paris", "location.location.containedby", "France")
    for i in range(40):  # "Country" is the far better-connected name: a type node
        b.add_triple(f"Land {i}", "common.topic.notable_types", "Country")
    b.add_triple("France", "common.topic.notable_types", "Country")
    write_graph(clean_store, b)
    out = _link(clean_store, "which country is the eiffel tower located in?", {"location.location.containedby": 0.8})
    assert out[0].id == "Eiffel Tower" and out[0].mention == "eiffel tower"
    assert "Country" not in [e.id for e in out[:1]]


def test_a_part_of_a_name_quoted_sayings_and_hyphenated_words_link(clean_store):
    from sgr.retrieval import mentions

    b = GraphBatch()
    for country in ("Brazil", "Portugal", "Angola", "Mozambique"):
        b.add_triple("Portuguese Language", "language.human_language.countries_spoken_in", country)
    b.add_triple("Brazilian Portuguese", "language.language_dialect.language", "Portuguese Language")
    b.add_triple("Barack Obama", "people.person.quotations", "Yes we can!")
    b.add_triple("Barack Obama", "government.politician.party", "Democratic Party")
    b.add_triple("United States of America", "government.governmental_jurisdiction.government", "Federal republic")
    b.add_triple("us", "music.recording.artist", "Peter Gabriel")  # an album named "us"
    b.add_triple("Austria-Hungary", "location.country.form_of_government", "Constitutional monarchy")
    b.add_triple("Austria", "location.country.form_of_government", "Federal republic")
    write_graph(clean_store, b)
    rels = {"language.human_language.countries_spoken_in": 0.7}
    assert _link(clean_store, "what countries do people speak portuguese?", rels)[0].id == "Portuguese Language"
    assert _link(clean_store, "Which Portuguese-speaking country has the largest army?", rels)[0].id == \
        "Portuguese Language"
    out = _link(clean_store, 'The person who famously said "Yes we can!" represents what political party?',
                {"people.person.quotations": 0.5, "government.politician.party": 0.6})
    assert out[0].id == "Yes we can!"
    gov = {"government.governmental_jurisdiction.government": 0.7}
    assert _link(clean_store, "what is the political system of the us?", gov)[0].id == "United States of America"
    assert "United States of America" not in [e.id for e in _link(clean_store, "can you tell us the system?", gov)]
    q = "What form of government did Austria-Hungary have?"  # the whole word names a node: its parts are no mentions
    found = {(c.span, c.id) for c in mentions.mention_candidates(clean_store, q)}
    assert ("Austria-Hungary", "Austria-Hungary") in found and not any(span == "Austria" for span, _ in found)
    assert _link(clean_store, q, gov)[0].id == "Austria-Hungary"


def test_linking_accuracy_counts_every_gold_topic(clean_store):
    from sgr.core.types import Question
    from sgr.evaluation.linking import linking_accuracy

    b = GraphBatch()
    b.add_triple("Logan Lerman", "film.actor.film", "Percy Jackson & the Olympians: The Lightning Thief")
    b.add_triple("Percy Jackson", "book.book_character.appears_in_book", "The Lightning Thief")
    b.add_triple("Marriage", "people.marriage_union_type.unions_of_this_type", "m.0union")
    write_graph(clean_store, b)
    q = Question(id="c", text="What movie features Logan Lerman and is part of the Percy Jackson series?",
                 topic_entities=["Logan Lerman", "Percy Jackson", "Marriage", "Nobody"])
    s = linking_accuracy(clean_store, [q]).summary()
    assert s["accuracy"] == 1.0 and s["questions"] == 1 and s["multi_topic_questions"] == 1
    assert s["all_topics_found"] == 0.0 and s["all_topics_found_multi"] == 0.0  # "Marriage" is not in the text
    assert s["topic_recall"] == round(2 / 3, 4)  # "Nobody" resolves to no node: not a gold topic
    assert 0 < s["linked_precision"] <= 1.0


def test_city_country_namesakes_and_demonyms_read_the_graph(clean_store):
    """The graph between the question's mentions: "Vienna, Austria" (an edge joins them: Austria qualifies Vienna),
    the Giants that the Super Bowl is linked to (coherence), namesakes told apart, and a demonym's country."""
    from sgr.retrieval import mentions

    b = GraphBatch()
    b.add_triple("Vienna", "location.location.containedby", "Austria")
    b.add_triple("Linz", "location.location.containedby", "Austria")
    b.add_triple("Vienna State Opera", "location.location.containedby", "Vienna")
    b.add_triple("Super Bowl XLII", "sports.sports_championship_event.champion", "New York Giants")
    b.add_triple("Super Bowl XLII", "sports.sports_championship_event.championship", "Super Bowl")
    for rel in ("baseball.baseball_team.league", "sports.sports_team.arena_stadium", "sports.sports_team.colors"):
        b.add_triple("San Francisco Giants", rel, f"SF {rel}")  # the better-connected namesake
    b.add_triple("United Kingdom", "location.country.official_language", "English Language")
    write_graph(clean_store, b)

    def cands(question):
        found = mentions.mention_candidates(clean_store, question)
        mentions.featurize(question, found, {})
        return {(c.span, c.id): c.features for c in found}

    f = cands("What building in Vienna, Austria has 50 floors?")
    assert f[("Austria", "Austria")]["inside_named"] == 1.0 and f[("Vienna", "Vienna")]["inside_named"] == 0.0
    f = cands("What building in Linz Vienna has 50 floors?")  # adjacent, but no edge joins them
    assert f[("Vienna", "Vienna")]["inside_named"] == 0.0 and f[("Linz", "Linz")]["inside_named"] == 0.0
    f = cands("What super bowls have the Giants won?")
    ny, sf = f[("Giants", "New York Giants")], f[("Giants", "San Francisco Giants")]
    assert ny["coherence"] == 1.0 and sf["coherence"] == 0.0  # two edges from the Super Bowl, the other none
    assert sf["namesake_degree"] == 0.0 and ny["namesake_degree"] < 0.0  # New York's team has fewer edges
    f = cands("What language is spoken by British people?")
    assert f[("British", "United Kingdom")]["demonym"] == 1.0
    assert all(not v["demonym"] for (s, _), v in f.items() if s != "British")
    out = _link(clean_store, "What building in Vienna, Austria has 50 floors?", {"location.location.containedby": 0.6})
    assert out[0].id == "Vienna"
    out = _link(clean_store, "What super bowls have the Giants won?",
                {"sports.sports_championship_event.champion": 0.6})
    assert "New York Giants" in [e.id for e in out] and "San Francisco Giants" not in [e.id for e in out]


def test_a_further_entity_the_graph_joins_to_the_topic_through_an_event_links_at_a_lower_score(clean_store):
    """A conjunction's second entity: *Chinese language* is three edges from *Logan Lerman* (his performance, the
    film, its language), so it links although it scores below the unjoined threshold; *Mandarin Chinese*, a
    namesake that nothing joins to him, does not (sgr/retrieval/mentions.py: topic_hops, JOINED_MIN_SCORE)."""
    from sgr.retrieval import mentions

    b = GraphBatch()
    b.add_entity("m.0perf", None)
    b.add_triple("Logan Lerman", "film.actor.film", "m.0perf")
    b.add_triple("m.0perf", "film.performance.film", "3:10 to Yuma")
    b.add_triple("3:10 to Yuma", "film.film.language", "Chinese language")
    b.add_triple("Film Z", "film.film.language", "Mandarin Chinese")
    b.add_triple("Noah Lerman", "people.person.profession", "Actor")
    write_graph(clean_store, b)
    clean_store.write("MATCH (c:Entity {id: 'm.0perf'}) SET c:CVT")
    q = "What Chinese language movies featured Logan Lerman?"
    ranked = mentions.rank(q, mentions.mention_candidates(clean_store, q), {"film.actor.film": 0.6})
    assert ranked[0].id == "Logan Lerman"
    for c in ranked[1:]:  # every other candidate scores between the joined and the unjoined thresholds
        c.score = (mentions.JOINED_MIN_SCORE[3] + mentions.FURTHER_MIN_SCORE) / 2
    ranked = mentions.best_first(ranked)
    hops = mentions.topic_hops(clean_store, ranked)
    assert hops.get("Chinese language") == 3 and "Mandarin Chinese" not in hops and "Noah Lerman" not in hops
    chinese = next(c for c in ranked if c.id == "Chinese language")
    assert [c.id for c in mentions.choose(ranked)] == ["Logan Lerman"]
    chosen = [c.id for c in mentions.choose(ranked, joined=hops)]
    assert chosen[:1] == ["Logan Lerman"] and chinese.id in chosen and "Mandarin Chinese" not in chosen


def test_gold_paths_start_at_the_topic_either_way_along_each_edge(clean_store):
    """WebQSP train questions have gold relation paths but no topics: the candidate node the paths start from is the
    topic (sgr/retrieval/supervision.py), each edge walked either way, a CVT passed through."""
    from sgr.retrieval.supervision import path_starts, topic_from_paths

    b = GraphBatch()
    b.add_triple("Japan", "location.country.currency_used", "Japanese yen")
    b.add_triple("Japan", "location.location.containedby", "Asia")
    b.add_triple("Currency", "common.topic.notable_types", "Japanese yen")
    b.add_entity("m.0perf", None)
    b.add_triple("Natalie Portman", "film.actor.film", "m.0perf")
    b.add_triple("Padmé Amidala", "film.performance.character", "m.0perf")  # stored against Freebase's direction
    b.add_triple("Star Wars", "film.film.starring", "m.0perf")
    write_graph(clean_store, b)
    ids = ["Japan", "Currency", "Japanese yen", "Asia", "Natalie Portman", "Star Wars", "Padmé Amidala", "Nobody"]
    starts = path_starts(clean_store, ids, [["location.country.currency_used"]])
    assert starts == {"Japan": 1, "Japanese yen": 1}  # a one-relation path starts at both of its ends
    assert topic_from_paths(starts) is None
    starts = path_starts(clean_store, ids, [["location.country.currency_used"], ["location.location.containedby"]])
    assert starts == {"Japan": 2, "Japanese yen": 1, "Asia": 1} and topic_from_paths(starts) == "Japan"
    starts = path_starts(clean_store, ids, [["film.actor.film", "film.performance.character"]])
    assert starts == {"Natalie Portman": 1}  # the film and the character start the path's other end only
    assert path_starts(clean_store, ids, [["film.performance.character", "film.actor.film"]]) == {"Padmé Amidala": 1}
    assert path_starts(clean_store, ids, [["a"] * 5]) == {}  # longer than MAX_START_PATH: not walked


def test_a_given_topic_scorer_is_the_one_linking(clean_store):
    """``EntityLinker(link_scorer=…)`` ranks with that scorer (bench/linking.py compares the shipped one and a new
    one in one run): a scorer that prefers the answer-type word links *Country*."""
    from types import SimpleNamespace

    import numpy as np

    from sgr.core.types import Question
    from sgr.evaluation.linking import linking_accuracy
    from sgr.retrieval import mentions

    b = GraphBatch()
    b.add_triple("Eiffel Tower", "location.location.containedby", "Paris")
    b.add_triple("France", "common.topic.notable_types", "Country")
    write_graph(clean_store, b)
    names = mentions.FEATURES
    prefers_type = mentions.LinkScorer(names, np.array([5.0 if n == "after_wh" else 0.0 for n in names]), 0.0,
                                       np.zeros(len(names)), np.ones(len(names)))
    q = "which country is the eiffel tower located in?"
    rels = {"location.location.containedby": 0.8}
    assert EntityLinker(clean_store, link_scorer=prefers_type).link_question(q, relation_scores=rels)[0].id == "Country"
    assert EntityLinker(clean_store).link_question(q, relation_scores=rels)[0].id == "Eiffel Tower"

    class Relations:  # the relation evidence a retriever would give
        def retrieve(self, text, k):
            return [SimpleNamespace(name=n, score=s) for n, s in rels.items()]

    gold = [Question(id="e", text=q, topic_entities=["Eiffel Tower"])]
    assert linking_accuracy(clean_store, gold, Relations(), scorer=prefers_type).accuracy == 0.0
    assert linking_accuracy(clean_store, gold, Relations()).accuracy == 1.0
