"""Model files are read without running code (issue 42 item 1): every torch.load in sgr goes through
:func:`sgr.core.checkpoints.load_checkpoint` (``weights_only=True``)."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
import torch

from sgr.core.checkpoints import load_checkpoint
from sgr.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


class _Payload:
    """Pickles as a call of ``os.system`` (what the issue's evil.pt holds)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture()
def evil(tmp_path) -> tuple[Path, Path]:
    marker = tmp_path / "PWNED"
    path = tmp_path / "evil.pt"
    torch.save({"config": {}, "state_dict": {}, "model": _Payload(marker)}, path)
    return path, marker


def _one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def test_a_checkpoint_that_would_run_code_is_refused(evil):
    path, marker = evil
    with pytest.raises(ConfigError) as err:
        load_checkpoint(path, what="SCR checkpoint")
    assert "could run code" in _one_line(err) and str(path) in str(err.value)
    assert not marker.exists()


def test_scr_model_load_runs_no_code(evil):
    from sgr.methods.scr.model import SCRModel

    path, marker = evil
    with pytest.raises(ConfigError):
        SCRModel.load(path)
    assert not marker.exists()


def test_relation_model_read_runs_no_code(evil):
    from sgr.retrieval.training import read_meta

    path, marker = evil
    with pytest.raises(ConfigError):
        read_meta(path)
    assert not marker.exists()


@pytest.mark.parametrize("content", [b"root:x:0:0:root:/root:/bin/bash\n", b"", b"PK\x03\x04garbage", b"\x80\x04junk"])
def test_a_file_that_is_not_a_checkpoint_is_one_line(tmp_path, content):
    path = tmp_path / "x.pt"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as err:
        load_checkpoint(path, what="SCR checkpoint")
    assert "not an SCR checkpoint" in _one_line(err)


def test_missing_and_folder(tmp_path):
    with pytest.raises(ConfigError, match="no relation model there"):
        load_checkpoint(tmp_path / "none.pt", what="relation model")
    with pytest.raises(ConfigError, match="a folder"):
        load_checkpoint(tmp_path, what="relation model")


def test_what_sgr_writes_loads(tmp_path):
    blob = {"config": {"hidden": 8, "name": "x", "ok": True, "ratio": 0.5, "ks": [1, 2]},
            "state_dict": {"w": torch.ones(2, 3)}, "history": [{"epoch": 1, "loss": 0.3}]}
    path = tmp_path / "ok.pt"
    torch.save(blob, path)
    out = load_checkpoint(path, what="SCR checkpoint")
    assert out["config"] == blob["config"] and torch.equal(out["state_dict"]["w"], blob["state_dict"]["w"])
    assert load_checkpoint(path.read_bytes(), what="bundle's returned weights")["history"] == blob["history"]


def test_no_other_torch_load_in_the_project():
    """Every ``torch.load`` call of sgr/, loaders/, cypher/ and bench/ is the one in sgr/core/checkpoints.py; no
    pickle, joblib, or numpy load with pickles allowed."""
    found = []
    for folder in ("sgr", "loaders", "cypher", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if not isinstance(node, ast.Call):
                    continue
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                owner = getattr(getattr(f, "value", None), "id", "")
                if (owner, name) in {("torch", "load"), ("pickle", "load"), ("pickle", "loads"), ("joblib", "load"),
                                     ("dill", "load"), ("cloudpickle", "load")}:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {owner}.{name}")
                if name == "load" and any(k.arg == "allow_pickle" for k in node.keywords):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} allow_pickle")
    assert [f for f in found if not f.startswith("sgr/core/checkpoints.py:")] == []
    assert any(f.endswith("torch.load") for f in found)  # the one that stays
