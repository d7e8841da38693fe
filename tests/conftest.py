"""Shared fixtures and the test tiers.

Tiers come from the folder, never from hand-kept markers: ``tests/unit/`` (no server, no model: no Neo4j, no local
LLM, no Chromium) and ``tests/e2e/`` (real Neo4j, the real local LLM, headless Chromium). Every test gets the ``unit``
or ``e2e`` marker from its folder, and ``neo4j`` / ``llm`` / ``browser`` from the fixtures it actually uses (so
``-m "not llm"`` deselects exactly the tests that start the model). A unit test that asks for a server fixture is a
collection error: move it to ``tests/e2e``.

Fixtures of the real local LLM live in ``tests/llm_fixtures.py`` (a plugin, see ``pytest_plugins``); the one scripted
fake chat model is ``tests.helpers.scripted_llm`` (also the ``scripted`` fixture).

Neo4j: when ``NEO4J_URI`` is set (``.ci/run`` and the README's test command start one), tests use
that server; otherwise this file starts the embedded server itself on a free port with a store in
a temporary folder, and stops it at the end. Tests that load data call ``clean_store`` first:
Neo4j Community has one user database, so tests run one after another against it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest_plugins = ["tests.llm_fixtures"]

SHARED = Path(__file__).resolve().parents[2] / "shared"
if not SHARED.exists():
    SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
DATA = Path(os.environ.get("SGR_SHARED_DATA", SHARED / "data")).resolve()
# The shipped models (models/) are the product's default; tests written for the packaged base model and plain cosine
# keep them, and the tests of the shipped models turn them on themselves (tests/*/test_shipped*.py).
os.environ.setdefault("SGR_SHIPPED_MODELS", "0")
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# a test that uses one of these fixtures (directly or through another fixture) needs that server
_NEEDS = {"neo4j": "neo4j_uri", "llm": "local_llm_server", "browser": "chromium"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test ``unit`` or ``e2e`` by its folder and ``neo4j`` / ``llm`` / ``browser`` by its fixtures."""
    root = Path(__file__).resolve().parent
    misplaced = []
    for item in items:
        try:
            tier = Path(item.path).resolve().relative_to(root).parts[0]
        except ValueError:
            continue
        needs = [mark for mark, fixture in _NEEDS.items() if fixture in getattr(item, "fixturenames", ())]
        if tier in ("unit", "e2e"):
            item.add_marker(tier)
        for mark in needs:
            item.add_marker(mark)
        if tier == "unit" and needs:
            misplaced.append(f"{item.nodeid} needs {', '.join(needs)}")
    if misplaced:
        raise pytest.UsageError("unit tests must not need a server; move them to tests/e2e:\n  "
                                + "\n  ".join(misplaced))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (benchmark data; tests read small slices of it)."""
    if not DATA.exists():
        pytest.fail(f"shared data not found at {DATA}: set SGR_SHARED_DATA")
    return DATA


@pytest.fixture(scope="session")
def neo4j_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    uri = os.environ.get("NEO4J_URI")
    if uri:
        yield uri
        return
    home = tmp_path_factory.mktemp("sgr-home")
    old = os.environ.get("SGR_HOME")
    os.environ["SGR_HOME"] = str(home)
    from sgr.graph import server as neo4j_server

    info = neo4j_server.start(heap="1g", pagecache="256m")
    os.environ["NEO4J_URI"] = info.uri
    try:
        yield info.uri
    finally:
        neo4j_server.stop()
        os.environ.pop("NEO4J_URI", None)
        if old is None:
            os.environ.pop("SGR_HOME", None)
        else:
            os.environ["SGR_HOME"] = old


@pytest.fixture(scope="session")
def store(neo4j_uri: str):
    """A :class:`sgr.graph.store.GraphStore` on the test server."""
    from sgr.graph.store import GraphStore

    st = GraphStore(neo4j_uri)
    st.verify()
    yield st
    st.close()


@pytest.fixture()
def clean_store(store):
    """The store, emptied, with sgr's constraints and indexes in place."""
    store.clear()
    store.ensure_schema()
    return store


def read_jsonl(path: Path, limit: int | None = None) -> list[dict]:
    out = []
    with open(path) as fh:
        for line in fh:
            if line.strip():
                out.append(json.loads(line))
                if limit is not None and len(out) >= limit:
                    break
    return out


@pytest.fixture(scope="session")
def webqsp_records(shared_data: Path) -> list[dict]:
    """The first 40 WebQSP-slice records (RoG format, with their graphs)."""
    return read_jsonl(shared_data / "webqsp" / "webqsp_mini.jsonl", limit=40)


@pytest.fixture()
def webqsp_graph(clean_store, webqsp_records):
    """The store holding the union of the 40 records' graphs (written by loaders.writer)."""
    from loaders.writer import GraphBatch, write_graph

    batch = GraphBatch()
    for rec in webqsp_records:
        for h, r, t in rec["graph"]:
            batch.add_triple(h, r, t)
    write_graph(clean_store, batch)
    return clean_store


@pytest.fixture()
def metaqa_graph(clean_store, shared_data):
    """The store holding a MetaQA KB slice: every triple of the first 300 movies' heads."""
    from loaders.writer import GraphBatch, write_graph

    batch = GraphBatch()
    heads: set[str] = set()
    with open(shared_data / "metaqa" / "kb.txt") as fh:
        for line in fh:
            h, r, t = line.rstrip("\n").split("|")
            if h not in heads and len(heads) >= 300:
                continue
            heads.add(h)
            batch.add_triple(h, r, t)
    write_graph(clean_store, batch)
    return clean_store


@pytest.fixture()
def scripted():
    """The scripted fake chat model factory :func:`tests.helpers.scripted_llm` (``scripted("reply 1", …)``)."""
    from tests.helpers import scripted_llm

    return scripted_llm


@pytest.fixture(scope="session")
def gold():
    """``tests/e2e/gold.py``: Predictions walked from a WebQSP record's gold relation paths in the store."""
    from tests.e2e import gold as module

    return module


@pytest.fixture()
def record(webqsp_records):
    """Look up one of the 40 WebQSP records by id."""
    by_id = {r["id"]: r for r in webqsp_records}
    return by_id.__getitem__
