"""Training data without labelled questions and CWQ dev's split: the question templates of
sgr/retrieval/graph_questions.py (the walks themselves run on a real Neo4j: tests/e2e/rcr/test_graph_questions.py),
and the split of CWQ dev by WebQSP base question (sgr/retrieval/supervision.py)."""

from __future__ import annotations

import random

import pytest

from sgr.core.errors import ConfigError
from sgr.retrieval.graph_questions import QUESTIONS, GraphWalk, Step, Wording, question_text, relation_words
from sgr.retrieval.supervision import base_question, split_by_base


def test_relation_words_read_freebase_and_plain_names() -> None:
    assert relation_words("film.film.directed_by") == ("directed by", "film")
    assert relation_words("people.person.place_of_birth") == ("place of birth", "person")
    assert relation_words("starred_actors") == ("starred actors", None)


def _walk(*steps: tuple[tuple[str, ...], tuple[str, ...]], start: str = "Titanic") -> GraphWalk:
    return GraphWalk(start=start, start_id="x", steps=[Step(r, d) for r, d in steps], end="End")


def _asked(text: str, phrases: list[str]) -> bool:
    return any(text == q.format(N=p) for q in QUESTIONS for p in phrases)


def test_a_forward_hop_asks_for_the_property_of_the_start_entity() -> None:
    walk = _walk((("film.film.directed_by",), ("out",)))
    text = question_text(walk, random.Random(0))
    assert walk.path == ("film.film.directed_by",)
    assert "directed by" in text and "Titanic" in text
    assert _asked(text, Wording.of("film.film.directed_by").forward("Titanic", named=True))


def test_a_backward_hop_names_the_type_of_the_answer() -> None:
    texts = {question_text(_walk((("film.film.directed_by",), ("in",)), start="James Cameron"), random.Random(s))
             for s in range(30)}
    phrases = Wording.of("film.film.directed_by").backward("James Cameron")
    assert all(_asked(t, phrases) for t in texts)
    assert any("the films directed by James Cameron" in t for t in texts)  # a participle reads as one
    assert len(texts) > 5  # several phrasings, not one template


def test_a_property_is_worded_as_a_noun_or_a_participle() -> None:
    genre, directed, stars = Wording.of("has_genre"), Wording.of("directed_by"), Wording.of("starred_actors")
    assert (genre.words, genre.noun, genre.kind) == ("has genre", "genre", "one")
    assert directed.noun is None and stars.noun == "starred actors"
    assert "the genre of Alien" in genre.forward("Alien") and "Alien's genre" in genre.forward("Alien", named=True)
    assert "the ones with genre Comedy" in genre.backward("Comedy")
    assert "the one Alien was directed by" in directed.forward("Alien")
    assert "the ones directed by Ridley Scott" in directed.backward("Ridley Scott")
    assert "the ones in French" in Wording.of("in_language").backward("French")
    # a possessive only on a name: "the ones directed by X's genre" would read as X's genre
    assert not any("'s" in p for p in genre.forward("the ones directed by Ridley Scott"))


def test_each_hop_of_a_walk_is_worded_and_the_asked_hop_comes_first_or_last() -> None:
    walk = _walk((("directed_by",), ("in",)), (("starred_actors",), ("out",)), start="Walter Murch")
    texts = [question_text(walk, random.Random(seed)) for seed in range(30)]
    for text in texts:
        assert "Walter Murch" in text and "directed by" in text and ("starred actors" in text or "actors" in text)
    inner = Wording.of("directed_by").backward("Walter Murch")
    after = {q for x in inner for q in Wording.of("starred_actors").asked_after(x, True)}
    asked_last = [t for t in texts if t in after]  # "the ones directed by X have which starred actors?"
    assert asked_last and len(asked_last) < len(texts)  # and "the starred actors of the ones directed by X?"
    assert "the ones directed by Walter Murch have which starred actors?" in after


def test_a_hop_there_and_back_along_one_relation_reads_as_sharing() -> None:
    walk = _walk((("directed_by",), ("out",)), (("directed_by",), ("in",)), start="Titanic")
    phrases = Wording.of("directed_by").shared("Titanic", out=True)
    for seed in range(10):
        assert _asked(question_text(walk, random.Random(seed)), phrases)
    assert "the ones directed by the same one as Titanic" in phrases
    assert "the ones with the same genre as Alien" in Wording.of("has_genre").shared("Alien", out=True)
    assert "the others who share ones with Tom Hanks" in Wording.of("starred_actors").shared("Tom Hanks", out=False)


def test_a_cvt_hop_is_worded_by_the_relation_leaving_the_cvt_and_keeps_both_relations() -> None:
    walk = _walk((("people.person.spouse_s", "people.marriage.spouse"), ("out", "out")),
                 (("people.person.place_of_birth",), ("out",)), start="Alice")
    text = question_text(walk, random.Random(2))
    assert walk.path == ("people.person.spouse_s", "people.marriage.spouse", "people.person.place_of_birth")
    assert "spouse" in text and "Alice" in text and "place of birth" in text
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
