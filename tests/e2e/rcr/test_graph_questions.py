"""Questions written from the graph itself (sgr/retrieval/graph_questions.py) on a real Neo4j: walks are CVT-aware,
never revisit a node, may go on along the relation they came by to another node, come in even lengths, skip sgr's
own and Freebase's bookkeeping relations, and become (question, path, topic) training examples for both trainers
(``sgr llm tune --from-graph``, ``sgr relations train --dataset graph``)."""

from __future__ import annotations

from sgr.methods.sgr import tuning
from sgr.methods.sgr.prompts import parse_schema_reply
from collections import Counter

from sgr.retrieval.graph_questions import graph_questions, sample_walks
from tests.helpers import hand_graph

NAMES = {"m.alice": "Alice", "m.bob": "Bob", "m.paris": "Paris", "m.france": "France", "m.film": "Amelie"}
TRIPLES = [
    ("m.alice", "people.person.spouse_s", "m.cvt1"),  # m.cvt1 has no name: a CVT
    ("m.cvt1", "people.marriage.spouse", "m.bob"),
    ("m.bob", "people.person.place_of_birth", "m.paris"),
    ("m.paris", "location.location.containedby", "m.france"),
    ("m.film", "film.film.country", "m.france"),
    ("m.alice", "common.topic.image", "m.france"),  # bookkeeping: never walked
]


def test_walks_pass_through_cvts_and_skip_bookkeeping(clean_store) -> None:
    hand_graph(clean_store, NAMES, TRIPLES)
    walks = sample_walks(clean_store, 40, max_hops=3, seed=0, tries=20)
    assert len(walks) >= 10
    names = set(NAMES.values())
    for w in walks:
        assert "common.topic.image" not in w.path and w.end in names and w.end != w.start
        for step in w.steps:  # a step is one relation, or two around a CVT
            assert len(step.relations) in (1, 2)
            if len(step.relations) == 2:
                assert step.relations[0] in ("people.person.spouse_s", "people.marriage.spouse")
    spouse = [w for w in walks if w.start == "Alice" and w.path[:2] == ("people.person.spouse_s",
                                                                      "people.marriage.spouse")]
    assert spouse and all(w.steps[0].relations == w.path[:2] for w in spouse)  # the CVT is not a hop
    assert len({(w.start_id, w.path) for w in walks}) == len(walks)  # distinct
    assert sample_walks(clean_store, 40, max_hops=3, seed=0, tries=20)[0].path == walks[0].path  # seeded


def test_graph_questions_become_schema_training_examples(clean_store) -> None:
    hand_graph(clean_store, NAMES, TRIPLES)
    examples = graph_questions(clean_store, 12, max_hops=2, seed=1)
    assert examples and all(e.topics and e.question.endswith(("?", ".")) for e in examples)  # "name …."
    assert all(e.topics[0] in e.question for e in examples)
    chat = tuning.from_relation_examples(examples)
    for e, c in zip(examples, chat):
        assert parse_schema_reply(c.target)[0] == [e.paths[0]]
        assert c.user.endswith(f"Topic: {e.topics[0]}")


FILMS = {"m.f1": "Alien", "m.f2": "Gladiator", "m.f3": "Heat", "m.d1": "Ridley Scott", "m.d2": "Michael Mann",
         "m.a1": "Sigourney Weaver", "m.a2": "Russell Crowe", "m.a3": "Al Pacino"}
FILM_TRIPLES = [("m.f1", "directed_by", "m.d1"), ("m.f2", "directed_by", "m.d1"), ("m.f3", "directed_by", "m.d2"),
                ("m.f1", "starred_actors", "m.a1"), ("m.f2", "starred_actors", "m.a2"),
                ("m.f3", "starred_actors", "m.a3"), ("m.f3", "starred_actors", "m.a2")]


def test_walks_share_a_neighbour_by_the_same_relation_and_come_in_even_lengths(clean_store) -> None:
    """Alien and Gladiator share a director: ``directed_by > directed_by`` (forward, then back along the same
    relation to the other film) is a 2-hop walk; the lengths 1, 2, 3 are asked for equally and this graph has
    walks of each, so each length gets a third."""
    hand_graph(clean_store, FILMS, FILM_TRIPLES)
    walks = sample_walks(clean_store, 12, max_hops=3, seed=0, tries=50)
    assert Counter(len(w.steps) for w in walks) == {1: 4, 2: 4, 3: 4}
    shared = [w for w in walks if len(w.steps) == 2 and w.path[0] == w.path[1]]
    assert shared, [w.path for w in walks]
    for w in shared:
        assert [s.directions for s in w.steps] in ([("out",), ("in",)], [("in",), ("out",)])
        assert w.end != w.start
