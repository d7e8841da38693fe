"""Each LLM stage of SGR against the real local model (SmolLM2-135M through llama.cpp).

The model is weak: these tests check that every stage produces a usable, grounded result through the
constraints (JSON schema, Cypher grammar, Yes/No log-probabilities), not that its choices are right.
"""

from cypher.repair import generate_cypher
from cypher.translate import grammar_for, relation_endpoints, translate_messages, example_for
from sgr.methods.sgr.answerer import SGRAnswerer, config_from_options
from sgr.llm.verify import path_confidence
from sgr.methods.sgr.schema import ScoredRelation, extract_schema
from sgr.core.types import Question, ReasoningPath

LANG = "location.country.languages_spoken"
CANDS = [LANG, "location.location.containedby", "location.country.official_language", "people.person.nationality"]


class FixedRetriever:
    def retrieve(self, question, k, among=None):
        return [ScoredRelation(n, 0.8 - 0.1 * i, n, 0.8 - 0.1 * i) for i, n in enumerate(CANDS[:k])]


def test_schema_extraction_picks_only_listed_relations(local_llm):
    s = extract_schema("what language do people in peru speak?", retriever=FixedRetriever(), llm=local_llm,
                       entity="Peru", k=4)
    assert s.source == "llm", "the constrained JSON reply could not be parsed"
    assert s.ordered and set(s.ordered) <= set(CANDS)


def test_nl_to_cypher_is_valid_and_runs(local_llm, webqsp_graph):
    rels = [LANG, "location.country.official_language", "language.human_language.countries_spoken_in"]
    endpoints = relation_endpoints(webqsp_graph, rels, webqsp_graph.graph_version())
    msgs = translate_messages("what does jamaican people speak?", "Jamaica", endpoints, example_for(rels))
    gen = generate_cypher(local_llm, msgs, store=webqsp_graph, vocabulary=set(webqsp_graph.relation_types()),
                          grammar=grammar_for(rels, ["Jamaica"], 2), max_repairs=1)
    assert gen.final is not None, [(a.reply, a.problems) for a in gen.attempts]
    assert gen.final.query.startswith('MATCH (e:Entity {name: "Jamaica"})')


def test_verification_gives_a_prp_score(local_llm):
    p = ReasoningPath(nodes=["Jamaica", "Jamaican English"], relations=[LANG],
                      names=["Jamaica", "Jamaican English"], directions=["out"])
    v = path_confidence(local_llm, "what does jamaican people speak?", p.render(), LANG, prior=0.5)
    assert v.source == "logprobs" and 0.0 <= v.score <= 1.0


def test_answer_generation_keeps_answers_grounded(local_llm, webqsp_graph):
    cfg = config_from_options("sgr", {"exemplars": False, "generate_answers": True, "use_llm_cypher": False})
    res = SGRAnswerer(webqsp_graph, local_llm, cfg).run(
        Question(id="q", text="what does jamaican people speak?", topic_entities=["Jamaica"]))
    assert res.generated_text is not None
    assert res.prediction.answers and all(a.paths for a in res.prediction.answers)
    reachable = {p.answer for p in res.subgraph.paths}
    assert {a.id for a in res.prediction.answers} <= reachable
