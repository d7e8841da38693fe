"""Answer normalisation shared by every answer metric.

The SQuAD answer normalisation (Rajpurkar et al., 2016, official evaluation script, as reused by
the KGQA papers' evaluation code, e.g. RoG, Luo et al. 2024, ``eval_result``): lower-case, delete
punctuation characters (``"U.S.A."`` → ``"usa"``, ``"Jay-Z"`` → ``"jayz"``), drop the articles *a*,
*an*, *the*, collapse whitespace. Unicode is NFKC-folded first so that visually identical strings
compare equal. A string that normalises to nothing keeps a less normalised form (``"The"`` →
``"the"``, ``"A."`` → ``"a"``, ``"!!"`` → ``"!!"``), so that it still matches only itself.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation) | {"\u2018", "\u2019", "\u201c", "\u201d", "\u2013", "\u2014", "\u00b7"}
_SPACE = re.compile(r"\s+")


def normalize_answer(text: str | None) -> str:
    """Normalise one answer string: ``"The  Godfather!"`` → ``"godfather"``, ``"U.S.A."`` → ``"usa"``."""
    if text is None:
        return ""
    lowered = unicodedata.normalize("NFKC", str(text)).lower()
    no_punct = "".join(ch for ch in lowered if ch not in _PUNCT)
    s = _SPACE.sub(" ", _ARTICLES.sub(" ", no_punct)).strip()
    if not s:  # only articles/punctuation: fall back to a less normalised form
        s = _SPACE.sub(" ", no_punct).strip() or _SPACE.sub(" ", lowered).strip()
    return s


def normalize_set(texts: Iterable[str | None]) -> set[str]:
    """The set of normalised, non-empty answers."""
    return {n for n in (normalize_answer(t) for t in texts) if n}
