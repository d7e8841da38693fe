"""``import sgr``: the public names resolve, the import stays lazy, and the CLI is only a thin layer over them."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import sgr
from tests.helpers import ROOT


def test_every_public_name_resolves_and_is_documented() -> None:
    assert {"ask", "load", "evaluate", "create_method", "method_names", "AskResult", "Question", "Prediction",
            "SgrError", "ConfigError", "EntityNotFound", "GraphStore"} <= set(sgr.__all__)
    for name in sgr.__all__:
        value = getattr(sgr, name)
        if callable(value):
            assert inspect.getdoc(value), f"sgr.{name} has no docstring"
    assert issubclass(sgr.ConfigError, sgr.SgrError) and "sgr-compiled" in sgr.method_names()
    assert set(sgr.__all__) <= set(dir(sgr))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sgr.nope  # noqa: B018


def test_import_sgr_loads_nothing_heavy() -> None:
    code = ("import sys, sgr; heavy = [m for m in ('sgr.api', 'neo4j', 'torch', 'langchain_core', 'sgr.methods') "
            "if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_public_functions_are_typed() -> None:
    for fn in (sgr.ask, sgr.load, sgr.evaluate):
        sig = inspect.signature(fn)
        assert sig.return_annotation is not inspect.Signature.empty
        assert all(p.annotation is not inspect.Parameter.empty for p in sig.parameters.values()), fn.__name__
    assert (ROOT / "sgr" / "py.typed").exists()


def test_cli_py_only_assembles_the_app() -> None:
    source = (ROOT / "cli.py").read_text()
    assert len(source.splitlines()) <= 20 and "@app.command" not in source and "Table(" not in source
