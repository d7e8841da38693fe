"""Training data without labelled questions and CWQ dev's split: the question templates of
sgr/retrieval/graph_questions.py (the walks themselves run on a real Neo4j: tests/e2e/rcr/test_graph_questions.py),
and the split of CWQ dev by WebQSP base question (sgr/retrieval/supervision.py)."""

from __future__ import annotations

import random

import pytest

from sgr.core.errors import ConfigError
from sgr.retrieval.graph_questions import BACKWARD, FORWARD, GraphWalk, Step, question_text, relation_words
from sgr.retrieval.supervision import base_question, split_by_base


def test_relation_words_read_freebase_and_plain_names() -> None:
    assert relation_words("film.film.directed_by") == ("directed by", "film")
    assert relation_words("people.person.place_of_birth") == ("place of birth", "person")
    assert relation_words("starred_actors") == ("starred actors", None)


def _walk(*steps: tuple[tuple[str, ...], tuple[str, ...]], start: str = "Titanic") -> GraphWalk:
    return GraphWalk(start=start, start_id="x", steps=[Step(r, d) for r, d in steps], end="End")


def test_a_forward_hop_asks_for_the_property_of_the_start_entity() -> None:
    walk = _walk((("film.film.directed_by",), ("out",)))
    text = question_text(walk, random.Random(0))
    assert walk.path == ("film.film.directed_by",)
    assert "directed by" in text and "Titanic" in text and text.endswith("?")
    assert any(text == t.format(P="directed by", X="Titanic") for t in FORWARD)


def test_a_backward_hop_names_the_type_of_the_answer() -> None:
    text = question_text(_walk((("film.film.directed_by",), ("in",)), start="James Cameron"), random.Random(1))
    assert any(text == t.format(P="directed by", T="film", X="James Cameron") for t in BACKWARD)


def test_a_cvt_hop_is_worded_by_the_relation_leaving_the_cvt_and_keeps_both_relations() -> None:
    walk = _walk((("people.person.spouse_s", "people.marriage.spouse"), ("out", "out")),
                 (("people.person.place_of_birth",), ("out",)), start="Alice")
    text = question_text(walk, random.Random(2))
    assert walk.path == ("people.person.spouse_s", "people.marriage.spouse", "people.person.place_of_birth")
    assert "the spouse of Alice" in text and "place of birth" in text
    assert "spouse s" not in text  # the relation into the CVT is not worded


def test_cwq_questions_split_by_base_question_never_across() -> None:
    ids = [f"WebQTrn-{b}_{i}" for b in range(20) for i in range(b % 4 + 1)]
    train, held = split_by_base(ids, 0.2, seed=0)
    assert set(train).isdisjoint(held) and set(train) | set(held) == {base_question(i) for i in ids}
    n_held = sum(base_question(i) in held for i in ids)
    assert n_held >= 0.2 * len(ids) and n_held < 0.2 * len(ids) + 4  # stops once the share is reached
    assert split_by_base(ids, 0.2, seed=0) == (train, held) and split_by_base(ids, 0.2, seed=1) != (train, held)
    assert base_question("WebQTrn-12_abc") == "WebQTrn-12" and base_question("WebQTrn-12") == "WebQTrn-12"
    with pytest.raises(ConfigError):
        split_by_base(ids, 1.0)
