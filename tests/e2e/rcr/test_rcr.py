"""RCR (sgr/methods/rcr/): grammar, parsing, substitution on a hand-built graph in the real Neo4j, the answerer."""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from loaders.writer import GraphBatch, write_graph
from sgr.methods.rcr.method import (RELATION_PATH_PROMPT, RCRAnswerer, RCRConfig, generate_relation_paths, parse_relation_paths,
                     path_guided_subgraph, path_messages, relation_path_grammar)
from sgr.retrieval.relations import CosineRelationRetriever
from sgr.core.types import Question
from sgr.llm.client import LLM
from tests.helpers import scripted_llm

TRIPLES = [
    ("Jamaica", "location.country.languages_spoken", "Jamaican English"),
    ("Jamaica", "location.country.languages_spoken", "Jamaican Creole English Language"),
    ("Jamaica", "location.location.containedby", "Caribbean"),
    ("Jamaica", "location.country.currency_used", "Jamaican dollar"),
    ("Jamaican English", "language.human_language.language_family", "Indo-European languages"),
    # the relation exists in the graph, but not at Jamaica
    ("Spanish Language", "language.human_language.countries_spoken_in", "Spain"),
    # a CVT walk: Usain Bolt -> roster -> team
    ("Usain Bolt", "sports.pro_athlete.teams", "m.0roster1"),
    ("m.0roster1", "sports.sports_team_roster.team", "Racers Track Club"),
]


@pytest.fixture()
def tiny_graph(clean_store):
    batch = GraphBatch()
    for h, r, t in TRIPLES:
        batch.add_triple(h, r, t)
    write_graph(clean_store, batch)
    return clean_store


@pytest.fixture()
def retriever(tiny_graph):
    vocab = [v["name"] for v in tiny_graph.relation_vocabulary()]
    return CosineRelationRetriever(vocab)


def test_grammar_admits_only_candidate_relations() -> None:
    g = relation_path_grammar(["a.b.c", "d.e_f"], max_hops=2, max_paths=3)
    assert 'rel ::= "a.b.c" | "d.e_f"' in g
    assert g.startswith("root ::= path ")
    assert g.count("path)?") == 1 and '", " rel' in g
    with pytest.raises(ValueError):
        relation_path_grammar([], 2, 2)


def test_parse_keeps_only_known_relations_and_drops_duplicates() -> None:
    text = "(a.b, c.d)\n(a.b)\n(a.b, c.d)\n(x.y)\n(c.d, a.b, a.b, a.b)"
    assert parse_relation_paths(text, ["a.b", "c.d"], max_hops=3) == [("a.b", "c.d"), ("a.b",)]


def test_prompt_is_the_appendix_a3_template() -> None:
    msgs = path_messages("what does jamaican people speak", "Jamaica", ["r1", "r2"], beam=1)
    text = msgs[-1].content
    assert text.startswith("Please generate a valid relation path that connects the question entity to potential "
                           "answer entities using only the provided candidate relations.")
    assert "Question: what does jamaican people speak\nQuestion Entity: Jamaica\nCandidate Relations: (r1, r2)" in text
    assert "- Prefer shorter and semantically coherent paths." in text
    assert text == RELATION_PATH_PROMPT.format(question="what does jamaican people speak", entity="Jamaica",
                                               relations="r1, r2", paths_line="")


def test_substitution_replaces_a_missing_relation_by_the_most_similar_present_one(tiny_graph, retriever) -> None:
    # Jamaica has no `language.human_language.countries_spoken_in` edge: the most similar relation it has is
    # location.country.languages_spoken (and not containedby / currency_used).
    path = [("language.human_language.countries_spoken_in",)]
    g1 = path_guided_subgraph(tiny_graph, ["Jamaica"], path, retriever, substitutions=1)
    step = g1.walks[0].steps[0]
    assert step.substituted and step.used == ["location.country.languages_spoken"]
    assert set(g1.endpoints()) == {"Jamaican English", "Jamaican Creole English Language"}
    assert ("Jamaica", "location.country.languages_spoken", "Jamaican English") in g1.triples

    g0 = path_guided_subgraph(tiny_graph, ["Jamaica"], path, retriever, substitutions=0)
    assert g0.walks[0].steps[0].substituted and g0.walks[0].steps[0].used == []
    assert not g0.triples and not g0.endpoints()

    g2 = path_guided_subgraph(tiny_graph, ["Jamaica"], path, retriever, substitutions=2)
    used = g2.walks[0].steps[0].used
    assert len(used) == 2 and used[0] == "location.country.languages_spoken"
    assert len(g2.triples) > len(g1.triples)


