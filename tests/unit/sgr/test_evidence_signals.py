"""The confidence's evidence-strength signals of the top answer (sgr/methods/sgr/trace.py)."""

import pytest

from sgr.methods.sgr import trace
from sgr.methods.sgr.decision import CandidateIn, DecisionInputs, VoteIn
from sgr.methods.sgr.word_relations import fit_word_relations

AUTHOR, CHARACTER = ("book.written_work.author",), ("book.book.characters",)


def vote(answer, rels, eta, rho=0.0):
    return VoteIn(answer, answer, rels, rho, eta)


def hobbit():
    return DecisionInputs(["compiled"], [CandidateIn("tolkien", "Tolkien", "compiled", AUTHOR, 1.0, 0.5)],
                          [vote("tolkien", AUTHOR, 0.9), vote("tolkien", ("book.book.editions", "book.author"), 0.6),
                           vote("gloin", CHARACTER, 0.5), vote("bilbo", CHARACTER, 0.4)])


def test_evidence_counts_the_walks_and_the_lead_over_a_rival_reached_another_way():
    ev = trace.answer_evidence(hobbit(), "tolkien", lam=0.0)  # ω = η at λ = 0
    assert ev.votes_top == 2 and ev.relations == AUTHOR and ev.vote_share == pytest.approx(2 / 4)
    assert ev.omega_top == pytest.approx(0.9) and ev.rival_gap == pytest.approx(0.9 - 0.5)
    lone = trace.answer_evidence(hobbit(), "gloin", lam=0.0)  # a walk to another answer by the same path is no rival
    assert lone.votes_top == 1 and lone.rival_gap == pytest.approx(0.5 - 0.9)
    only_candidate = DecisionInputs(["compiled"], [CandidateIn("x", "X", "compiled", AUTHOR, 1.0, 0.5)], [])
    ev = trace.answer_evidence(only_candidate, "x", lam=0.0)
    assert (ev.votes_top, ev.vote_share, ev.omega_top, ev.relations) == (0, 0.0, 0.0, AUTHOR)
    # only the strongest EVIDENCE_VOTES walks count: a weak walk beyond them adds nothing
    many = DecisionInputs(["compiled"], [], [vote(f"x{i}", CHARACTER, 0.9) for i in range(trace.EVIDENCE_VOTES)]
                          + [vote("tolkien", AUTHOR, 0.1)])
    assert trace.answer_evidence(many, "tolkien", lam=0.0).votes_top == 0


def test_vote_share_is_the_top_answers_share_of_the_walks_read():
    alone = DecisionInputs(["compiled"], [], [vote("tolkien", AUTHOR, 0.9), vote("tolkien", AUTHOR, 0.5)])
    assert trace.evidence_signals(alone, "tolkien", 0.0)["ev_vote_share"] == 1.0  # every walk reaches it
    spread = DecisionInputs(["compiled"], [], [vote("tolkien", AUTHOR, 0.9)]
                            + [vote(f"x{i}", CHARACTER, 0.5) for i in range(9)])
    assert trace.evidence_signals(spread, "tolkien", 0.0)["ev_vote_share"] == pytest.approx(0.1)
    # counted among the EVIDENCE_VOTES strongest walks only, as a stored prediction records them
    many = DecisionInputs(["compiled"], [], [vote("tolkien", AUTHOR, 0.9)]
                          + [vote(f"x{i}", CHARACTER, 0.5 - i * 1e-3) for i in range(2 * trace.EVIDENCE_VOTES)])
    assert trace.evidence_signals(many, "tolkien", 0.0)["ev_vote_share"] == pytest.approx(1 / trace.EVIDENCE_VOTES)
    record = {"question": "q", "answers": [{"id": "tolkien", "text": "Tolkien"}],
              "extra": {"decision": {"inputs": many.to_dict(trace.EVIDENCE_VOTES, 0.0)}}}
    assert trace.recorded_signals(record, 0.0)["ev_vote_share"] == pytest.approx(1 / trace.EVIDENCE_VOTES)
    assert trace.evidence_signals(None, None, 0.0)["ev_vote_share"] == 0.0


