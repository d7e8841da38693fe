"""SGR end to end against the real Neo4j with a scripted chat model (sgr/methods/sgr/)."""

import json

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from sgr.core.errors import EntityNotFound
from sgr.api import ask
from sgr.cli.render import format_result
from sgr.methods.sgr.answerer import SGRAnswerer, config_from_options
from sgr.core.types import Question
from tests.helpers import scripted_llm


LANG = "location.country.languages_spoken"
SCHEMA_REPLY = '{"relations": [1]}'
GOOD_CYPHER = f'MATCH (e:Entity {{name: "Jamaica"}})-[:`{LANG}`]->(x:Entity) RETURN DISTINCT x.name AS answer'
NOWHERE_CYPHER = 'MATCH (e:Entity {name: "Jamaica"}) RETURN DISTINCT "Atlantis" AS answer'
GOLD = {"Jamaican English", "Jamaican Creole English Language"}
Q = Question(id="WebQTest-0", text="what does jamaican people speak?", topic_entities=["Jamaica"])


def answerer(store, variant, *replies, **options):
    # the scripted model gives no log-probabilities (δ = the prior 0.5): these tests fix μ/ε/λ under which a
    # graph-consistent candidate passes on γ (the searched defaults trust measured model probabilities instead)
    cfg = config_from_options(variant, {"exemplars": False, "mu": 0.3, "epsilon": 0.7, "lam": 0.3, **options})
    llm = scripted_llm(*replies) if replies else None
    return SGRAnswerer(store, llm, cfg, name=variant)


def test_direct_route_with_the_models_cypher(webqsp_graph):
    # the sequential rule (integrate off): the first source with a valid candidate answers; the model's Cypher is
    # first when G_q's best path is not put before it (graph_first off)
    res = answerer(webqsp_graph, "sgr", SCHEMA_REPLY, GOOD_CYPHER, integrate=False, answer_ratio=0.5,
                   graph_first=False).run(Q)
    pred = res.prediction
    assert pred.route == "direct" and res.cypher_source == "llm"
    assert set(pred.answer_texts) == GOLD
    assert pred.cypher[0] == GOOD_CYPHER and res.prediction.extra["route_source"] == "model"
    # every source was computed: G_q's compiled best path ran too, and its candidates were validated
    for a in pred.answers:  # grounded: every answer carries a path from the topic entity to it
        assert a.paths and a.paths[0].nodes[0] == "Jamaica" and a.paths[0].nodes[-1] == a.id
    llm = [c for c in res.candidates if c.source == "llm"]
    assert llm and all(c.valid and c.gamma == pytest.approx(1.0) for c in llm)
    assert {"llm", "compiled"} <= {c.source for c in res.candidates} and res.decision.stage == "llm"
    assert pred.usage.llm_calls == 2 and {"schema", "link", "subgraph", "direct", "validate"} <= set(pred.usage.stage_seconds)
    assert res.schema.source == "llm" and len(res.schema.ordered) == 1
    # by default (graph_first) G_q's compiled best path answers before the model's Cypher, with the same answers
    first = answerer(webqsp_graph, "sgr", SCHEMA_REPLY, GOOD_CYPHER, integrate=False, answer_ratio=0.5).run(Q)
    assert first.decision.stage == "compiled" and set(first.prediction.answer_texts) == GOLD


def test_unusable_cypher_falls_back_to_the_compiled_best_path(webqsp_graph):
    res = answerer(webqsp_graph, "sgr", SCHEMA_REPLY, "no idea", "still nothing", "nope", integrate=False,
                   answer_ratio=0.5).run(Q)
    assert res.generation.repairs == 2 and res.generation.final is None
    assert res.cypher_source == "compiled" and res.prediction.route == "direct"
    assert set(res.prediction.answer_texts) == GOLD
    best = res.subgraph.schema_paths[0]
    assert f"`{best.relations[0]}`" in res.prediction.cypher[-1] and res.compiled.params["seed"] == "Jamaica"


