"""The confidence's evidence-strength and answer-type signals (sgr/methods/sgr/trace.py,
sgr/retrieval/answer_types.py)."""

import pytest

from sgr.methods.sgr.decision import CandidateIn, DecisionInputs, VoteIn
from sgr.methods.sgr import trace
from sgr.retrieval.answer_types import asked_keys, fit_answer_types, role_words

AUTHOR, CHARACTER = ("book.written_work.author",), ("book.book.characters",)


def vote(answer, rels, eta, rho=0.0):
    return VoteIn(answer, answer, rels, rho, eta)


def test_evidence_counts_the_relation_paths_and_the_rival_gap():
    inputs = DecisionInputs(["compiled"], [CandidateIn("tolkien", "Tolkien", "compiled", AUTHOR, 1.0, 0.5)],
                            [vote("tolkien", AUTHOR, 0.9), vote("tolkien", ("book.book.editions", "book.author"), 0.6),
                             vote("gloin", CHARACTER, 0.5), vote("bilbo", CHARACTER, 0.4)])
    ev = trace.answer_evidence(inputs, "tolkien", lam=0.0)  # ω = η at λ = 0
    assert (ev.patterns_top, ev.votes_top, ev.patterns) == (2, 2, 3)
    assert ev.relations == AUTHOR and ev.omega_top == pytest.approx(0.9)
    assert ev.rival_gap == pytest.approx(0.9 - 0.5)
    lone = trace.answer_evidence(inputs, "gloin", lam=0.0)  # one path, and a stronger rival by another path
    assert lone.patterns_top == 1 and lone.rival_gap == pytest.approx(0.5 - 0.9)
    # only the strongest EVIDENCE_VOTES walks count: a weak walk beyond them adds nothing
    many = DecisionInputs(["compiled"], [], [vote(f"x{i}", CHARACTER, 0.9) for i in range(trace.EVIDENCE_VOTES)]
                          + [vote("tolkien", AUTHOR, 0.1)])
    assert trace.answer_evidence(many, "tolkien", lam=0.0).votes_top == 0


def test_evidence_signals_from_a_stored_prediction_equal_the_live_ones():
    inputs = DecisionInputs(["compiled"], [CandidateIn("tolkien", "Tolkien", "compiled", AUTHOR, 1.0, 0.5)],
                            [vote("tolkien", AUTHOR, 0.9), vote("gloin", CHARACTER, 0.5)])
    live = trace.evidence_signals("who wrote the hobbit?", inputs, "tolkien", 0.3)
    record = {"question": "who wrote the hobbit?", "answers": [{"id": "tolkien", "text": "Tolkien"}],
              "extra": {"decision": {"inputs": inputs.to_dict(50, 0.3)}}}
    assert trace.recorded_signals(record, 0.3) == pytest.approx(live)
    assert set(live) == set(trace.EVIDENCE_SIGNALS) and live["dotted_names"] == 1.0
    assert trace.recorded_signals({"question": "q", "answers": []}, 0.3) == dict.fromkeys(trace.EVIDENCE_SIGNALS, 0.0)


def test_relation_overlap_and_dotted_names():
    assert trace.relation_overlap("who wrote the book the hobbit?", ("book.written_work.author",)) == 0.0
    assert trace.relation_overlap("which author wrote it?", ("book.written_work.author",)) == 1.0
    assert trace.relation_overlap("what languages are spoken in jamaica?",
                                  ("location.country.languages_spoken",)) == pytest.approx(1.0)
    assert trace.dotted_names(("directed_by",)) == 0.0 and trace.dotted_names(AUTHOR) == 1.0


def test_asked_keys_and_role_words():
    assert asked_keys("Who wrote the Hobbit?") == ("who:wrote", "who")
    assert asked_keys("what currency does jamaica use") == ("what:currency", "what")
    assert asked_keys("when did it start?") == ("when",) and asked_keys("where is it") == ("where",)
    assert asked_keys("The country that contains Krasnodar Krai uses what type of currency?")[0] == "what:currency"
    assert role_words("location.country.currency_used") == {"country", "currency", "used"}
    assert role_words("directed_by") == {"directed"}


def test_answer_type_match_prefers_the_relation_training_questions_ended_on():
    examples = ([("what currency does jamaica use", ["location.country.currency_used"])] * 6
                + [("what language do they speak in peru", ["location.country.languages_spoken"])] * 6)
    table = fit_answer_types(examples)
    q = "what currency is used in japan"
    assert table.match(q, "location.country.currency_used") > 0 > table.match(q, "location.country.languages_spoken")
    assert table.match("how tall is it", "location.country.currency_used") == 0.0  # a key it never saw
    assert table.match(q, "film.film.directed_by") == 0.0  # words it never saw
    again = type(table).from_dict(table.to_dict())
    assert again.match(q, "location.country.currency_used") == table.match(q, "location.country.currency_used")