def test_relation_paths_are_read_under_their_paired_names():
    inputs = DecisionInputs(["compiled"], [], [vote("tolkien", AUTHOR, 0.9), vote("x", ("book.author.works_written",),
                                                                                   0.8)],
                            same_relation={"book.author.works_written": AUTHOR[0]})
    assert trace.answer_evidence(inputs, "tolkien", lam=0.0).rival_gap == pytest.approx(0.9)  # x is no rival


def test_evidence_signals_from_a_stored_prediction_equal_the_live_ones():
    live = trace.evidence_signals(hobbit(), "tolkien", 0.3, question="who wrote the hobbit?")
    record = {"question": "who wrote the hobbit?", "answers": [{"id": "tolkien", "text": "Tolkien"}],
              "extra": {"decision": {"inputs": hobbit().to_dict(50, 0.3)}}}
    assert trace.recorded_signals(record, 0.3) == pytest.approx(live)
    assert set(live) == set(trace.EVIDENCE_SIGNALS) and live["dotted_names"] == 1.0 and live["ev_lex_last"] > 0
    assert trace.recorded_signals({"question": "q", "answers": []}, 0.3) == dict.fromkeys(trace.EVIDENCE_SIGNALS, 0.0)


def test_dotted_names():
    assert trace.dotted_names(("directed_by",)) == 0.0 and trace.dotted_names(AUTHOR) == 1.0
    assert trace.dotted_names(("directed_by",) + AUTHOR) == 0.0 and trace.dotted_names(()) == 0.0


def test_sources_count_the_kinds_of_candidate_source_that_reach_the_answer():
    model = CandidateIn("tolkien", "Tolkien", "model1", AUTHOR, 0.0, 0.9, "model-path")  # not valid: γ 0, still counts
    second = CandidateIn("tolkien", "Tolkien", "model2", AUTHOR, 1.0, 0.4, "model-path")  # the same kind again
    other = CandidateIn("gloin", "Gloin", "plan1", CHARACTER, 1.0, 0.9, "plan")
    inputs = DecisionInputs(["model1", "model2", "plan1", "compiled"], hobbit().candidates + [model, second, other],
                            hobbit().votes)
    best = trace.best_candidates(inputs, 0.5)
    assert trace.agreeing_sources(best, "tolkien") == 2  # compiled and the model's paths
    assert trace.agreeing_sources(best, "gloin") == 1 and trace.agreeing_sources(best, "bilbo") == 0
    assert trace.evidence_signals(inputs, "tolkien", 0.3, 0.5)["ev_sources"] == 2.0
    # only the EVIDENCE_CANDIDATES best by v count, as a stored prediction keeps them
    crowd = [CandidateIn(f"x{i}", "X", "compiled", AUTHOR, 1.0, 0.9) for i in range(trace.EVIDENCE_CANDIDATES)]
    weak = DecisionInputs(["compiled", "model1"], crowd + [model], [])
    assert trace.agreeing_sources(trace.best_candidates(weak, 0.5), "tolkien") == 0
    record = {"question": "q", "answers": [{"id": "tolkien", "text": "Tolkien"}],
              "extra": {"decision": {"inputs": inputs.to_dict(trace.EVIDENCE_VOTES, 0.3, trace.EVIDENCE_CANDIDATES,
                                                              0.5)}}}
    assert trace.recorded_signals(record, 0.3, 0.5)["ev_sources"] == 2.0


def word_fit(top, question, names=()):
    """``ev_lex_last`` of ``top`` among :func:`hobbit`'s paths."""
    return trace.asked_relation_fit(trace.answer_evidence(hobbit(), top, 0.3).ends, question, names)


