"""Whether an answer is the kind of thing the question asks for: how often, in training questions, a question asking
*this way* ends on a relation with *these words*.

"Who wrote the hobbit?" asks for a writer; where the graph lacks the book's author edge, G_q still reaches a person
(a character of the book) and the confidence has to tell that the relation it came by is not the one "who wrote"
questions end on. The question's *asked key* (:func:`asked_keys`: ``when``, ``where``, ``who:wrote``, ``what:currency``,
…, most specific first) is paired with the *role words* of the last relation of its gold paths
(:func:`role_words`: the type and property parts of a Freebase name, ``location.country.currency_used`` → country,
currency, used; a plain name's words), and the match of a path is the mean pointwise mutual information of the
question's key with its last relation's words:

    match(q, r) = mean_{w ∈ words(r)} log P(w | key(q)) / P(w),   add-one smoothed

with the key backed off to its wh-word below :data:`MIN_KEY_COUNT` questions, and 0 for a key or relation it knows
nothing of. The mean, the type and property parts, the back-off at 5 questions and a "what T" anywhere in the
question were chosen on held-out WebQSP train questions (AUROC 0.751 of a question's own gold last relation against
another's; 0.707 with the best word instead of the mean). The table is learned from WebQSP *train* questions' gold
paths only (``bench/answer_types.py``, which writes ``sgr/assets/answer_types.json`` with its provenance); the
calibrator (:mod:`sgr.methods.confidence`) reads the match as the signal ``type_match``.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from sgr.core.lexicon import ASKED, OVERLAP_STOPWORDS, TYPE, TYPE_STOP, WHEN, WHERE, singular
from sgr.core.logistic import asset_file

ASSET = "answer_types.json"
#: a key seen in fewer training questions backs off to its wh-word
MIN_KEY_COUNT = 5
_WHO = re.compile(r"^\s*(?:who|whom|whose)\s+(?:is |was |are |were )?(?:the |a |an )?([a-z]+)", re.I)
_HOW = re.compile(r"^\s*how (many|much|long|old|big|tall)\b", re.I)


def asked_keys(question: str) -> tuple[str, ...]:
    """How the question asks, most specific first: ``("who:wrote", "who")``, ``("what:currency", "what")`` (also
    from "… uses what type of currency?"), ``("when",)``, ``("where",)``, ``("how:many",)``, else its first word."""
    q = question.strip().lower()
    if WHEN.search(q):
        return ("when",)
    if WHERE.match(q):
        return ("where",)
    m = _WHO.match(q)
    if m:
        return (f"who:{singular(m.group(1))}", "who")
    t = TYPE.search(q)  # "… uses what type of currency?": anywhere in the question
    if t and (t.group(1) or t.group(2).split()[0] not in TYPE_STOP):
        return (f"what:{singular(t.group(2).split()[0])}", "what")
    m = ASKED.match(q)
    if m:
        return (f"what:{singular(m.group(1))}", "what")
    m = _HOW.match(q)
    if m:
        return (f"how:{m.group(1)}",)
    words = q.split()
    return (words[0],) if words else ()


def role_words(relation: str) -> frozenset[str]:
    """The words of a relation's type and property parts (``location.country.currency_used`` → country, currency,
    used; ``directed_by`` → directed), singular, stopwords left out."""
    parts = relation.split(".")
    words = {singular(w) for p in (parts[-2:] if len(parts) >= 3 else parts[-1:]) for w in p.split("_")}
    return frozenset(w for w in words if w and w not in OVERLAP_STOPWORDS)


@dataclass
class AnswerTypes:
    """Counts of (asked key, role word) over training questions (module docstring)."""

    pairs: dict[str, dict[str, int]]  # key → role word → questions
    keys: dict[str, int]  # key → questions
    words: dict[str, int]  # role word → questions
    questions: int
    provenance: dict[str, Any] = field(default_factory=dict)

    def key(self, question: str) -> str | None:
        """The most specific asked key with enough training questions."""
        return next((k for k in asked_keys(question) if self.keys.get(k, 0) >= MIN_KEY_COUNT), None)

    def match(self, question: str, relation: str) -> float:
        """The mean over the relation's role words of log P(w | key) / P(w) (add-one smoothed); 0 when the key or
        the relation's words are unknown."""
        key = self.key(question)
        words = [w for w in role_words(relation) if w in self.words]
        if key is None or not words:
            return 0.0
        seen, n = self.pairs.get(key, {}), self.keys[key]
        return sum(math.log((seen.get(w, 0) + 1) / (n + 2)) - math.log((self.words[w] + 1) / (self.questions + 2))
                   for w in words) / len(words)

    def to_dict(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "keys": self.keys, "words": self.words, "questions": self.questions,
                "provenance": self.provenance}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "AnswerTypes":
        return cls(d["pairs"], d["keys"], d["words"], int(d["questions"]), d.get("provenance", {}))


def fit_answer_types(examples: Iterable[tuple[str, Sequence[str]]],
                     provenance: dict[str, Any] | None = None) -> AnswerTypes:
    """Count (asked key, role word) over ``(question, the last relations of its gold paths)``; each question counts
    a word once; keys of fewer than :data:`MIN_KEY_COUNT` questions are left out (never read)."""
    pairs: dict[str, Counter] = defaultdict(Counter)
    keys: Counter = Counter()
    words: Counter = Counter()
    n = 0
    for question, lasts in examples:
        ws = set().union(*(role_words(r) for r in lasts)) if lasts else set()
        if not ws:
            continue
        n += 1
        words.update(ws)
        for k in asked_keys(question):
            keys[k] += 1
            pairs[k].update(ws)
    kept = {k: c for k, c in keys.items() if c >= MIN_KEY_COUNT}
    return AnswerTypes({k: dict(pairs[k]) for k in kept}, kept, dict(words), n, dict(provenance or {}))


def asset_path() -> Path:
    return asset_file(ASSET)


@lru_cache(maxsize=4)
def load_answer_types(path: str | None = None) -> AnswerTypes | None:
    """The table at ``path`` (default: the shipped one), or None when there is none."""
    p = Path(path or asset_path())
    return AnswerTypes.from_dict(json.loads(p.read_text(encoding="utf-8"))) if p.is_file() else None
