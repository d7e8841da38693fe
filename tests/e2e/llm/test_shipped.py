"""The models that ship with sgr (models/), used by default: set-up materialises them, ``sgr llm serve`` serves the
shipped path generator and says so, ``sgr ask`` answers with it and the shipped relation encoder and says which
weights and retriever answered; ``--model base`` still serves the packaged model. Real Neo4j, real llama.cpp server,
the real shipped files."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from cli import app
from sgr.core.config import models_dir
from sgr.retrieval import shipped as encoder

RECORD = "WebQTest-0"  # "what does jamaican people speak?" about Jamaica


@pytest.fixture()
def shipped_on(monkeypatch: pytest.MonkeyPatch):
    import os

    if os.environ.get("SGR_LLM_BASE_URL"):
        pytest.skip("an external endpoint is configured")
    assert "schema-lm" in [p.parent.name for p in models_dir().glob("*/manifest.json")]  # the path generator ships
    monkeypatch.setenv("SGR_SHIPPED_MODELS", "1")
    from sgr.llm.client import reset_shared_llm

    reset_shared_llm()
    yield
    reset_shared_llm()


def test_materialise_then_serve_and_ask_with_the_shipped_models(shipped_on, local_llm_server, webqsp_graph, record
                                                               ) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["models", "materialise"])
    assert res.exit_code == 0, res.output
    assert "schema-lm" in res.output and "ready at" in res.output
    encoder_ships = encoder.available()
    assert ("relation-encoder" in res.output) == encoder_ships
    assert "materialised at" in runner.invoke(app, ["models", "status"]).output
    res = runner.invoke(app, ["llm", "serve", "--threads", "1"])
    try:
        assert res.exit_code == 0, res.output
        assert "shipped path generator" in res.output and "tuned-shipped-" in res.output
        assert "shipped path generator" in runner.invoke(app, ["llm", "status"]).output
        rec = record(RECORD)
        res = runner.invoke(app, ["ask", rec["question"], "--topic", rec["q_entity"][0], "--explain"])
        assert res.exit_code == 0, res.output
        out = " ".join(res.output.split())
        assert "Answered by: shipped path generator" in out
        # the shipped relation encoder when one ships (models/relation-encoder), else plain cosine
        assert ("Relations ranked by: the shipped encoder" in out) == encoder_ships, out
        assert encoder_ships or re.search(r"Relations ranked by: (MiniLM )?cosine \(untrained\)", out), out
        assert any(a in res.output for a in rec["answer"]), res.output  # the gold answers, from the record
        res = runner.invoke(app, ["llm", "serve", "--model", "base"])
        assert res.exit_code != 0 and "already serves" in res.output  # one server at a time, named weights
    finally:
        runner.invoke(app, ["llm", "stop"])
    res = runner.invoke(app, ["llm", "serve", "--model", "base", "--threads", "1"])
    try:
        assert res.exit_code == 0 and "base model" in res.output, res.output
    finally:
        runner.invoke(app, ["llm", "stop"])
