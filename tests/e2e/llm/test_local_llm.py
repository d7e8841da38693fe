"""Tests against the real local model (llama.cpp server + SmolLM2-135M-Instruct) and the real Neo4j."""

from __future__ import annotations

import math
import re
from typing import Literal

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from cypher.grammar import cypher_grammar
from sgr.core.errors import CypherError

RELATIONS = ("film.film.directed_by", "film.actor.film", "people.person.place_of_birth")


class Extraction(BaseModel):
    entities: list[str] = Field(min_length=1, max_length=3)
    relations: list[Literal[RELATIONS]] = Field(min_length=1, max_length=2)  # type: ignore[valid-type]


SCHEMA_MSGS = [
    SystemMessage(content="Return JSON with the entities named in the question and the relations, chosen from the "
                          "candidates, that lead to the answer."),
    HumanMessage(content="Question: who directed the godfather?\nCandidates: " + ", ".join(RELATIONS)),
    AIMessage(content='{"entities": ["The Godfather"], "relations": ["film.film.directed_by"]}'),
    HumanMessage(content="Question: which films did tom hanks act in?\nCandidates: " + ", ".join(RELATIONS)),
]


def test_structured_call_returns_schema_valid_json(local_llm) -> None:
    local_llm.take_usage()
    out = local_llm.structured(SCHEMA_MSGS, Extraction, stage="schema", max_retries=0)
    assert isinstance(out, Extraction)
    assert set(out.relations) <= set(RELATIONS)
    assert all(e.strip() for e in out.entities)
    usage = local_llm.take_usage()
    assert usage.calls == 1 and usage.by_stage == {"schema": 1}
    assert usage.prompt_tokens > 50 and usage.completion_tokens > 5 and usage.seconds > 0


def test_identical_call_is_served_from_the_cache(local_llm) -> None:
    msgs = [SystemMessage(content="Answer with one word."), HumanMessage(content="What colour is the sky on a clear day?")]
    local_llm.take_usage()
    first = local_llm.complete(msgs, stage="probe", max_tokens=8)
    u1 = local_llm.take_usage()
    second = local_llm.complete(msgs, stage="probe", max_tokens=8)
    u2 = local_llm.take_usage()
    assert second == first
    assert u1.cached == 0 and u1.completion_tokens > 0
    assert (u2.calls, u2.cached, u2.prompt_tokens, u2.completion_tokens) == (1, 1, 0, 0)


def test_yes_no_logprobs_are_two_finite_log_probabilities(local_llm) -> None:
    msgs = [SystemMessage(content="Answer the question with Yes or No."),
            HumanMessage(content="Is Berlin a city in Germany?"), AIMessage(content="Yes"),
            HumanMessage(content="Is Vienna the capital of Austria? Answer Yes or No.")]
    out = local_llm.yes_no_logprobs(msgs, stage="delta")
    assert out is not None
    yes, no = out
    assert math.isfinite(yes) and math.isfinite(no)
    assert yes <= 0.0 and no <= 0.0
    assert math.exp(yes) + math.exp(no) <= 1.0 + 1e-6


CYPHER_SYSTEM = ("Translate the question into one Cypher query. Nodes are (:Entity {name}); relationship types are "
                 "written in backticks. Return the answer's name as answer. Reply with the query only.")