def test_collaborative_route_when_nothing_is_valid(webqsp_graph):
    sgr = answerer(webqsp_graph, "sgr", SCHEMA_REPLY, NOWHERE_CYPHER, compiled_fallback=False, answer_ratio=0.5)
    res = sgr.run(Q)
    pred = res.prediction
    assert pred.route == "collaborative"
    assert set(pred.answer_texts) == GOLD
    assert res.votes[0].support >= res.votes[-1].support
    assert all(a.paths for a in pred.answers)
    # the decision's inputs are recorded (compact, replayable): the vote decided, nothing was valid
    rec = pred.extra["decision"]
    assert rec["outcome"]["stage"] == "vote" and rec["outcome"]["valid"] == 0 and 0 < len(rec["inputs"]["votes"]) <= 50
    from sgr.methods.sgr.decision import DecisionInputs, decide

    replay = decide(DecisionInputs.from_dict(rec["inputs"]), sgr.decision_params())
    assert {a.key for a in replay.answers} == {a.id for a in pred.answers}
    direct_only = answerer(webqsp_graph, "sgr-direct", SCHEMA_REPLY, NOWHERE_CYPHER, compiled_fallback=False).run(Q)
    assert direct_only.prediction.answers == [] and direct_only.prediction.route is None


def test_cypher_only_runs_the_models_query_and_grounds_by_shortest_path(webqsp_graph):
    res = answerer(webqsp_graph, "cypher-only", SCHEMA_REPLY, GOOD_CYPHER).run(Q)
    assert res.subgraph is None and res.prediction.route == "direct"
    assert set(res.prediction.answer_texts) == GOLD
    assert all(a.paths[0].source == "shortest-path" for a in res.prediction.answers)


def test_no_schema_ablation_has_no_relation_guidance(webqsp_graph):
    res = answerer(webqsp_graph, "sgr-no-schema", "MATCH (e:Entity {name: \"Jamaica\"})-[:speaks]->(x) RETURN x.name",
                   "no", "no").run(Q)
    assert res.schema.relations == [] and res.prediction.usage.llm_calls == 3  # cypher + 2 repairs, no schema call
    assert all(sp.parts["relevance"] == 0.0 for sp in res.subgraph.schema_paths)
    assert res.generation.attempts[0].problems[0].kind == "unknown_relationship_type"


def test_compiled_method_needs_no_llm_and_evidence_cypher_redraws_it(webqsp_graph):
    res = ask("what does jamaican people speak?", store=webqsp_graph, topics=["Jamaica"], method="sgr-compiled")
    assert set(res.prediction.answer_texts) == GOLD and res.prediction.usage.llm_calls == 0
    rows = webqsp_graph.read(res.detail.evidence_cypher())
    assert len(rows) == len(res.detail.evidence_triples()) >= 2
    d = res.to_dict()
    assert d["route"] == "direct" and d["answers"][0]["paths"] and d["detail"]["evidence_cypher"].startswith("UNWIND")


def test_unknown_entity_abstains_or_is_one_clear_error(webqsp_graph):
    res = ask("what does zzyzx qwv speak?", store=webqsp_graph, method="sgr-compiled")  # not found: an outcome
    assert res.abstained and not res.prediction.answers
    assert any("no entity" in r for r in res.reasons), res.reasons
    with pytest.raises(EntityNotFound, match="--topic"):  # told never to abstain: the error names the way out
        ask("what does zzyzx qwv speak?", store=webqsp_graph, method="sgr-compiled", min_confidence=0.0)
    pred = answerer(webqsp_graph, "sgr-compiled").answer(Question(id="x", text="what is qqq?", topic_entities=["qqq zzz"]))
    assert pred.error and not pred.answers


class PickByName(BaseChatModel):
    """A scripted chat model: answers the schema prompt with the numbers of the named relations, then ``replies``."""

    names: list
    replies: list

    @property
    def _llm_type(self) -> str:
        return "pick-by-name"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        text = messages[-1].content
        if "Candidate relations:" in text:
            listed = {line.split(". ", 1)[1]: int(line.split(".", 1)[0])
                      for line in text.splitlines() if line[:1].isdigit()}
            reply = json.dumps({"relations": [listed[n] for n in self.names]})
        else:
            reply = self.replies.pop(0) if self.replies else "no"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(reply))])


def test_multi_hop_order_on_metaqa(metaqa_graph):
    from sgr.llm.client import LLM

    q = Question(id="m", text="who directed the movies starred by Jack O'Connell", topic_entities=["Jack O'Connell"])
    llm = LLM(PickByName(names=["starred_actors", "directed_by"], replies=[]), name="fake")
    res = SGRAnswerer(metaqa_graph, llm, config_from_options("sgr", {"exemplars": False}), name="sgr").run(q)
    assert res.schema.ordered == ["starred_actors", "directed_by"]
    top = res.subgraph.schema_paths[0]
    assert top.steps == (("starred_actors", "in"), ("directed_by", "out")) and top.hops == 2
    assert "Yann Demange" in res.prediction.answer_texts


