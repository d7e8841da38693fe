"""Fixtures of the SGR tests: the real local model (re-exported from tests/llm/conftest.py) and a scripted one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("sgr_tests_llm_conftest",
                                               Path(__file__).resolve().parents[1] / "llm" / "conftest.py")
_llm_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_llm_conftest)

local_llm_server = _llm_conftest.local_llm_server
local_llm = _llm_conftest.local_llm


def scripted_llm(*replies: str, logprobs: bool = False):
    """An :class:`sgr.llm.client.LLM` over a fake chat model that answers ``replies`` in order (no cache)."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from sgr.llm.client import LLM

    return LLM(FakeListChatModel(responses=list(replies)), name="fake", logprobs=logprobs)


@pytest.fixture()
def scripted():
    return scripted_llm