def test_cypher_under_the_grammar_passes_explain(local_llm, webqsp_graph, webqsp_records) -> None:
    graph_types = set(webqsp_graph.relation_types())
    checked = 0
    for rec in webqsp_records[:3]:
        topic = rec["q_entity"][0]
        rows = webqsp_graph.read("MATCH (e:Entity {name: $n})-[r]-() RETURN DISTINCT type(r) AS t ORDER BY t LIMIT 8",
                                 {"n": topic})
        cands = [r["t"] for r in rows]
        assert cands, f"{topic} has no relations in the fixture graph"
        msgs = [SystemMessage(content=CYPHER_SYSTEM),
                HumanMessage(content='Question: who directed the godfather?\nTopic entity: "The Godfather"\n'
                                     "Relation types: `film.film.directed_by`, `film.film.starring`"),
                AIMessage(content='MATCH (e:Entity {name: "The Godfather"})-[:`film.film.directed_by`]-(x:Entity) '
                                  "RETURN DISTINCT x.name AS answer"),
                HumanMessage(content=f'Question: {rec["question"]}\nTopic entity: "{topic}"\nRelation types: '
                                     + ", ".join(f"`{c}`" for c in cands))]
        query = local_llm.complete(msgs, stage="cypher", grammar=cypher_grammar(cands, [topic], max_hops=2),
                                   max_tokens=160)
        assert query.startswith(f'MATCH (e:Entity {{name: "{topic}"}})'), query
        used = set(re.findall(r"`([^`]+)`", query))
        assert used and used <= set(cands) <= graph_types, query
        try:
            notes = webqsp_graph.explain(query)
        except CypherError as exc:  # pragma: no cover - the assertion message shows the query
            pytest.fail(f"EXPLAIN rejected {query!r}: {exc}")
        assert not [n for n in notes if "Unknown" in n["code"]], (query, notes)
        checked += 1
    assert checked == 3


def test_free_and_constrained_json_differ_in_form(local_llm) -> None:
    """Without constraints the same request is not guaranteed JSON; with them it always parses (sanity of wiring)."""
    from sgr.llm.client import LLM

    free = LLM(local_llm.chat, name=local_llm.name, constrained=False, base_url=local_llm.base_url)
    res = free.try_structured(SCHEMA_MSGS, Extraction, stage="schema", max_retries=0, max_tokens=64)
    assert len(res.attempts) == 1  # answered (valid or not), through the same endpoint without response_format
    con = local_llm.try_structured(SCHEMA_MSGS, Extraction, stage="schema", max_retries=0, max_tokens=64)
    assert con.value is not None, con.attempts


@pytest.mark.slow
def test_sgr_llm_serve_status_stop(monkeypatch: pytest.MonkeyPatch, tmp_path, local_llm_server) -> None:
    """The `sgr llm` life cycle in a private SGR_HOME, and LLM.from_settings picking the running server up."""
    import os

    if os.environ.get("SGR_LLM_BASE_URL"):
        pytest.skip("an external endpoint is configured")
    from sgr.llm import server
    from sgr.llm.client import LLM

    monkeypatch.setenv("SGR_HOME", str(tmp_path))
    assert server.status() is None
    info = server.start()
    try:
        assert server.status() == info and server.start() == info  # idempotent
        assert info.kind == "base" and server.describe(info).startswith("base model ")
        llm = LLM.from_settings(cache=False)
        assert llm.constrained and llm.base_url == info.base_url
        assert llm.complete([HumanMessage(content="Say OK.")], stage="probe", max_tokens=4)
    finally:
        assert server.stop()
    assert server.status() is None and not server.stop()


def test_the_servers_prompt_cache_resumes_an_alternating_prompt(tmp_path) -> None:
    """SGR alternates two prompts (schema, NL→Cypher): the server resumes the third call from the first one's state
    (its whole shared prefix), where llama.cpp alone keeps only the previous prompt's."""
    from sgr.llm import server
    from sgr.llm.client import LLM

    try:
        server.check_installed()
        server.model_path()
    except Exception as exc:  # noqa: BLE001 - the local model is not installed here
        pytest.skip(f"local LLM unavailable: {exc}")
    log = tmp_path / "server.log"
    proc, info = server.launch(log=log, n_ctx=2048, n_threads=1)
    try:
        llm = LLM.from_endpoint(info.base_url, info.model, cache_dir=None)
        shared = SystemMessage(content=" ".join(["Answer the question about the film graph in one word."] * 12))
        for msgs in ([shared, HumanMessage(content="Who directed Alien?")],
                     [SystemMessage(content="Reply with JSON only."), HumanMessage(content="List one colour.")],
                     [shared, HumanMessage(content="Who wrote Alien?")]):
            llm.complete(msgs, stage="probe", max_tokens=4)
    finally:
        server.terminate(proc.pid)
    text = log.read_text(errors="replace")
    hits = [int(n) for n in re.findall(r"(\d+) prefix-match hit", text)]
    assert "cache hit" in text and hits, text[-2000:]
    assert hits[-1] > 100  # the shared system message was not evaluated again (without the cache: the few
    # template tokens the second prompt shares)