def test_exact_paths_walk_through_cvts_in_both_directions(tiny_graph, retriever) -> None:
    g = path_guided_subgraph(tiny_graph, ["Usain Bolt"],
                             [("sports.pro_athlete.teams", "sports.sports_team_roster.team")], retriever)
    assert not g.walks[0].substituted and g.walks[0].complete
    assert list(g.endpoints()) == ["Racers Track Club"]
    (p,) = g.paths_to("Racers Track Club", 0)
    assert p.nodes == ["Usain Bolt", "m.0roster1", "Racers Track Club"] and p.directions == ["out", "out"]
    # walking a relation against its stored direction
    back = path_guided_subgraph(tiny_graph, ["Racers Track Club"],
                                [("sports.sports_team_roster.team", "sports.pro_athlete.teams")], retriever)
    assert list(back.endpoints()) == ["Usain Bolt"]
    assert back.paths_to("Usain Bolt", 0)[0].directions == ["in", "in"]


def test_rcr_answers_from_the_walked_subgraph_with_a_scripted_model(tiny_graph, retriever) -> None:
    # reply 1: the relation paths (one with a relation Jamaica lacks); reply 2: the answers
    llm = scripted_llm("(location.country.languages_spoken)\n(language.human_language.countries_spoken_in)",
                       "Jamaican English\nNot In The Graph")
    rcr = RCRAnswerer(tiny_graph, llm, retriever, RCRConfig(candidates=20, beam=4, examples=0))
    q = Question(id="q1", text="what does jamaican people speak", topic_entities=["Jamaica"])
    pred = rcr.answer(q)
    assert pred.error is None, pred.error
    assert [a.text for a in pred.answers] == ["Jamaican English"]  # the ungrounded line is dropped
    assert pred.answers[0].paths and pred.answers[0].paths[0].nodes == ["Jamaica", "Jamaican English"]
    assert pred.extra["relation_paths"] == [["location.country.languages_spoken"],
                                            ["language.human_language.countries_spoken_in"]]
    assert pred.extra["substitutions"] and pred.extra["substitutions"][0]["used"] == ["location.country.languages_spoken"]
    assert pred.usage.llm_calls == 2 and pred.usage.neo4j_queries > 0
    assert set(pred.usage.stage_seconds) >= {"relations", "paths", "walk", "answer"}


def test_answers_by_support_rank_endpoints_by_the_paths_reaching_them_without_an_answer_call(tiny_graph, retriever) -> None:
    # one reply, the paths: the currency first in the beam; both languages reached by two walks (the second one
    # through the substitution of a relation Jamaica lacks)
    llm = scripted_llm("(location.country.currency_used)\n(location.country.languages_spoken)\n"
                       "(language.human_language.countries_spoken_in)")
    rcr = RCRAnswerer(tiny_graph, llm, retriever, RCRConfig(candidates=20, beam=4, examples=0, answer="support"))
    pred = rcr.answer(Question(id="q1", text="what does jamaican people speak", topic_entities=["Jamaica"]))
    assert pred.error is None, pred.error
    assert [a.text for a in pred.answers] == ["Jamaican Creole English Language", "Jamaican English", "Jamaican dollar"]
    assert pred.extra["answered_by"] == "support" and pred.usage.llm_calls == 1
    assert pred.answers[0].paths[0].nodes == ["Jamaica", "Jamaican Creole English Language"]


