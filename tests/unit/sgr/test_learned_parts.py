"""The learned parts of S_q and G_q without a server: the hop prior, the path ranker, the topic scorer, and the
unchecked-constraint notes."""

import numpy as np
import pytest

from sgr.core.lexicon import NUMBER_LITERAL
from sgr.methods.sgr.constraints import unchecked_constraints
from sgr.methods.sgr.path_ranker import FEATURES, PathRanker, train_path_ranker
from sgr.methods.sgr.schema import Constraint, rule_constraints
from sgr.methods.sgr.subgraph import ExpansionConfig, expansion_depth
from sgr.methods.sgr.word_relations import (WordRelations, asking_words, fit_word_relations, lexicon_words,
                                             load_word_relations)
from sgr.retrieval import mentions
from sgr.retrieval.hops import HOP_CLASSES, HopModel, hop_class, length_penalty


def test_length_penalty_is_the_old_one_without_a_prior_and_the_probability_gap_with_one():
    assert [length_penalty(h, None) for h in (1, 2, 3)] == [0.0, 1.0, 2.0]
    dist = {1: 0.2, 2: 0.7, 3: 0.1}
    assert length_penalty(2, dist) == 0.0  # the likeliest count costs nothing
    assert length_penalty(1, dist) == pytest.approx(0.5) and length_penalty(5, dist) == pytest.approx(0.6)
    assert hop_class(0) == 1 and hop_class(7) == HOP_CLASSES[-1]


def test_g_q_goes_three_hops_deep_only_when_the_question_asks_for_it():
    deep = {1: 0.1, 2: 0.3, 3: 0.6}
    assert expansion_depth(ExpansionConfig(), deep) == 3
    assert expansion_depth(ExpansionConfig(), {1: 0.2, 2: 0.4, 3: 0.4}) == 2
    assert expansion_depth(ExpansionConfig(), None) == 2  # no hop model: the configured depth
    assert expansion_depth(ExpansionConfig(deeper_at=2.0), deep) == 2  # off
    assert expansion_depth(ExpansionConfig(hops=4), deep) == 4  # never shallower than asked
    assert expansion_depth(ExpansionConfig(hops=1), deep) == 3


def test_hop_model_round_trips_and_sums_to_one(monkeypatch):
    import sgr.llm.encoders as enc

    monkeypatch.setattr(enc, "embed_texts", lambda texts, name="minilm": np.asarray(
        [[1.0, 0.0] if "composer of" in t else [0.0, 1.0] for t in texts], dtype=np.float32))
    m = HopModel("minilm", HOP_CLASSES, np.asarray([[-3.0, 3.0], [3.0, -3.0], [0.0, 0.0]], dtype=np.float32),
                 np.zeros(3, dtype=np.float32))
    again = HopModel.from_dict(m.to_dict())
    p = again.probabilities(["where did the composer of X grow up", "where was X born"])
    assert p.shape == (2, 3) and np.allclose(p.sum(axis=1), 1.0)
    assert p[0].argmax() == 1 and p[1].argmax() == 0  # the composition reads two hops, the plain one one


def _parts(**kw):
    return {f: kw.get(f, 0.0) for f in FEATURES}


