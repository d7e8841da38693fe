"""Fixtures of the real local LLM (a pytest plugin: the root conftest lists it in ``pytest_plugins``).

``local_llm_server`` / ``local_llm``: a real local model server for the whole test session.

``local_llm`` starts ``python -m llama_cpp.server`` with the packaged SmolLM2-135M-Instruct on a free port (its own
process, stopped at the end of the session) and yields an :class:`sgr.llm.client.LLM` for it (llama.cpp constraints on,
log-probs on, a call cache in a temporary folder). When ``SGR_LLM_BASE_URL`` is set it uses that endpoint instead
(``LLM.from_settings``). When llama-cpp-python or the model package is not installed, tests using it are skipped,
unless ``SGR_REQUIRE_LLM=1`` (CI after ``scripts/install_llm.sh``), in which case they fail.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sgr.core.errors import LLMError


def _unavailable(reason: str) -> None:
    if os.environ.get("SGR_REQUIRE_LLM") == "1":
        pytest.fail(f"SGR_REQUIRE_LLM=1 but the local LLM is unavailable: {reason}")
    pytest.skip(f"local LLM unavailable: {reason}")


@pytest.fixture(scope="session")
def local_llm_server(tmp_path_factory: pytest.TempPathFactory):
    """``(base_url, model)`` of a running local server (started here unless SGR_LLM_BASE_URL is set)."""
    from sgr.llm import server

    if os.environ.get("SGR_LLM_BASE_URL"):
        yield os.environ["SGR_LLM_BASE_URL"].rstrip("/"), os.environ.get("SGR_LLM_MODEL", "")
        return
    try:
        server.check_installed()
        server.model_path()
    except LLMError as exc:
        _unavailable(str(exc))
    log = Path(tmp_path_factory.mktemp("llm-server")) / "server.log"
    proc, info = server.launch(log=log, n_ctx=4096)
    try:
        yield info.base_url, info.model
    finally:
        server.terminate(proc.pid)


@pytest.fixture(scope="session")
def local_llm(local_llm_server, tmp_path_factory: pytest.TempPathFactory):
    """An :class:`sgr.llm.client.LLM` on the real local model (constrained decoding and log-probs on)."""
    from sgr.llm.client import LLM

    if os.environ.get("SGR_LLM_BASE_URL"):
        yield LLM.from_settings(cache=False)
        return
    base_url, model = local_llm_server
    llm = LLM.from_endpoint(base_url, model, cache_dir=Path(tmp_path_factory.mktemp("llm-cache")),
                            dialect="llamacpp", logprobs=True)
    llm.take_usage()
    yield llm