def test_ties_in_support_go_to_the_endpoint_more_relations_link_to_the_topic(tiny_graph, retriever) -> None:
    extra = GraphBatch()
    extra.add_triple("Jamaica", "location.country.official_language", "Jamaican English")
    extra.add_triple("Racers Track Club", "sports.sports_team.roster", "m.0roster1")  # the CVT's inverse edge
    write_graph(tiny_graph, extra)
    assert tiny_graph.topic_links(["Jamaica"], ["Jamaican English", "Jamaican Creole English Language", "Spain"]) == {
        "Jamaican English": 2, "Jamaican Creole English Language": 1}  # Spain: linked by none, left out
    # through the roster CVT: (teams, roster_team.team) and (teams, sports_team.roster)
    assert tiny_graph.topic_links(["Usain Bolt"], ["Racers Track Club"]) == {"Racers Track Club": 2}
    # one path reaches both languages: the official one (two relations to Jamaica) goes first, not the first name
    llm = scripted_llm("(location.country.languages_spoken)")
    rcr = RCRAnswerer(tiny_graph, llm, retriever, RCRConfig(candidates=20, examples=0, answer="support"))
    pred = rcr.answer(Question(id="q1", text="what does jamaican people speak", topic_entities=["Jamaica"]))
    assert [a.text for a in pred.answers] == ["Jamaican English", "Jamaican Creole English Language"]


def test_an_endpoint_that_meets_two_linked_topics_goes_before_better_supported_ones(tiny_graph) -> None:
    # "which caribbean country uses the jamaican dollar?": two relations from the Caribbean reach Barbados and Cuba,
    # one reaches Jamaica; only Jamaica also meets the second topic (its currency), so the join puts it first
    extra = GraphBatch()
    for country in ("Jamaica", "Barbados", "Cuba"):
        extra.add_triple("Caribbean", "location.location.contains", country)
    for country in ("Barbados", "Cuba"):
        extra.add_triple("Caribbean", "base.locations.continents.countries_within", country)
    write_graph(tiny_graph, extra)
    topics = ["Caribbean", "Jamaican dollar"]
    assert tiny_graph.topic_meetings(topics, ["Jamaica", "Barbados", "Spain"]) == {
        "Jamaica": (3, 2), "Barbados": (2, 1)}  # (relations linking it to the topics, topics it meets); Spain: none
    assert tiny_graph.topic_meetings(["Usain Bolt"], ["Racers Track Club"]) == {"Racers Track Club": (1, 1)}  # a CVT
    retriever = CosineRelationRetriever([v["name"] for v in tiny_graph.relation_vocabulary()])
    llm = scripted_llm("(location.location.contains)\n(base.locations.continents.countries_within)")
    rcr = RCRAnswerer(tiny_graph, llm, retriever, RCRConfig(candidates=20, beam=4, examples=0, answer="support",
                                                            substitutions=0))
    pred = rcr.answer(Question(id="q4", text="which caribbean country uses the jamaican dollar", topic_entities=topics))
    assert pred.error is None, pred.error
    assert [a.text for a in pred.answers] == ["Jamaica", "Barbados", "Cuba"]
    # one topic linked: no join, the support decides
    alone = rcr.answer(Question(id="q5", text="which caribbean country", topic_entities=["Caribbean"]))
    assert [a.text for a in alone.answers][:2] == ["Barbados", "Cuba"]


def test_a_walk_that_comes_back_to_a_node_answers_with_the_loop_erased(tiny_graph) -> None:
    # Bolt -teams-> roster -team-> Racers -roster-> roster -team-> Racers: a relation, then its inverse, then the
    # relation again (what a 4-relation path in the graph grammar can be); the endpoint keeps the path without the loop
    extra = GraphBatch()
    extra.add_triple("Racers Track Club", "sports.sports_team.roster", "m.0roster1")
    write_graph(tiny_graph, extra)
    retriever = CosineRelationRetriever([v["name"] for v in tiny_graph.relation_vocabulary()])
    path = ("sports.pro_athlete.teams", "sports.sports_team_roster.team", "sports.sports_team.roster",
            "sports.sports_team_roster.team")
    g = path_guided_subgraph(tiny_graph, ["Usain Bolt"], [path], retriever)
    assert list(g.endpoints()) == ["Racers Track Club"]
    (p,) = g.paths_to("Racers Track Club", 0)
    assert p.nodes == ["Usain Bolt", "m.0roster1", "Racers Track Club"]
    assert p.relations == ["sports.pro_athlete.teams", "sports.sports_team_roster.team"]
    llm = scripted_llm("(" + ", ".join(path) + ")")
    rcr = RCRAnswerer(tiny_graph, llm, retriever, RCRConfig(candidates=20, examples=0, max_hops=4, answer="support"))
    pred = rcr.answer(Question(id="q3", text="who did usain bolt run for", topic_entities=["Usain Bolt"]))
    assert pred.error is None, pred.error
    assert [a.text for a in pred.answers] == ["Racers Track Club"]


