"""The model's Cypher on a profiled graph (the movie graph, real Neo4j): checked and run read-only, repaired once,
grounded, and weighed against the compiled plans by the :Entity route's decision.

The scripted chat model (``tests.helpers.scripted_llm``) says what the model writes; the last test asks the real
packaged model. Expected answers come from Cypher written here, never from the code under test.
"""

from __future__ import annotations

from sgr.core.types import Question
from tests.e2e.anygraph.test_profiled_graph import gold, movies, snapshot  # noqa: F401 - the fixture
from tests.helpers import scripted_llm

#: No plan finds rows for this question ("created" names no relationship type of the movie graph).
UNPLANNED = "Who created Speed Racer?"
DIRECTORS = 'MATCH (m:Movie {title: "Speed Racer"})<-[:DIRECTED]-(p:Person) RETURN DISTINCT p.name AS answer'


def answerer(store, llm, **options):
    from sgr.methods.base import MethodContext
    from sgr.methods.registry import create_method
    from sgr.methods.sgr.profiled import ProfiledAnswerer

    method = create_method("sgr", MethodContext(store=store, llm=llm, options=options))
    assert isinstance(method, ProfiledAnswerer) and method.llm is llm
    return method


def test_the_models_query_answers_when_no_plan_finds_rows(movies) -> None:  # noqa: F811
    result = answerer(movies, scripted_llm(DIRECTORS)).run(Question(id="q", text=UNPLANNED))
    pred = result.prediction
    assert result.compiled == []
    assert set(pred.answer_texts) == gold(movies, DIRECTORS.replace("answer", "a"))
    assert pred.extra["answered_by"] == "vote" and pred.extra["route_source"] == "model"
    assert pred.cypher[-1] == DIRECTORS and pred.usage.llm_calls == 1
    speed_racer = movies.read("MATCH (m:Movie {title: 'Speed Racer'}) RETURN elementId(m) AS id")[0]["id"]
    assert all(a.paths and a.paths[0].nodes == [speed_racer, a.id] for a in pred.answers)  # grounded by a walk


def test_a_write_query_is_refused_and_nothing_is_written(movies) -> None:  # noqa: F811
    before = snapshot(movies)
    write = 'MATCH (m:Movie {title: "Speed Racer"}) SET m.title = "X" RETURN m.title AS answer'
    create = 'CREATE (p:Person {name: "X"}) RETURN p.name AS answer'
    pred = answerer(movies, scripted_llm(write, create)).answer(Question(id="q", text=UNPLANNED))
    assert pred.answers == [] and pred.extra["answered_by"] is None
    assert pred.extra["llm_cypher"]["ran"] is False and pred.extra["llm_cypher"]["rounds"] == 2
    assert any("only read" in p for p in pred.extra["llm_cypher"]["problems"])
    assert snapshot(movies) == before


def test_a_bad_query_is_repaired_once(movies) -> None:  # noqa: F811
    unknown = DIRECTORS.replace("DIRECTED", "DIRECTS")
    pred = answerer(movies, scripted_llm(unknown, DIRECTORS)).answer(Question(id="q", text=UNPLANNED))
    assert pred.extra["llm_cypher"] == {"rounds": 2, "ran": True, "problems": [
        "the graph has no relationship type `DIRECTS`"]}
    assert set(pred.answer_texts) == gold(movies, DIRECTORS.replace("answer", "a"))
    # a second bad reply is not repaired again: one repair round
    pred = answerer(movies, scripted_llm(unknown, unknown, DIRECTORS)).answer(Question(id="q", text=UNPLANNED))
    assert pred.answers == [] and pred.extra["llm_cypher"]["rounds"] == 2


def test_a_validated_compiled_answer_is_kept_against_the_model(movies) -> None:  # noqa: F811
    wrong = 'MATCH (m:Movie {title: "The Matrix"})<-[:ACTED_IN]-(p:Person) RETURN p.name AS answer'
    question = Question(id="q", text="Who directed The Matrix?")
    result = answerer(movies, scripted_llm(wrong), lazy_verification=False).run(question)
    pred = result.prediction
    directors = gold(movies, "MATCH (:Movie {title: 'The Matrix'})<-[:DIRECTED]-(p) RETURN p.name AS a")
    assert result.model and set(pred.answer_texts) == directors
    assert pred.extra["answered_by"] == "compiled" and pred.usage.llm_calls == 1
    # lazily (the default) the model is not asked when a plan found rows: it could not change the answer
    pred = answerer(movies, scripted_llm(wrong)).answer(question)
    assert set(pred.answer_texts) == directors and pred.usage.llm_calls == 0


def test_the_packaged_model_on_the_profiled_route(movies, local_llm) -> None:  # noqa: F811
    question = Question(id="q", text="Who directed The Matrix?")
    directors = gold(movies, "MATCH (:Movie {title: 'The Matrix'})<-[:DIRECTED]-(p) RETURN p.name AS a")
    before = snapshot(movies)
    result = answerer(movies, local_llm, lazy_verification=False, llm_cache=False).run(question)
    pred = result.prediction
    assert pred.usage.llm_calls >= 1 and result.generation is not None and result.generation.attempts
    assert set(pred.answer_texts) == directors and pred.extra["answered_by"] in ("compiled", "llm")
    assert snapshot(movies) == before
