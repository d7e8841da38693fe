"""Fixtures of the RCR tests: the real local model (``local_llm``, from tests/llm/conftest.py, re-exported here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_LLM_CONFTEST = Path(__file__).resolve().parents[1] / "llm" / "conftest.py"
_spec = importlib.util.spec_from_file_location("sgr_tests_llm_conftest_for_rcr", _LLM_CONFTEST)
assert _spec is not None and _spec.loader is not None
_llm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_llm)

local_llm_server = _llm.local_llm_server
local_llm = _llm.local_llm