def test_the_servers_speedups_give_the_same_reply(local_llm_server, monkeypatch: pytest.MonkeyPatch) -> None:
    """With :mod:`sgr.llm.fast_server`'s speed-ups installed, the real model's replies are the same, item for item, as
    llama-cpp-python's own: chat completions with token log-probabilities (the schema stage's ``top_logprobs=1``, the
    validation's 10), a streamed completion, greedy completions under a relation-path grammar (the first-try sampler,
    with the server's repetition penalty) and completions whose prompt the RAM cache restores (``load_state``)."""
    import json

    import llama_cpp.llama as module
    from llama_cpp import Llama, LlamaGrammar, LlamaRAMCache

    from sgr.llm import fast_sampling, fast_server, server
    from sgr.methods.sgr.trie import PathTrie, path_grammar

    model = Llama(model_path=str(server.model_path()), n_ctx=1024, logits_all=True, n_threads=1, verbose=False)
    msgs = [{"role": "user", "content": "Write the relation path for: who directed the godfather?"}]
    rels = ["film.film.directed_by", "film.director.film", "film.actor.film", "film.performance.film",
            "people.person.place_of_birth", "people.person.spouse_s", "people.marriage.spouse",
            "location.location.containedby"]
    trie = PathTrie(paths={(a,): [] for a in rels} | {(a, b): [] for a in rels[:5] for b in rels[3:]})
    grammar = path_grammar(trie, 2)
    questions = ["who directed the godfather?", "where was the director of alien born?",
                 "who is the wife of tom hanks?", "who directed the godfather?"]  # the last: its prompt restored
    samplers = []

    def replies() -> str:
        model.reset()  # each round from an empty context and an empty cache: the same prompts evaluated, the same restored
        model.set_cache(LlamaRAMCache(capacity_bytes=1 << 26))
        chats = [model.create_chat_completion(msgs, max_tokens=24, temperature=0.0, logprobs=True, top_logprobs=k)
                 for k in (1, 10)]
        streamed = [c["choices"] for c in model.create_completion("Q: who directed Alien?\nA:", max_tokens=8,
                                                                   temperature=0.0, logprobs=3, stream=True)]
        constrained = []
        for q in questions:
            m = [{"role": "system", "content": "Write the relation paths that answer the question."},
                 {"role": "user", "content": q}]
            constrained.append(model.create_chat_completion(
                m, max_tokens=60, temperature=0.0, logprobs=True, top_logprobs=1, repeat_penalty=1.1,
                grammar=LlamaGrammar.from_string(grammar, verbose=False))["choices"])
            samplers.append(model._sampler)
        return json.dumps([[c["choices"] for c in chats], streamed, constrained], default=repr)

    own = replies()
    for name in ("load_state", "logits_to_logprobs", "_init_sampler"):  # undone after the test
        monkeypatch.setattr(Llama, name, Llama.__dict__[name])
    monkeypatch.setattr(module, "zip", zip, raising=False)
    monkeypatch.setattr(module, "sorted", sorted, raising=False)
    assert fast_server.install() == ["logprob ranking", "logprob rows", "cache restore", "grammar first try"]
    assert module.zip.__module__ == "sgr.llm.fast_logprobs"
    assert Llama.load_state.__module__ == "sgr.llm.fast_logprobs"
    restored = []
    monkeypatch.setattr(Llama, "load_state", lambda self, state, f=Llama.load_state: (restored.append(state), f(self, state)))
    samplers.clear()
    fast = replies()
    assert restored  # the cache restored a prompt, with the replacement
    used = [s for s in samplers if isinstance(s, fast_sampling.FirstTrySampler)]
    assert len(used) == len(questions) and sum(s.first_tries for s in used) > 0
    assert '"top_logprobs"' in own and "path: " in own and fast == own
