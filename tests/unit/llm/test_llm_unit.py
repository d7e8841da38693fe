"""Unit tests of sgr.llm.client with scripted fake chat models (no server): repair, cache, accounting, parsing."""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, Field

from sgr.core.errors import LLMError
from sgr.llm.client import LLM, extract_json, strip_template_tokens, yes_no_from_alternatives

MSGS = [SystemMessage(content="Return JSON."), HumanMessage(content="who directed the godfather?")]


class Extraction(BaseModel):
    entities: list[str] = Field(min_length=1)
    relations: list[str]


class RecordingChat(GenericFakeChatModel):
    """GenericFakeChatModel that records each call's messages and kwargs."""

    seen: list[tuple[list[BaseMessage], dict[str, Any]]] = Field(default_factory=list)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # noqa: ANN001, ANN003
        self.seen.append((list(messages), dict(kwargs)))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def fake(*replies: str | AIMessage) -> RecordingChat:
    return RecordingChat(messages=iter([r if isinstance(r, AIMessage) else AIMessage(content=r) for r in replies]))


def test_structured_retries_with_the_error_shown_to_the_model() -> None:
    chat = fake('{"entities": [], "relations": ["film.film.directed_by"]}<|im_end|>',
                'Sure! ```json\n{"entities": ["The Godfather"], "relations": ["film.film.directed_by"]}\n```')
    llm = LLM(chat, name="fake")
    out = llm.structured(MSGS, Extraction, stage="schema")
    assert out == Extraction(entities=["The Godfather"], relations=["film.film.directed_by"])
    assert len(chat.seen) == 2
    retry_msgs = chat.seen[1][0]
    assert retry_msgs[:2] == MSGS
    assert isinstance(retry_msgs[2], AIMessage) and "<|im_end|>" not in retry_msgs[2].content
    assert "entities" in retry_msgs[3].content and "at least 1" in retry_msgs[3].content
    usage = llm.take_usage()
    assert usage.calls == 2 and usage.by_stage == {"schema": 2}


def test_structured_raises_llm_error_after_retries() -> None:
    chat = fake("no json here", "still none", "{not json")
    llm = LLM(chat, name="fake")
    with pytest.raises(LLMError, match="Extraction.*3 attempts"):
        llm.structured(MSGS, Extraction, stage="schema", max_retries=2)
    assert len(chat.seen) == 3
    bad = LLM(fake("nope"), name="fake").try_structured(MSGS, Extraction, stage="schema", max_retries=0)
    assert bad.value is None and bad.attempts == ["nope"] and len(bad.errors) == 1


def test_constraints_go_into_the_request_body_only_when_constrained() -> None:
    chat = fake('{"entities": ["A"], "relations": []}', "MATCH (n) RETURN n")
    llm = LLM(chat, name="fake", constrained=True, dialect="llamacpp")
    llm.structured(MSGS, Extraction, stage="schema")
    llm.complete(MSGS, stage="cypher", grammar='root ::= "MATCH (n) RETURN n"', max_tokens=20)
    body0 = chat.seen[0][1]["extra_body"]
    assert body0["response_format"]["type"] == "json_object"
    assert body0["response_format"]["schema"] == Extraction.model_json_schema()
    assert chat.seen[1][1]["extra_body"] == {"max_tokens": 20, "grammar": 'root ::= "MATCH (n) RETURN n"'}

    chat2 = fake("MATCH (n) RETURN n", '{"entities": ["A"], "relations": []}')
    oai = LLM(chat2, name="fake", constrained=True, dialect="openai")
    oai.complete(MSGS, stage="cypher", grammar="root ::= x", max_tokens=20)
    assert "extra_body" not in chat2.seen[0][1] and chat2.seen[0][1]["max_tokens"] == 20  # no grammars on OpenAI
    oai.structured(MSGS, Extraction, stage="schema")
    assert chat2.seen[1][1]["extra_body"]["response_format"]["type"] == "json_schema"

    chat3 = fake("MATCH (n) RETURN n")
    LLM(chat3, name="fake", constrained=False, dialect="none").complete(MSGS, stage="c", grammar="root ::= x",
                                                                         max_tokens=20)
    assert chat3.seen[0][1]["extra_body"] == {"max_tokens": 20}


