"""Worked examples for SGR's prompts, chosen per question from training splits (dynamic few-shot prompting).

The SGR paper prompts a strong LLM as a "knowledge graph expert" (§3.1.1, §3.4.1). A 135M local model needs
worked examples that look like the question at hand; this module keeps a pool of training questions with their
gold relation paths and returns the nearest ones by sentence-embedding cosine similarity (topic entity masked).

Pools (read-only, from the shared benchmark data; never evaluation questions):

* WebQSP **train** questions with RoG's gold relation paths (``webqsp/webqsp_train_paths.jsonl``); of several
  gold paths the one whose relations are closest to the question in embedding space is kept (some are noise,
  e.g. ``people.person.gender`` twice);
* MetaQA **dev** questions (``{1,2,3}hop_dev.tsv``) with their relation-path types (``…_qtype.txt``), mapped to
  relation sequences (``actor_to_movie_to_director`` → ``starred_actors`` (in), ``directed_by`` (out)).

Only examples whose relations all exist in the graph's vocabulary are kept, so an example never suggests a
relation the graph does not have. The pool is optional: without data files, prompts use static examples.
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sgr.datasets import metaqa_relation_path, shared_data_dir
from sgr.methods.sgr.prompts import WorkedExample, schema_target

_BRACKET = re.compile(r"\[([^\]]+)\]")

#: Places a plan's cosine is rounded to (:meth:`ExemplarPool.nearest`): float32 unit vectors give it to about 1e-7.
COSINE_DECIMALS = 6


@dataclass
class Exemplar:
    """A training question with the relation path that answers it (``directions`` when known)."""

    question: str
    relations: list[str]
    entity: str | None = None
    directions: list[str] = field(default_factory=list)
    source: str = ""

    @property
    def masked(self) -> str:
        return mask_entity(self.question, self.entity)

    def worked(self) -> WorkedExample:
        """This example as a worked example of the schema prompt (its one path as the reply)."""
        return WorkedExample(self.question, (self.entity,) if self.entity else (), schema_target([self.relations]))


def mask_entity(question: str, entity: str | None) -> str:
    """The question with its topic entity replaced by ``X`` (brackets removed), for similarity search."""
    q = _BRACKET.sub("X", question)
    if entity:
        q = re.sub(re.escape(entity), "X", q, flags=re.IGNORECASE)
    return q


def relation_words(path: list[str]) -> list[str]:
    return [r.replace(".", " ").replace("_", " ") for r in path]


def question_path_similarity(questions: Sequence[str], paths: Sequence[Sequence[Sequence[str]]],
                             path_text: Callable[[Sequence[str]], str] | None = None,
                             encoder: str = "minilm") -> list[list[float]]:
    """Cosine of each question with each of its relation paths (``paths[i]`` are question i's) under the sentence
    encoder (:func:`sgr.llm.encoders.embed_texts`, disk-cached; every distinct path text embedded once).
    ``path_text``: a path as words (default: its relations' words joined by spaces)."""
    from sgr.llm.encoders import embed_texts

    text = path_text or (lambda p: " ".join(relation_words(list(p))))
    texts = sorted({text(p) for ps in paths for p in ps})
    vec = dict(zip(texts, embed_texts(texts, encoder))) if texts else {}
    qvecs = embed_texts(list(questions), encoder) if questions else []
    return [[float(vec[text(p)] @ q) for p in ps] for q, ps in zip(qvecs, paths)]


def load_metaqa_dev(folder: Path, per_hop: int = 1500, seed: int = 0) -> list[Exemplar]:
    out: list[Exemplar] = []
    rng = random.Random(seed)
    for hop in (1, 2, 3):
        qfile, tfile = folder / f"{hop}hop_dev.tsv", folder / f"{hop}hop_dev_qtype.txt"
        if not qfile.exists() or not tfile.exists():
            continue
        rows = []
        with open(qfile) as fq, open(tfile) as ft:
            for line, qtype in zip(fq, ft):
                question = line.split("\t")[0].strip()
                m = _BRACKET.search(question)
                try:
                    steps = metaqa_relation_path(qtype)
                except ValueError:
                    continue
                rels, dirs = [r for r, _ in steps], [d for _, d in steps]
                rows.append(Exemplar(question.replace("[", "").replace("]", ""), rels, m.group(1) if m else None,
                                     dirs, f"metaqa-{hop}hop-dev"))
        rng.shuffle(rows)
        out += rows[:per_hop]
    return out


def load_webqsp_train(path: Path) -> list[tuple[str, list[list[str]]]]:
    """(question, gold relation paths) of the WebQSP train questions that have at least one path."""
    out = []
    with open(path) as fh:
        for line in fh:
            rec = json.loads(line)
            paths = [list(p) for p in rec.get("ground_paths", []) if p]
            if paths:
                out.append((rec["question"], paths))
    return out


class ExemplarPool:
    """Nearest training questions by MiniLM cosine similarity (:func:`sgr.llm.encoders.embed_texts`, disk-cached)."""

    def __init__(self, exemplars: list[Exemplar], encoder: str = "minilm") -> None:
        self.exemplars = exemplars
        self.encoder = encoder
        self._matrix: np.ndarray | None = None

    @classmethod
    def from_shared_data(cls, vocabulary: set[str], folder: Path | None = None,
                         encoder: str = "minilm") -> "ExemplarPool":
        """Training examples from the shared data whose relations are all in ``vocabulary``."""
        root = folder or shared_data_dir()
        pool: list[Exemplar] = []
        if root.is_dir():
            if (root / "metaqa").is_dir() and {"directed_by", "starred_actors"} <= vocabulary:
                pool += load_metaqa_dev(root / "metaqa")
            wq = root / "webqsp" / "webqsp_train_paths.jsonl"
            if wq.exists():
                rows = [(q, [p for p in paths if all(r in vocabulary for r in p)]) for q, paths in load_webqsp_train(wq)]
                rows = [(q, paths) for q, paths in rows if paths]
                multi = [(q, paths) for q, paths in rows if len(paths) > 1]
                if multi:  # keep the gold path closest to the question (batched embeddings)
                    sims = question_path_similarity([q for q, _ in multi], [paths for _, paths in multi],
                                                    encoder=encoder)
                    best = {q: paths[int(np.argmax(sim))] for (q, paths), sim in zip(multi, sims)}
                for q, paths in rows:
                    pool.append(Exemplar(q, list(best[q] if len(paths) > 1 else paths[0]), None, [], "webqsp-train"))
        pool = [ex for ex in pool if ex.relations and all(r in vocabulary for r in ex.relations)]
        return cls(pool, encoder)

    def __len__(self) -> int:
        return len(self.exemplars)

    def _embeddings(self) -> np.ndarray:
        if self._matrix is None:
            from sgr.llm.encoders import embed_texts

            self._matrix = embed_texts([ex.masked for ex in self.exemplars], self.encoder)
        return self._matrix

    def nearest(self, question: str, k: int = 1, entity: str | None = None) -> list[tuple[Exemplar, float]]:
        """The ``k`` most similar examples (never the question itself), best first, with their cosine rounded to
        :data:`COSINE_DECIMALS` places and clipped to [−1, 1] (the order is the unrounded cosines'). The cosine is a
        plan's δ and ρ. Two questions that are the same once their entities are masked give 1 up to float32
        rounding, above or below 1 depending on the batch that first embedded the text (so on whether the embedding
        cache was warm); a plan with δ 1 and γ 0 has v = μ·1 + (1 − μ)·0 = ε exactly with the defaults, so a cosine
        of 0.99999994 made it invalid on one machine and valid on another."""
        if not self.exemplars or k <= 0:
            return []
        from sgr.llm.encoders import embed_texts

        qv = embed_texts([mask_entity(question, entity)], self.encoder)[0]
        sims = self._embeddings() @ qv
        order = np.argsort(-sims)  # the order of the unrounded cosines, as before the rounding
        out: list[tuple[Exemplar, float]] = []
        norm_q = question.strip().lower()
        for i in order:
            ex = self.exemplars[int(i)]
            if ex.question.strip().lower() == norm_q:
                continue
            out.append((ex, min(1.0, max(-1.0, round(float(sims[int(i)]), COSINE_DECIMALS)))))
            if len(out) >= k:
                break
        return out


_LOCK = threading.Lock()
_POOLS: dict[tuple[str, str], ExemplarPool] = {}


def shared_exemplars(uri: str, graph_version: str, vocabulary: set[str]) -> ExemplarPool:
    """The :class:`ExemplarPool` for the graph at ``uri`` (built once per graph version)."""
    key = (uri, graph_version)
    with _LOCK:
        if key not in _POOLS:
            _POOLS[key] = ExemplarPool.from_shared_data(vocabulary)
        return _POOLS[key]
