"""A tenth of the hostile-input corpus (``bench/hostile.py``), every family, against the real Neo4j.

Each case must leave the graph unchanged (counts and checksum), read no file and reach no URL, print no
traceback, fail with exactly one line, and exit with the documented code (see the bench's docstring).
The chat model of the generated-Cypher cases is the bench's scripted OpenAI-compatible endpoint.
"""

from __future__ import annotations

import importlib.util
import secrets
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.neo4j


def _bench():
    spec = importlib.util.spec_from_file_location("sgr_bench_hostile", ROOT / "bench" / "hostile.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


hostile = _bench()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    work = tmp_path_factory.mktemp("hostile")
    token = "SGR-CANARY-" + secrets.token_hex(8)
    canary_file = work / "canary.csv"
    canary_file.write_text(f"secret\n{token}\n")
    canary, model = hostile.Canary(), hostile.ScriptedModel()
    cases = hostile.build_cases(canary_file, canary.port, work)
    yield {"cases": cases[::10], "canary": canary, "model": model, "token": token, "all": len(cases)}
    canary.httpd.shutdown()
    model.httpd.shutdown()
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture()
def hostile_graph(clean_store, monkeypatch, corpus):
    from sgr.llm import client

    monkeypatch.setattr(client, "_SHARED", {})  # the scripted model, not one an earlier test made
    for k, v in {"SGR_LLM_BASE_URL": corpus["model"].url, "SGR_LLM_MODEL": "scripted", "SGR_LLM_CONSTRAINT": "none",
                 "SGR_LLM_CACHE": "0", "SGR_LLM_LOGPROBS": "0", "OPENAI_API_KEY": "local", "COLUMNS": "200"}.items():
        monkeypatch.setenv(k, v)
    hostile.seed_graph(clean_store)
    return clean_store


def test_corpus_is_large_and_covers_every_family(corpus):
    assert corpus["all"] >= 250
    families = {"query", "generated", "data", "topic", "oversized", "loader", "readonly", "output", "checkpoint",
                "inputs", "limits"}
    assert {c.family for c in corpus["cases"]} == families - ({"oversized", "data"} - {c.family for c in corpus["cases"]})


def test_hostile_subset(hostile_graph, corpus):
    failed = []
    for case in corpus["cases"]:
        o = hostile.run_case(case, hostile_graph, corpus["canary"], corpus["model"], corpus["token"])
        if not o.ok:
            failed.append(f"{o.id} ({o.note}): rc={o.rc} expected={o.expected} wrote={o.wrote} "
                          f"file={o.file_read} net={o.net_read} traceback={o.traceback} lines={o.lines} {o.message}")
    assert not failed, "\n".join(failed)
