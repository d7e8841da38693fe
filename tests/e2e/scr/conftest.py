"""Fixtures of the SCR tests: an isolated cache folder, MetaQA slice questions."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


@pytest.fixture(autouse=True, scope="session")
def scr_cache(tmp_path_factory: pytest.TempPathFactory):
    """SCR's subgraph cache and embedding cache in a temporary folder (never the user's SGR_HOME)."""
    old = os.environ.get("SGR_CACHE_DIR")
    os.environ["SGR_CACHE_DIR"] = str(tmp_path_factory.mktemp("scr-cache"))
    cache = Path(os.environ["SGR_CACHE_DIR"])
    yield cache
    shutil.rmtree(cache, ignore_errors=True)
    if old is None:
        os.environ.pop("SGR_CACHE_DIR", None)
    else:
        os.environ["SGR_CACHE_DIR"] = old


def slice_questions(store, shared_data: Path, hops: int = 1, split: str = "dev") -> list:
    """MetaQA questions whose topic entity and every answer are nodes of the loaded slice."""
    from sgr.datasets import read_metaqa

    ids = {r["id"] for r in store.read("MATCH (e:Entity) RETURN e.id AS id")}
    qs = read_metaqa(shared_data / "metaqa" / f"{hops}hop_{split}.tsv")
    return [q for q in qs if all(t in ids for t in q.topic_entities) and q.answers and all(a in ids for a in q.answers)]
