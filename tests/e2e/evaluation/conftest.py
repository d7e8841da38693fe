"""Helpers for the evaluation tests: the MetaQA slice that ``metaqa_graph`` loads, recomputed in
Python (so expected answers come from the data, not from the code under test), and MetaQA files."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    """Ceiling caches go to a per-test folder."""
    monkeypatch.setenv("SGR_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="session")
def metaqa_slice(shared_data: Path) -> list[tuple[str, str, str]]:
    """The triples ``metaqa_graph`` loads (every triple of the first 300 movie heads of kb.txt)."""
    heads: set[str] = set()
    triples = set()
    with open(shared_data / "metaqa" / "kb.txt") as fh:
        for line in fh:
            h, r, t = line.rstrip("\n").split("|")
            if h not in heads and len(heads) >= 300:
                continue
            heads.add(h)
            triples.add((h, r, t))
    return sorted(triples)


class Adjacency:
    """``out[r][h] = {t}`` and ``inc[r][t] = {h}`` over a triple list."""

    def __init__(self, triples):
        self.out = defaultdict(lambda: defaultdict(set))
        self.inc = defaultdict(lambda: defaultdict(set))
        for h, r, t in triples:
            self.out[r][h].add(t)
            self.inc[r][t].add(h)

    def step(self, nodes, rel, direction):
        res = set()
        for n in nodes:
            if direction in ("out", "both"):
                res |= self.out[rel].get(n, set())
            if direction in ("in", "both"):
                res |= self.inc[rel].get(n, set())
        return res

    def walk(self, start, rels, dirs):
        nodes = {start}
        for r, d in zip(rels, dirs):
            nodes = self.step(nodes, r, d)
        return nodes


def write_metaqa(path: Path, rows: list[tuple[str, str, list[str]]]) -> Path:
    """Write ``(question with [topic], qtype, answers)`` rows as a MetaQA file plus its ``_qtype.txt``."""
    path.write_text("".join(f"{q}\t{'|'.join(a)}\n" for q, _, a in rows))
    path.with_name(path.stem + "_qtype.txt").write_text("".join(f"{t}\n" for _, t, _ in rows))
    return path