def test_path_ranker_learns_the_deciding_term_and_round_trips():
    """Each question's right path is the one whose hop count the question asks for (gap 0); relation scores are
    noise: the listwise fit ranks by the gap, and its Platt-scaled scores read as probabilities."""
    rng = np.random.default_rng(0)
    groups, labels = [], []
    for _ in range(150):
        right = int(rng.integers(0, 4))
        groups.append([_parts(p_hops_gap=0.0 if i == right else float(rng.uniform(0.3, 1.0)),
                              rel_mean=float(rng.uniform(0, 1))) for i in range(4)])
        labels.append([int(i == right) for i in range(4)])
    r = train_path_ranker(groups, labels, hidden=8, epochs=20, seeds=(0, 1))
    assert r.score(_parts(p_hops_gap=0.0, rel_mean=0.5)) > 0.6 > 0.2 > r.score(_parts(p_hops_gap=0.9, rel_mean=0.5))
    again = PathRanker.from_dict(r.to_dict(), FEATURES)
    assert again.score(_parts(p_hops_gap=0.1)) == pytest.approx(r.score(_parts(p_hops_gap=0.1)))
    bad = r.to_dict() | {"features": ["rel_mean"]}
    with pytest.raises(ValueError, match="not this version"):
        PathRanker.from_dict(bad, FEATURES)
    with pytest.raises(ValueError, match="refit"):  # a linear ranker's file (no hidden layer) is refused
        PathRanker.from_dict({k: v for k, v in r.to_dict().items() if k != "kind"}, FEATURES)


def test_path_ranker_learns_a_term_whose_meaning_depends_on_the_question_shape():
    """A relation that matches the question well is right when the hop prior reads one hop (a lookup) and the trap
    when it reads two (the composition's bridge is the right path): no single weight on rel_mean ranks both, the
    hidden layer does (and the linear listwise fit cannot)."""
    from sgr.core.logistic import fit_listwise

    rng = np.random.default_rng(1)
    groups, labels = [], []
    for n in range(200):
        one_hop = n % 2 == 0
        rels = rng.uniform(0, 1, size=3)
        right = int(rels.argmax() if one_hop else rels.argmin())
        groups.append([_parts(rel_mean=float(x), p_hops=1.0 if one_hop else 0.0) for x in rels])
        labels.append([int(i == right) for i in range(3)])
    r = train_path_ranker(groups, labels, hidden=8, epochs=40, seeds=(0,))
    lin = fit_listwise(FEATURES, groups, labels)

    def acc(scorer) -> float:
        return float(np.mean([max(range(3), key=lambda i: scorer.score(g[i])) == ys.index(1)
                              for g, ys in zip(groups, labels)]))

    assert acc(r) > 0.9 and acc(lin) < 0.7
    assert r.score(_parts(rel_mean=0.9, p_hops=1.0)) > r.score(_parts(rel_mean=0.1, p_hops=1.0))
    assert r.score(_parts(rel_mean=0.1, p_hops=0.0)) > r.score(_parts(rel_mean=0.9, p_hops=0.0))


def test_word_relations_learn_the_word_that_asks_for_the_last_relation_and_round_trip(tmp_path):
    """"do" asks for a profession in every question that has it, "live" for a residence; "the" goes with every
    relation alike and tells nothing; a word the dev questions never had scores 0."""
    qs = [("what did the singer of X do", ["people.person.profession"]),
          ("what did the author of Y do for a living", ["people.person.profession"]),
          ("what does Z do", ["people.person.profession"]),
          ("where does the author of W live", ["people.person.places_lived"]),
          ("where did the painter live", ["people.person.places_lived"]),
          ("what is the capital of the country", ["location.country.capital"])] * 3
    lex = fit_word_relations(qs, prior_relations=3)  # the prior's mass on three relations, as many as there are
    prof = "people.person.profession"
    assert lex.score("what did the composer of Q do", prof) > 0.3
    assert lex.score("what did the composer of Q do", "people.person.places_lived") < lex.score(
        "where did the composer of Q live", "people.person.places_lived")
    assert lex.score("the", prof) == 0.0 and lex.score("when was Q founded", prof) == 0.0
    assert lex.score("what did Q do", "film.film.directed_by") == 0.0  # a relation it never saw
    again = load_word_relations(lex.save(tmp_path / "w.json"))
    assert isinstance(again, WordRelations) and again.scores == lex.scores
    assert again.provenance["questions"] == len(qs)
    assert load_word_relations(tmp_path / "missing.json") is None