def test_ask_runs_any_registered_method_and_sgr_skips_prp_rm_unless_sgr_verify(webqsp_graph):
    from sgr.methods.registry import METHODS

    # `sgr ask --method rcr`: RCR's generated relation paths and grounded answers come back as the trace
    llm = scripted_llm(f"({LANG})", "Jamaican English")
    res = ask(Q.text, store=webqsp_graph, topics=["Jamaica"], method="rcr", llm=llm,
              options={"relation_model": "cosine", "examples": 0, "candidates": 20})
    assert res.method == "rcr" and [a.text for a in res.prediction.answers] == ["Jamaican English"]
    assert res.prediction.extra["relation_paths"] == [[LANG]] and res.prediction.answers[0].paths
    assert res.prediction.paths[0].score == 1.0  # the one generated relation path reaches the answer
    assert any("Relation paths (generated)" in line for line in format_result(res))
    # sgr's default asks no PRP-RM Yes/No call (δ and ρ of what the model did not propose stay the prior);
    # sgr-verify is the registered variant that asks them
    assert "sgr-verify" in METHODS and config_from_options("sgr-verify").max_verify_calls == 2
    assert config_from_options("sgr").max_verify_calls == 0
    res = answerer(webqsp_graph, "sgr", SCHEMA_REPLY, NOWHERE_CYPHER, compiled_fallback=False).run(Q)
    assert res.prediction.route == "collaborative" and "verify" not in res.prediction.extra["llm_calls_by_stage"]


def test_integrated_decision_lets_av_vote_with_the_paths(webqsp_graph):
    res = answerer(webqsp_graph, "sgr", SCHEMA_REPLY, GOOD_CYPHER, integrate=True).run(Q)
    d = res.decision
    assert d.stage == "integrated" and set(res.prediction.answer_texts) <= GOLD and res.prediction.answers
    top = d.answers[0]
    assert top.candidates and top.votes  # the Cypher's valid answer and G_q's walks both gave it support
    assert top.score == pytest.approx(sum(d.v[i] for i in top.candidates) + sum(d.omegas[i] for i in top.votes))


def test_a_tuned_model_gets_the_prompt_and_decision_parameters_of_its_provenance(webqsp_graph, monkeypatch, tmp_path):
    import os
    from dataclasses import asdict

    from sgr.llm import server
    from sgr.llm.server import MODEL_ALIAS, TUNED_TAG, LLMServerInfo
    from sgr.methods.base import MethodContext
    from sgr.methods.registry import create_method
    from sgr.methods.sgr.config import SGRConfig

    def config(name, **options):
        ctx = MethodContext(store=webqsp_graph, options=options, llm=scripted_llm(name=name))
        return create_method("sgr", ctx).config

    tuned = MODEL_ALIAS + TUNED_TAG + "0123abcd"
    monkeypatch.setattr(server, "state_file", lambda: tmp_path / "server.json")
    base = config(MODEL_ALIAS)
    assert base.n_examples == 1  # the packaged model gets a worked example
    assert config(tuned).n_examples == 0  # no provenance says otherwise: the zero-shot prompt
    assert config(tuned, n_examples="2").n_examples == 2  # an explicit option wins
    prov = tmp_path / "model.json"  # `sgr llm tune --examples 1`, then `bench/sgr_grid.py --held-out … --set-provenance`
    prov.write_text(json.dumps({"prompt_examples": 1, "decision": {"mu": 0.7, "epsilon": 0.8, "plan_trust": 0.85,
                                                                   "gamma_min": 0.5}}))
    info = LLMServerInfo(pid=os.getpid(), port=1, base_url="http://127.0.0.1:1/v1", model=tuned, model_path="m.gguf",
                         log="m.log", started_at=0.0, kind="tuned", provenance=str(prov))
    (tmp_path / "server.json").write_text(json.dumps(asdict(info)))
    served = config(tuned)
    assert (served.n_examples, served.mu, served.epsilon, served.lam) == (1, 0.7, 0.8, base.lam)
    assert (served.plan_trust, config(tuned, plan_trust="1.01").plan_trust) == (0.85, 1.01)
    floors = (base.gamma_min, served.gamma_min, config(tuned, gamma_min="0").gamma_min)
    assert floors == (SGRConfig.gamma_min, 0.5, 0.0)
    assert base.use_llm_cypher and not served.use_llm_cypher  # tuned on the schema only: compiled direct Cypher
    assert config(tuned, use_llm_cypher="true").use_llm_cypher
    assert config(tuned, mu="0.6").mu == 0.6
    other = config(MODEL_ALIAS + TUNED_TAG + "ffff0000")  # weights other than the served ones
    assert (other.n_examples, other.mu) == (0, base.mu)
