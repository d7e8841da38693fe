"""SGR's answerer on hand-built graphs: the iteration bound, and R_q / δ from the real local model's log-probabilities."""

import pytest

from sgr.core.types import Question
from sgr.methods.sgr.answerer import SGRAnswerer
from sgr.methods.sgr.config import config_from_options
from sgr.methods.sgr.trie import relation_paths
from tests.helpers import compiled_run, hand_graph

pytestmark = pytest.mark.neo4j


@pytest.fixture()
def deep(clean_store):
    """Alpha -[r1]-> (CVT) -[r2]-> (CVT) -[r3]-> Omega: two CVT hops before the only named neighbour."""
    return hand_graph(clean_store, {"m.alpha": "Alpha", "m.omega": "Omega"},
                      [("m.alpha", "test.thing.part", "m.c1"), ("m.c1", "test.part.piece", "m.c2"),
                       ("m.c2", "test.piece.owner", "m.omega")])


Q = Question(id="q", text="who owns the piece of the part of alpha?", topic_entities=["Alpha"])


def test_a_second_round_extends_the_expansion_when_nothing_is_answered(deep):
    one = compiled_run(deep, Q, hops=1, max_rounds=1)
    assert not one.prediction.answers and len(one.rounds) == 1
    two = compiled_run(deep, Q, hops=1, max_rounds=2)
    assert two.prediction.answer_texts == ["Omega"]
    assert [r["round"] for r in two.rounds] == [1, 2] and "extend to 2 hops" in two.rounds[1]["action"]
    assert two.to_dict()["rounds"] == two.rounds
    # the bound holds: more rounds are never run than allowed, and none after an answer
    many = compiled_run(deep, Q, hops=1, max_rounds=5)
    assert len(many.rounds) == 2


@pytest.mark.llm
def test_rq_and_delta_come_from_the_models_log_probabilities(webqsp_graph, local_llm):
    cfg = config_from_options("sgr", {"exemplars": False, "use_llm_cypher": False})
    q = Question(id="q", text="what does jamaican people speak?", topic_entities=["Jamaica"])
    res = SGRAnswerer(webqsp_graph, local_llm, cfg).run(q)
    schema = res.schema
    assert schema.source == "grammar" and schema.model_paths, schema.reply
    trie = relation_paths(webqsp_graph, ["Jamaica"], max_hops=cfg.hops)
    assert all(p.relations in trie for p in schema.model_paths)  # only paths that exist
    assert all(0.0 < p.rho <= 1.0 for p in schema.model_paths)
    assert not schema.ordered  # G_q stays the graph's own judgement (model_path_order off)
    rho = {p.relations: p.rho for p in schema.model_paths}
    proposed = [c for c in res.candidates if c.origin == "model"]
    assert proposed  # each of the model's N-best paths was compiled and validated on its own walks
    for c in proposed:  # δ of each is that path's probability
        assert c.delta_source == "model-path" and c.delta == pytest.approx(rho[tuple(c.paths[0].relations)])
        i = int(c.source.removeprefix("model")) - 1
        assert tuple(c.paths[0].relations) == schema.model_paths[i].relations
    assert {c.source for c in proposed} == {f"model{i + 1}" for i, p in enumerate(schema.model_paths) if p.variants}
    # the model's paths vote too, with ρ = their probability (recorded for replay)
    rec = res.prediction.extra["decision"]["inputs"]
    model_votes = [v for v in rec["votes"] if v[4] == "model"]
    assert model_votes and all(v[5] == "model-path" and 0 < v[2] <= 1 for v in model_votes)
    assert res.prediction.usage.llm_calls >= 1 and res.prediction.extra["llm_calls_by_stage"]["schema"] == 1


PART, OWNER, DIRECT = "test.thing.part", "test.part.owner", "test.thing.owner"


@pytest.fixture()
def two_paths(clean_store):
    """Alpha -[owner]-> Wrong, and Alpha -[part]-> (CVT) -[owner]-> Omega: two relation paths to two answers."""
    return hand_graph(clean_store, {"m.alpha": "Alpha", "m.omega": "Omega", "m.wrong": "Wrong"},
                      [("m.alpha", DIRECT, "m.wrong"), ("m.alpha", PART, "m.c1"), ("m.c1", OWNER, "m.omega")])


@pytest.mark.llm
def test_a_plan_of_a_training_question_phrased_alike_answers_first(two_paths, local_llm):
    from sgr.methods.sgr.exemplars import Exemplar, ExemplarPool

    q = Question(id="q", text="who owns the part of alpha?", topic_entities=["Alpha"])
    alike = Exemplar("who owns the part of beta?", [PART, OWNER], "beta", [], "train")
    missing = Exemplar("who owns the part of gamma?", ["test.no.such"], "gamma", [], "train")

    def run(pool, **options):
        cfg = config_from_options("sgr", {"use_llm_cypher": False, "n_examples": 0, **options})
        return SGRAnswerer(two_paths, local_llm, cfg, exemplars=ExemplarPool(pool)).run(q)

    res = run([alike], plan_trust=0.5)
    (plan,) = res.schema.plans  # the nearest training question's path exists from Alpha: it is a plan
    assert plan.relations == (PART, OWNER) and 0.5 <= plan.rho <= 1.0 and plan.variants
    assert res.decision.stage == "plan1" and res.prediction.answer_texts == ["Omega"]
    for c in (c for c in res.candidates if c.source == "plan1"):  # δ = the cosine, even when the model wrote it too
        assert c.delta_source == "plan" and c.delta == pytest.approx(plan.rho) and c.valid
    assert res.prediction.extra["plans"] == [{"relations": [PART, OWNER], "cos": round(plan.rho, 4)}]
    # below plan_trust the plan is recorded but takes no part
    late = run([alike], plan_trust=1.01)
    assert late.schema.plans and late.decision.stage != "plan1"
    assert not any(c.valid for c in late.candidates if c.source == "plan1")
    # a training question whose path does not exist from Alpha gives no plan
    assert not run([missing], plan_trust=0.5).schema.plans
