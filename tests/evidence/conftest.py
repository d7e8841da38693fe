"""Fixtures of the evidence tests: WebQSP records and Predictions walked from their gold paths."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_GOLD = Path(__file__).resolve().parent / "gold.py"


def load_gold():
    """tests/evidence/gold.py as a module (pytest runs with --import-mode=importlib)."""
    spec = importlib.util.spec_from_file_location("sgr_tests_evidence_gold", _GOLD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def gold():
    return load_gold()


@pytest.fixture()
def record(webqsp_records):
    """Look up a WebQSP record by id."""
    by_id = {r["id"]: r for r in webqsp_records}
    return by_id.__getitem__