def test_the_graph_grammar_admits_only_paths_that_exist_at_the_topic(tiny_graph, retriever) -> None:
    # the reply names a relation the graph holds but not at Jamaica: the graph grammar would not have admitted it
    llm = scripted_llm("path: location.country.languages_spoken\npath: language.human_language.countries_spoken_in")
    sent = []
    real = llm.complete
    llm.complete = lambda msgs, **kw: sent.append(kw) or real(msgs, **kw)
    cfg = RCRConfig(examples=0, path_prompt="schema", path_grammar="graph", answer="support")
    rcr = RCRAnswerer(tiny_graph, llm, retriever, cfg)
    pred = rcr.answer(Question(id="q1", text="what does jamaican people speak", topic_entities=["Jamaica"]))
    assert pred.error is None, pred.error
    grammar = sent[0]["grammar"]
    assert "location.country.currency_used" in grammar and "countries_spoken_in" not in grammar
    assert pred.extra["relation_paths"] == [["location.country.languages_spoken"]]
    assert pred.extra["path_grammar"] == "graph" and not pred.extra["substitutions"]
    assert {a.text for a in pred.answers} == {"Jamaican English", "Jamaican Creole English Language"}


def test_the_real_model_writes_paths_that_exist_at_the_topic(tiny_graph, retriever, local_llm) -> None:
    from sgr.methods.rcr.paths import graph_schema_paths
    from sgr.methods.sgr.prompts import parse_schema_reply
    from sgr.methods.sgr.trie import relation_paths

    there = relation_paths(tiny_graph, ["Jamaica"], max_hops=2, max_relations=4)
    paths, raw = graph_schema_paths(local_llm, tiny_graph, retriever, "what does jamaican people speak", ["Jamaica"],
                                    ["Jamaica"], RCRConfig(beam=3, max_hops=2))
    assert raw.strip(), "the model returned nothing"
    assert 1 <= len(paths) <= 3
    # the grammar admits nothing else: every path line of the model's own reply exists at Jamaica
    written = parse_schema_reply(raw)[0]
    assert written and all(p in there for p in written)


@pytest.mark.neo4j
def test_an_unknown_answer_mode_or_path_depth_is_refused(tiny_graph, retriever) -> None:
    from sgr.core.errors import ConfigError

    with pytest.raises(ConfigError, match="answer must be one of auto, llm, support"):
        RCRAnswerer(tiny_graph, scripted_llm("x"), retriever, RCRConfig(examples=0, answer="vote"))
    with pytest.raises(ConfigError, match="path_depth must be one of question, max"):
        RCRAnswerer(tiny_graph, scripted_llm("x"), retriever, RCRConfig(examples=0, path_depth="deep"))


def test_rcr_reports_an_unknown_topic_entity(tiny_graph, retriever) -> None:
    llm = scripted_llm("(location.country.languages_spoken)")
    rcr = RCRAnswerer(tiny_graph, llm, retriever, RCRConfig(examples=0))
    pred = rcr.answer(Question(id="q2", text="what does atlantis speak", topic_entities=["Atlantis Nowhere"]))
    assert pred.error and "Atlantis" in pred.error and not pred.answers