def test_cache_hit_on_identical_call(tmp_path: Path) -> None:
    chat = fake(AIMessage(content="Paris", usage_metadata={"input_tokens": 12, "output_tokens": 2, "total_tokens": 14}),
                "Lyon")
    llm = LLM(chat, name="fake-model", cache_dir=tmp_path)
    assert llm.complete(MSGS, stage="a", max_tokens=5) == "Paris"
    first = llm.take_usage()
    assert (first.calls, first.prompt_tokens, first.completion_tokens, first.cached) == (1, 12, 2, 0)
    # a second LLM object on the same cache folder (a rerun) gets the cached answer, no tokens
    again = LLM(fake("WRONG"), name="fake-model", cache_dir=tmp_path)
    assert again.complete(MSGS, stage="a", max_tokens=5) == "Paris"
    second = again.take_usage()
    assert (second.calls, second.prompt_tokens, second.completion_tokens, second.cached) == (1, 0, 0, 1)
    assert again.last_call is not None and again.last_call.cached and again.last_call.completion_tokens == 2
    # other parameters are another key
    assert llm.complete(MSGS, stage="a", max_tokens=6) == "Lyon"


def test_usage_is_per_thread() -> None:
    chat = fake(*["x"] * 5)
    llm = LLM(chat, name="fake")
    counts: dict[str, int] = {}

    def work(name: str, n: int) -> None:
        for _ in range(n):
            llm.complete(MSGS, stage=name)
        counts[name] = llm.take_usage().calls

    threads = [threading.Thread(target=work, args=("t1", 2)), threading.Thread(target=work, args=("t2", 3))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counts == {"t1": 2, "t2": 3}
    assert llm.take_usage().calls == 0


class FlakyChat(GenericFakeChatModel):
    """Fails with a connection error ``failures`` times, then answers."""

    failures: int = 1
    attempts: int = 0

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # noqa: ANN001, ANN003
        self.attempts += 1
        if self.attempts <= self.failures:
            raise openai.APIConnectionError(request=httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions"))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="ok"))])


def test_transport_errors_are_retried_then_reported() -> None:
    chat = FlakyChat(messages=iter([]), failures=1)
    assert LLM(chat, name="fake", transport_retries=2).complete(MSGS, stage="s") == "ok"
    assert chat.attempts == 2
    down = FlakyChat(messages=iter([]), failures=99)
    with pytest.raises(LLMError, match="did not answer.*sgr llm serve"):
        LLM(down, name="fake", transport_retries=1, base_url="http://127.0.0.1:1/v1").complete(MSGS, stage="s")
    assert down.attempts == 2


def test_yes_no_from_alternatives_pools_variants_and_bounds_missing() -> None:
    yes, no = yes_no_from_alternatives([{"token": "Yes", "logprob": -0.5}, {"token": " yes", "logprob": -2.0},
                                        {"token": "Maybe", "logprob": -3.0}])
    assert yes == pytest.approx(math.log(math.exp(-0.5) + math.exp(-2.0)))
    assert no == pytest.approx(-3.0 - 1.0)  # smallest seen minus the margin


def test_yes_no_logprobs_reads_response_metadata() -> None:
    meta = {"logprobs": {"content": [{"token": "No", "logprob": -0.4,
                                      "top_logprobs": [{"token": "No", "logprob": -0.4},
                                                       {"token": "Yes", "logprob": -1.3}]}]}}
    llm = LLM(fake(AIMessage(content="No", response_metadata=meta)), name="fake", logprobs=True)
    assert llm.yes_no_logprobs(MSGS, stage="delta") == (pytest.approx(-1.3), pytest.approx(-0.4))
    assert LLM(fake("No"), name="fake", logprobs=True).yes_no_logprobs(MSGS, stage="delta") is None
    assert LLM(fake("No"), name="fake", logprobs=False).yes_no_logprobs(MSGS, stage="delta") is None


@pytest.mark.parametrize("raw,expected", [
    ('{"a": 1}', '{"a": 1}'),
    ('```json\n{"a": [1, 2]}\n```', '{"a": [1, 2]}'),
    ('Answer: {"a": "}"} and more', '{"a": "}"}'),
    ('{"a": 1}<|im_end|>', '{"a": 1}'),
])
def test_extract_json(raw: str, expected: str) -> None:
    assert extract_json(raw) == expected


def test_strip_template_tokens() -> None:
    assert strip_template_tokens("<|im_start|>assistant MATCH (n) RETURN n<|im_end|>") == "MATCH (n) RETURN n"
    assert strip_template_tokens("Yes</s>") == "Yes"


def test_from_settings_without_endpoint_says_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from sgr.core.config import LLMSettings

    monkeypatch.setenv("SGR_HOME", str(tmp_path))
    monkeypatch.delenv("SGR_LLM_BASE_URL", raising=False)
    with pytest.raises(LLMError, match="sgr llm serve"):
        LLM.from_settings(LLMSettings())
    with pytest.raises(LLMError, match="SGR_LLM_MODEL"):
        LLM.from_settings(LLMSettings(base_url="http://127.0.0.1:9/v1"))
    remote = LLM.from_settings(LLMSettings(base_url="http://127.0.0.1:9/v1", model="m"), cache=False)
    assert remote.name == "m" and not remote.constrained and remote.base_url == "http://127.0.0.1:9/v1"


def test_kv_cache_round_trip_across_instances_and_tables(tmp_path: Path) -> None:
    from sgr.llm.cache import KVCache

    path = tmp_path / "c.sqlite"
    a = KVCache(path, "calls")
    a.put_json("k1", {"text": "Paris"})
    a.put_many([("k2", b"\x00\x01"), ("k3", b"x")])
    b = KVCache(path, "calls")  # another instance (a rerun, another worker) sees the same rows
    assert b.get_json("k1") == {"text": "Paris"}
    assert b.get_many(["k2", "k3", "absent"]) == {"k2": b"\x00\x01", "k3": b"x"}
    assert b.get("absent") is None and len(b) == 3
    assert len(KVCache(path, "other")) == 0  # tables are separate
    with pytest.raises(ValueError):
        KVCache(path, "bad; DROP TABLE calls")


def test_kv_cache_reads_call_caches_written_as_text(tmp_path: Path) -> None:
    """LLM call caches written before the shared cache stored JSON as TEXT: they still answer."""
    import json
    import sqlite3

    from sgr.llm.cache import KVCache

    path = tmp_path / "fake-model.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE calls (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO calls VALUES (?, ?)", ("k", json.dumps({"text": "old"})))
    conn.commit()
    conn.close()
    assert KVCache(path, "calls").get_json("k") == {"text": "old"}
    assert KVCache(path, "calls").get_many(["k"]) == {"k": b'{"text": "old"}'}


def test_llm_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """SGR_LLM_CONSTRAINT / SGR_LLM_LOGPROBS are read by LLMSettings; a bad value is a ConfigError naming it."""
    from sgr.core.config import LLMSettings, read_settings
    from sgr.core.errors import ConfigError

    monkeypatch.setenv("SGR_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("SGR_LLM_MODEL", "m")
    monkeypatch.setenv("SGR_LLM_CONSTRAINT", "OpenAI")
    monkeypatch.setenv("SGR_LLM_LOGPROBS", "0")
    llm = LLM.from_settings(cache=False)
    assert (llm.dialect, llm.constrained, llm.logprobs) == ("openai", True, False)
    monkeypatch.delenv("SGR_LLM_CONSTRAINT")
    monkeypatch.delenv("SGR_LLM_LOGPROBS")
    s = read_settings(LLMSettings)
    assert (s.constraint_dialect(local=True), s.constraint_dialect(local=False), s.logprobs) == ("llamacpp", "none", True)
    monkeypatch.setenv("SGR_LLM_LOGPROBS", "maybe")
    with pytest.raises(ConfigError, match="SGR_LLM_LOGPROBS"):
        LLM.from_settings(cache=False)


def test_path_and_model_file_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from sgr.core import config

    monkeypatch.setenv("SGR_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SGR_CACHE_DIR", raising=False)
    assert config.sgr_home() == tmp_path / "home" and config.cache_dir("x") == tmp_path / "home" / "cache" / "x"
    monkeypatch.setenv("SGR_CACHE_DIR", str(tmp_path / "c"))
    assert config.cache_dir("x") == tmp_path / "c" / "x" and (tmp_path / "c" / "x").is_dir()
    monkeypatch.setenv("SGR_SHARED_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("SGR_JAVA_DIR", str(tmp_path / "java"))
    assert (config.shared_data_dir(), config.java_dir()) == (tmp_path / "data", tmp_path / "java")
    monkeypatch.delenv("SGR_RELATION_MODEL", raising=False)
    monkeypatch.setenv("SGR_SCR_SINGLE_CHECKPOINT", str(tmp_path / "one.pt"))
    monkeypatch.delenv("SGR_SCR_CHECKPOINT", raising=False)
    assert config.relation_model() is None
    assert (config.scr_checkpoint(), config.scr_checkpoint(single_step=True)) == (None, tmp_path / "one.pt")