def test_the_words_that_ask_leave_out_the_linked_entities_names():
    """A name goes with its entity's usual relations in the dev questions ("japan" with the Olympics); it says which
    entity the question is about, not which relation gives the answer."""
    lex = fit_word_relations([("when did japan join the olympics", ["olympics.participating_countries"]),
                              ("what olympics did japan host", ["olympics.participating_countries"]),
                              ("what currency does france use", ["location.country.currency_used"]),
                              ("what is the money of chile", ["location.country.currency_used"])] * 3,
                             prior_relations=2)
    q, olympics, currency = "what currency does japan use?", "olympics.participating_countries", \
        "location.country.currency_used"
    assert lex.score(q, olympics) > 0  # read with its name, the question goes with Japan's Olympics
    asking = asking_words(q, ["japan", "Japan"])
    assert asking == lexicon_words(q) - {"japan"}
    assert lex.score(asking, olympics) == 0.0 and lex.score(asking, currency) > 0
    assert asking_words(q) == lexicon_words(q)  # nothing linked: every word


def _cand(span, start, end, node, match=1.0, types=(), type_node=0.0):
    c = mentions.MentionCandidate(span, start, end, node, node, match, "exact")
    c.relation_types = list(types)
    c.features["type_node"] = type_node
    return c


def test_topic_scoring_reads_the_type_position_and_the_relation_evidence():
    q = "what currency does japan use?"
    cands = [_cand("currency", 1, 2, "Currency", types=["common.topic.notable_types"], type_node=1.0),
             _cand("japan", 3, 4, "Japan", types=["location.country.currency_used"])]
    ranked = mentions.rank(q, cands, {"location.country.currency_used": 0.9}, scorer=None)
    assert ranked[0].id == "Japan"
    assert next(c for c in cands if c.id == "Currency").features["after_wh"] == 1.0
    assert all(c.features["cased_question"] == 0.0 for c in cands)  # a lower-case question says nothing by case


def test_choose_keeps_the_topic_and_non_overlapping_further_entities():
    a, b, c = _cand("logan lerman", 3, 5, "L"), _cand("lerman", 4, 5, "X"), _cand("guy barnes", 9, 11, "G")
    a.score, b.score, c.score = 0.9, 0.8, 0.6
    assert [e.id for e in mentions.choose([a, b, c])] == ["L", "G"]
    c.score = 0.2
    assert [e.id for e in mentions.choose([a, b, c])] == ["L"]
    assert [e.id for e in mentions.choose([a, b, c], joined={"G": 3})] == ["L"]  # not written as a name
    c.features["capitalised"] = 1.0
    assert [e.id for e in mentions.choose([a, b, c], joined={"G": 3})] == ["L", "G"]  # a name joined through an event
    assert [e.id for e in mentions.choose([a, b, c], joined={"G": 1})] == ["L"]  # an edge asks for more
    assert [e.id for e in mentions.choose([a, b, c], joined={"X": 3})] == ["L"]  # X overlaps the topic
    assert mentions.spans(mentions.question_words("what else did ben franklin invent?"))[0][2] == \
        "else did ben franklin invent"


def test_stated_numbers_and_untranslatable_comparisons_are_reported_unchecked():
    assert [m.group(0) for m in NUMBER_LITERAL.finditer("a rate of 11.6 and -100816373, Super Bowl XLII")] == \
        ["11.6", "-100816373"]
    q = "what country with a long term unemployment rate of 15.5 speaks X?"
    assert any("15.5" in n for n in unchecked_constraints(None, [], rule_constraints(q), q))
    q = "which country in X has an iso numeric greater than 132?"
    notes = unchecked_constraints(None, [], rule_constraints(q), q)
    assert any("greater than" in n for n in notes)
    q = "which city in X has more than 5 million people?"  # a known measure: a condition can test it
    assert not unchecked_constraints(None, [], rule_constraints(q), q)
    assert not unchecked_constraints(None, [], [Constraint("type", "what city", "city")], "what city is X in")