def test_lex_last_is_the_lexicon_score_of_the_relation_that_reaches_the_answer(monkeypatch):
    lexicon = fit_word_relations([("who wrote it?", AUTHOR), ("who wrote that?", AUTHOR),
                                  ("which characters are in it?", CHARACTER),
                                  ("what characters are there?", CHARACTER)])
    monkeypatch.setattr(trace, "load_word_relations", lambda: lexicon)
    wrote = word_fit("tolkien", "who wrote the hobbit?")
    assert wrote == pytest.approx(lexicon.score("who wrote the hobbit?", AUTHOR[0])) and wrote > 0
    # the answer reached only by a character walk does not fit "wrote"; it fits "characters"
    assert word_fit("gloin", "who wrote the hobbit?") == 0.0
    assert word_fit("gloin", "which characters are in the hobbit?") > 0
    # the paths that reach the answer count: its candidate's and its walks' last relations
    assert trace.answer_evidence(hobbit(), "tolkien", 0.3).ends == {AUTHOR[0], "book.author"}
    assert word_fit("nobody", "who wrote the hobbit?") == 0.0
    monkeypatch.setattr(trace, "load_word_relations", lambda: None)  # no lexicon: 0
    assert trace.evidence_signals(hobbit(), "tolkien", 0.3, question="who wrote the hobbit?")["ev_lex_last"] == 0.0


def test_lex_last_leaves_out_the_linked_entities_names_live_and_stored(monkeypatch):
    lexicon = fit_word_relations([("what characters are in the hobbit?", CHARACTER),
                                  ("which characters are in the hobbit?", CHARACTER), ("who wrote it?", AUTHOR)])
    monkeypatch.setattr(trace, "load_word_relations", lambda: lexicon)
    q = "who wrote the hobbit?"
    assert word_fit("gloin", q) > 0  # "hobbit" went with the characters
    assert word_fit("gloin", q, names=["hobbit", "The Hobbit"]) == 0.0
    record = {"question": q, "answers": [{"id": "gloin", "text": "Gloin"}],
              "extra": {"decision": {"inputs": hobbit().to_dict(50, 0.3)},
                        "linked": [{"mention": "hobbit", "id": "m.0h0bb", "name": "The Hobbit", "method": "exact"}]}}
    live = trace.evidence_signals(hobbit(), "gloin", 0.3, question=q, names=["hobbit", "The Hobbit"])
    assert trace.recorded_signals(record, 0.3) == pytest.approx(live) and live["ev_lex_last"] == 0.0


def test_the_shipped_lexicon_tells_the_author_from_a_character_for_who_wrote():
    q = "who wrote the book the hobbit?"
    assert word_fit("tolkien", q) > word_fit("gloin", q)


def test_join_signals_say_whether_the_answer_meets_another_entity_the_question_names():
    # the votes are the walks that met the other linked entity (C_q's join held): an answer they reach meets it
    joined = DecisionInputs(["compiled"], [CandidateIn("x", "X", "compiled", AUTHOR, 1.0, 0.5)],
                            [vote("confederacy", CHARACTER, 0.7)], joined=True)
    assert trace.answer_evidence(joined, "confederacy", lam=0.0).joined
    assert trace.evidence_signals(joined, "confederacy", 0.0, linked=2)["ev_unjoined"] == 0.0
    # two entities named, the answer reached by no joined walk, or no walk met the other one
    assert trace.evidence_signals(joined, "x", 0.0, linked=2)["ev_unjoined"] == 1.0
    loose = DecisionInputs(["compiled"], [], [vote("confederacy", CHARACTER, 0.7)])
    assert (trace.evidence_signals(loose, "confederacy", 0.0, linked=2)["ev_unjoined"],
            trace.evidence_signals(loose, "confederacy", 0.0, linked=1)["ev_unjoined"]) == (1.0, 0.0)
    # a stored prediction counts its linked entities once each
    record = {"question": "q", "answers": [{"id": "x", "text": "X"}],
              "extra": {"decision": {"inputs": joined.to_dict()},
                        "linked": [{"mention": "a", "id": "A"}, {"mention": "b", "id": "B"}, {"mention": "c", "id": "B"}]}}
    assert trace.recorded_signals(record, 0.0) == pytest.approx(trace.evidence_signals(joined, "x", 0.0, linked=2))