def test_the_real_model_writes_paths_only_from_the_retrieved_relations(local_llm) -> None:
    cands = ["location.country.languages_spoken", "location.location.containedby", "location.country.currency_used",
             "people.person.nationality", "language.human_language.countries_spoken_in"]
    paths, raw = generate_relation_paths(local_llm, "what does jamaican people speak", "Jamaica", cands,
                                         RCRConfig(beam=3, max_hops=2))
    assert raw.strip(), "the model returned nothing"
    assert 1 <= len(paths) <= 3
    assert all(1 <= len(p) <= 2 and set(p) <= set(cands) for p in paths)
    # the grammar admits nothing else: every reply line is a parenthesised path of candidates
    assert len(parse_relation_paths(raw, cands, 2)) == len(paths)
    assert all(line.startswith("(") and line.endswith(")") for line in raw.strip().splitlines())


@pytest.mark.neo4j
def test_rcr_options_are_typed_and_an_unknown_one_is_refused(tiny_graph, retriever) -> None:
    from sgr.core.errors import ConfigError
    from sgr.methods.base import MethodContext
    from sgr.methods.rcr.method import create

    llm = LLM(FakeListChatModel(responses=["x"]), name="fake")
    rcr = create(MethodContext(store=tiny_graph, options={"candidates": "7", "relation_retriever": retriever},
                               llm=llm))
    assert rcr.config.candidates == 7 and rcr.retriever is retriever
    assert create(MethodContext(store=tiny_graph, options={"substitutions": 1}, llm=llm),
                  substitutions=0, name="rcr-ks0").config.substitutions == 0
    with pytest.raises(ConfigError, match="valid options: .*candidates"):
        create(MethodContext(store=tiny_graph, options={"candidatez": 7}, llm=llm))
    with pytest.raises(ConfigError, match="beam"):
        create(MethodContext(store=tiny_graph, options={"beam": "four"}, llm=llm))


@pytest.mark.neo4j
def test_on_a_warm_cache_rcr_counts_tokens_as_every_metered_method(tiny_graph, retriever, tmp_path) -> None:
    """Cold run: billed tokens. Warm run (same question, LLM cache hit): the same calls, no billed tokens, the
    same tokens as cached ones — exactly what :class:`UsageMeter` reports for the same calls made directly (as
    SGR's stages make them)."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from sgr.methods.base import UsageMeter

    def chat():  # replies with the token counts a real server reports
        return GenericFakeChatModel(messages=iter([
            AIMessage("(location.country.languages_spoken)",
                      usage_metadata={"input_tokens": 120, "output_tokens": 9, "total_tokens": 129}),
            AIMessage("Jamaican English",
                      usage_metadata={"input_tokens": 80, "output_tokens": 4, "total_tokens": 84})]))

    q = Question(id="q1", text="what does jamaican people speak", topic_entities=["Jamaica"])
    cfg = RCRConfig(candidates=20, beam=1, examples=0)
    cold_llm = LLM(chat(), name="fake-usage", cache_dir=tmp_path)
    cold = RCRAnswerer(tiny_graph, cold_llm, retriever, cfg).answer(q).usage
    assert (cold.llm_calls, cold.llm_cached_calls, cold.prompt_tokens, cold.completion_tokens) == (2, 0, 200, 13)

    warm_llm = LLM(chat(), name="fake-usage", cache_dir=tmp_path)
    rcr = RCRAnswerer(tiny_graph, warm_llm, retriever, cfg)
    warm = rcr.answer(q).usage
    assert (warm.llm_calls, warm.llm_cached_calls, warm.prompt_tokens) == (2, 2, 0)
    assert (warm.cached_prompt_tokens, warm.cached_completion_tokens) == (200, 13)

    # the same two calls, made directly under the one meter
    meter = UsageMeter(tiny_graph, warm_llm)
    with meter.measure() as direct:
        rcr.generate_paths(q.text, "Jamaica", [r.name for r in rcr.candidates(q.text)])
        g = path_guided_subgraph(tiny_graph, ["Jamaica"], [("location.country.languages_spoken",)], retriever)
        rcr.generate_answers(q.text, g)
    assert (direct.llm_calls, direct.llm_cached_calls, direct.prompt_tokens, direct.cached_prompt_tokens,
            direct.cached_completion_tokens) == (warm.llm_calls, warm.llm_cached_calls, warm.prompt_tokens,
                                                 warm.cached_prompt_tokens, warm.cached_completion_tokens)
