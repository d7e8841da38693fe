"""Relation retrieval over a profiled graph: which relationship types, property keys and labels a question names.

On sgr's own graphs R_q is drawn from the ``(:Relation)`` vocabulary (:mod:`sgr.retrieval.relations`); a user's graph
has no such nodes, and half of what a question asks about is a *property* ("released", "rating"), not a
relationship. :class:`KeyAligner` reads the vocabulary from the profile (:mod:`sgr.graph.profile`): every
relationship type (``ACTED_IN`` read as "acted in"), every literal property key of a label or relationship type, and
every label, and aligns each content word of the question (outside the linked entity names) to the key it names:

1. the same word stem (``actors``, ``acted`` → ``act``; :data:`~sgr.core.lexicon.WORD_SUFFIXES`) or a listed synonym
   (:data:`~sgr.core.lexicon.KEY_SYNONYMS`) as a word of the key's text: score 0.95 / 0.9;
2. when no key matches so, the cosine similarity of the word and the key's text under the sentence encoder (MiniLM,
   as the relation retriever uses), when at least ``threshold``; on a tie a relationship wins over a property or a
   label (the word "genre" names ``HAS_GENRE`` before the label ``Genre``).

The result is a list of :class:`KeyMention` in question order: the question schema's relations and properties.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sgr.core.lexicon import FUNCTION_WORDS, KEY_SYNONYMS, WORD_SUFFIXES
from sgr.graph.profile import GraphProfile
from sgr.graph.store import relation_text

KINDS = ("relationship", "property", "label")
#: Cosine similarity a word needs to name a key by meaning alone.
ALIGN_THRESHOLD = 0.62


@dataclass
class KeyMention:
    """Question word ``position`` (``word``) names ``key`` of ``kind``; ``owner`` is the label or relationship type
    a property belongs to."""

    position: int
    word: str
    kind: str
    key: str
    owner: str
    score: float


@dataclass
class _Item:
    kind: str
    key: str
    owner: str
    text: str


def key_text(key: str) -> str:
    """A key as words: ``ACTED_IN`` → ``acted in``, ``imdbRating`` → ``imdb rating``, ``release_year`` → ``release
    year``."""
    return relation_text(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key)).lower()


def stem(word: str) -> str:
    """The word without one ending of :data:`WORD_SUFFIXES` (and a final ``e``), keeping at least three letters."""
    w = word.lower()
    for suffix in WORD_SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[:-len(suffix)]
            break
    return w[:-1] if w.endswith("e") and len(w) > 3 else w  # rate, rated, rating → rat


class KeyAligner:
    """Aligns question words to the keys of ``profile`` (see the module docstring)."""

    def __init__(self, profile: GraphProfile, *, threshold: float = ALIGN_THRESHOLD, encoder: str = "minilm") -> None:
        self.profile = profile
        self.threshold = threshold
        self.encoder = encoder
        items: list[_Item] = []
        for r in profile.relationships:
            items.append(_Item("relationship", r.type, r.type, key_text(r.type)))
            items += [_Item("property", p, r.type, key_text(p)) for p in r.properties]
        for lp in profile.labels.values():
            items.append(_Item("label", lp.label, lp.label, key_text(lp.label)))
            items += [_Item("property", p, lp.label, key_text(p)) for p in lp.properties if p != lp.name_property]
        self.items = list({(i.kind, i.key, i.owner): i for i in items}.values())
        self._vectors: np.ndarray | None = None

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        from sgr.llm.encoders import embed_texts

        return embed_texts(list(texts), self.encoder)

    @property
    def vectors(self) -> np.ndarray:
        if self._vectors is None:
            self._vectors = self._embed([i.text for i in self.items])
        return self._vectors

    def label_for(self, word: str, threshold: float = 0.5) -> str | None:
        """The label ``word`` names best ("person" → ``Person``), when the encoder's similarity reaches ``threshold``."""
        labels = [j for j, it in enumerate(self.items) if it.kind == "label"]
        if not labels:
            return None
        sims = self._embed([word]) @ self.vectors[labels].T
        best = int(np.argmax(sims[0]))
        return self.items[labels[best]].key if sims[0][best] >= threshold else None

    def lexical(self, phrase: str, item: _Item) -> float:
        """0.95 when a word of the phrase shares its stem with a word of the key's text, 0.9 for a listed synonym."""
        words = item.text.split()
        if " " not in phrase and any(stem(phrase) == stem(w) for w in words):
            return 0.95
        if any(phrase.lower() in group and w in group for group in KEY_SYNONYMS for w in words):
            return 0.9
        return 0.0

    def align(self, words: Sequence[str], skip: set[int] = frozenset()) -> list[KeyMention]:
        """One mention per aligned word (or two-word synonym), in question order; ``skip``: positions inside entity
        names."""
        if not self.items:
            return []
        phrases = [(i, w) for i, w in enumerate(words) if i not in skip and w.lower() not in FUNCTION_WORDS
                   and re.search(r"[a-z]", w.lower())]
        bigrams = [(i, f"{words[i]} {words[i + 1]}".lower()) for i in range(len(words) - 1)
                   if i not in skip and i + 1 not in skip]
        out: list[KeyMention] = []
        taken: set[int] = set()
        for i, phrase in bigrams:  # two-word synonyms ("came out") first
            best = max(((self.lexical(phrase, it), it) for it in self.items), key=lambda t: t[0])
            if best[0] > 0:
                out.append(KeyMention(i, phrase, best[1].kind, best[1].key, best[1].owner, best[0]))
                taken |= {i, i + 1}
        phrases = [(i, w) for i, w in phrases if i not in taken]
        phrases = [(i, w[3:] if w.lower().startswith("co-") and len(w) > 5 else w) for i, w in phrases]  # co-writers
        sims = self._embed([w.lower() for _, w in phrases]) @ self.vectors.T if phrases else np.zeros((0, 0))
        for row, (i, w) in enumerate(phrases):
            lexical = [self.lexical(w, it) for it in self.items]
            scored = [(lexical[j] if any(lexical) else float(sims[row, j]), -KINDS.index(it.kind), j)
                      for j, it in enumerate(self.items)]  # a word match first; on a tie a relationship
            score, _, j = max(scored)
            if score >= self.threshold:
                it = self.items[j]
                out.append(KeyMention(i, w, it.kind, it.key, it.owner, round(score, 4)))
        return sorted(out, key=lambda m: m.position)
