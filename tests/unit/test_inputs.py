"""Meaningless input is refused with one line, and what is meant is accepted (issue 42 items 6 and 9): timeouts
that are not finite, ``--limit 0``, negative counts, a string where a list is expected, bytes that are not UTF-8,
a NEO4J_URI that is no Bolt address, a prompt longer than the model's context. No server needed: each is refused
before sgr connects to anything."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from sgr.core.errors import ConfigError, InputError, LLMError
from tests.helpers import ROOT


def _cli(*args: str, **env: str):
    import cli

    return CliRunner().invoke(cli.app, list(args), env={"COLUMNS": "200", **env})


def _one_line(result) -> str:
    text = result.output.strip()
    assert "Traceback" not in text and len(text.splitlines()) == 1, text
    return text


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 1e308, 0, -1, "x", None, True])
def test_check_timeout_refuses(value):
    from sgr.graph.store import check_timeout

    with pytest.raises(ConfigError):
        check_timeout(value)
    assert check_timeout(5) == 5.0 and check_timeout("2.5") == 2.5


@pytest.mark.parametrize("value", ["nan", "inf", "1e308", "0", "-1"])
def test_query_timeout_flag(value):
    res = _cli("query", "RETURN 1", "--timeout", value)
    assert res.exit_code == 2 and "--timeout" in _one_line(res)


def test_query_limit_zero_is_refused_not_a_thousand_rows():
    res = _cli("query", "RETURN 1", "--limit", "0")
    assert res.exit_code == 2 and "--limit" in _one_line(res)


@pytest.mark.parametrize("uri", ["not-a-uri", "http://127.0.0.1:7474", "https://example.org", "bolt://127.0.0.1:7687?x=1",
                                 "bolt://[::1", "bolt://127.0.0.1:99999", "bolt://", ""])
def test_bad_neo4j_uri_is_one_line(uri):
    from sgr.graph.store import GraphStore

    with pytest.raises(ConfigError) as err:
        GraphStore(uri, password="x")
    assert "\n" not in str(err.value)
    if uri:
        res = _cli("query", "RETURN 1", NEO4J_URI=uri)
        assert res.exit_code == 2 and "NEO4J_URI" in _one_line(res)


@pytest.mark.parametrize("uri", ["bolt://127.0.0.1:7687", "neo4j://127.0.0.1:7687?policy=x", "bolt+s://db.example:7687"])
def test_bolt_uris_are_accepted(uri):
    from sgr.graph.store import check_uri

    assert check_uri(uri) == uri


@pytest.mark.parametrize("flag,value", [("--hops", "-1"), ("--hops", "0"), ("--max-repairs", "-2")])
def test_ask_counts_below_their_minimum(flag, value):
    res = _cli("ask", "what?", "--topic", "Jamaica", "--method", "neighbors", flag, value,
               NEO4J_URI="bolt://127.0.0.1:1")
    assert res.exit_code == 2 and flag in _one_line(res)


def test_api_topics_as_one_string():
    from sgr.core.text import question_inputs

    assert question_inputs("what?", "Jamaica") == ("what?", ["Jamaica"])
    assert question_inputs("what?", ("Jamaica", "Cuba")) == ("what?", ["Jamaica", "Cuba"])
    assert question_inputs("what?", None) == ("what?", [])
    with pytest.raises(ConfigError):
        question_inputs("what?", 42)
    with pytest.raises(InputError, match="byte 0xff"):
        question_inputs("what?", ["Jam\udcffaica"])


def test_non_utf8_bytes_on_the_command_line_are_one_line():
    env = dict(os.environ, PYTHONPATH=str(ROOT), NEO4J_URI="bolt://127.0.0.1:1", COLUMNS="200")
    for argv in ([b"ask", b"what \xff?", b"--topic", b"Jamaica", b"--method", b"neighbors"],
                 [b"ask", b"what?", b"--topic", b"Jam\xe9aica", b"--method", b"neighbors"]):
        out = subprocess.run([sys.executable.encode(), b"-m", b"cli", *argv], cwd=ROOT, env=env, capture_output=True,
                             timeout=120)
        err = out.stderr.decode("utf-8", "replace").strip()
        assert out.returncode == 2 and "Traceback" not in err and len(err.splitlines()) == 1, err
        assert "not valid UTF-8" in err


@pytest.mark.parametrize("key,value", [("beam", "-1"), ("hops", "-2"), ("gamma_min", "nan"), ("w_rel", "inf"),
                                       ("max_repairs", "-1")])
def test_method_options_refuse_negative_counts_and_non_finite_numbers(key, value):
    from sgr.methods.sgr.config import config_from_options

    with pytest.raises(ConfigError) as err:
        config_from_options("sgr", {key: value})
    assert key in str(err.value) and "\n" not in str(err.value)


def test_method_options_keep_meaningful_values():
    from sgr.methods.sgr.config import config_from_options

    cfg = config_from_options("sgr", {"beam": "3", "gamma_min": "0.3", "max_repairs": "0"})
    assert (cfg.beam, cfg.gamma_min, cfg.max_repairs) == (3, 0.3, 0)


def test_prompt_longer_than_the_context_is_an_llm_error():
    """langchain-openai raises its own OpenAIContextOverflowError (module langchain_openai): it was re-raised."""
    import httpx
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.messages import HumanMessage
    from langchain_openai.chat_models.base import OpenAIContextOverflowError

    from sgr.llm.client import LLM

    class Overflowing(FakeListChatModel):
        def invoke(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201
            resp = httpx.Response(400, request=httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions"))
            raise OpenAIContextOverflowError("the request exceeds the available context size (4096 tokens)",
                                             response=resp, body=None)

    llm = LLM(Overflowing(responses=["x"]), name="fake")
    with pytest.raises(LLMError, match="context window") as err:
        llm.complete([HumanMessage("why " * 5000)], stage="test")
    assert "\n" not in str(err.value)
