"""Which relation gives the answer, read from the question's words: a lexicon learned on dev questions' gold paths.

The relation encoder scores a relation against the whole question, where a compositional question's description of
its bridge entity dominates: "What did the famous person who went to Seaforth Elementary School *do*?" reads as a
school question, and G_q's top path stopped at the person or took another school relation, while the word that asks
for the answer ("do") goes with ``people.person.profession`` in the dev questions' gold paths ("money" with
``currency_used``, "raised" with ``origin``). The lexicon keeps, for each word w of a dev question and each relation
r that ends one of its gold paths, the smoothed pointwise mutual information

    a(w, r) = log( P̃(r | w) / P(r) ),   P̃(r | w) = (c(w, r) + β·P(r)) / (c(w) + β),   P(r) = (c(r) + ½) / (n + ½·V)

(counts over questions; a question with k gold end relations counts 1/k for each; V = 1000 relations of prior mass),
only where it is positive; a schema path's term ``lex_last`` (:mod:`sgr.methods.sgr.path_ranker`) is max over the
question's words of a(w, r_last), 0 when none is known. ``bench/path_ranker.py`` fits it on WebQSP *train* gold paths
and MetaQA dev questions the ranker does not use (never a question it trains or checks on) and writes
``sgr/assets/word_relations.json``; without that file the term is 0.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from sgr.core.lexicon import singular
from sgr.core.logistic import asset_file

ASSET = "word_relations.json"
_WORD = re.compile(r"[a-z]+")


def lexicon_words(question: str) -> set[str]:
    """The question's lower-case words, each as :func:`~sgr.core.lexicon.singular` gives it: what the lexicon counts
    (not :func:`sgr.retrieval.mentions.question_words`, the cased words mention spans are cut from)."""
    return {singular(w) for w in _WORD.findall(question.lower())}


def asking_words(question: str, names: Iterable[str] = ()) -> set[str]:
    """:func:`lexicon_words` of ``question`` outside ``names`` (its linked entities' mentions and names): the words that
    can ask for the answer's relation. A topic's name says which entity the question is about, not which relation
    gives the answer, yet in dev questions a name goes with its entity's usual relations: read with "japan", G_q took
    Japan's Olympics relations for "what currency does japan use?". Without the topics' names the shipped ranker's
    held-out G_q top-1 on dev rose 0.693 → 0.707 (bench/experiments/path-ranker.md)."""
    words = lexicon_words(question)
    for name in names:
        words -= lexicon_words(name)
    return words


@dataclass(frozen=True)
class WordRelations:
    """a(w, r) > 0 per relation (the module docstring), and how it was fitted."""

    scores: dict[str, dict[str, float]]  # relation -> word -> a(w, r)
    provenance: dict = field(default_factory=dict)

    def score(self, question: str | set[str], relation: str) -> float:
        """max over the question's words of a(w, ``relation``); 0 when no word of it goes with the relation."""
        by_word = self.scores.get(relation)
        if not by_word:
            return 0.0
        words = lexicon_words(question) if isinstance(question, str) else question
        return max((by_word.get(w, 0.0) for w in words), default=0.0)

    def save(self, path: Path) -> Path:
        path.write_text(json.dumps({"provenance": self.provenance, "scores": self.scores}, sort_keys=True) + "\n",
                        encoding="utf-8")
        return path


def fit_word_relations(questions: Iterable[tuple[str, Iterable[str]]], *, beta: float = 5.0,
                       prior_relations: int = 1000, provenance: dict | None = None) -> WordRelations:
    """The lexicon of ``questions``: (text, the relations that end its gold paths) pairs (module docstring)."""
    c_w: Counter[str] = Counter()
    c_r: Counter[str] = Counter()
    c_wr: Counter[tuple[str, str]] = Counter()
    n = 0
    for text, ends in questions:
        rels = sorted(set(ends))
        if not rels:
            continue
        n += 1
        words = lexicon_words(text)
        for r in rels:
            c_r[r] += 1 / len(rels)
        for w in words:
            c_w[w] += 1
            for r in rels:
                c_wr[w, r] += 1 / len(rels)
    scores: dict[str, dict[str, float]] = {}
    for (w, r), c in c_wr.items():
        p_r = (c_r[r] + 0.5) / (n + 0.5 * prior_relations)
        a = math.log((c + beta * p_r) / (c_w[w] + beta) / p_r)
        if a > 0:
            scores.setdefault(r, {})[w] = round(a, 4)
    return WordRelations(scores, {**(provenance or {}), "questions": n, "beta": beta,
                                  "prior_relations": prior_relations})


def load_word_relations(path: str | Path | None = None) -> WordRelations | None:
    """The lexicon at ``path`` (default: the shipped one), or None when there is none."""
    return _load(str(path or asset_file(ASSET)))


@lru_cache(maxsize=4)
def _load(path: str) -> WordRelations | None:
    p = Path(path)
    if not p.is_file():
        return None
    d = json.loads(p.read_text(encoding="utf-8"))
    return WordRelations(d["scores"], d.get("provenance", {}))
