"""Text helpers shared by every layer: the one normaliser, the one escaper per target language, the one
literal function, and the one parser of answer lines.

- :func:`normalize` — answer normalisation used by every metric and every answer comparison (the SQuAD
  normalisation as reused by the KGQA papers' evaluation code, e.g. RoG's ``eval_result``): NFKC fold,
  lower case, punctuation deleted (``"U.S.A."`` → ``"usa"``), articles *a*/*an*/*the* dropped, blanks
  collapsed. A string that normalises to nothing keeps a less normalised form, so it still matches only itself.
- :func:`lucene_phrase` / :func:`lucene_terms` — Lucene queries for Neo4j's full-text index.
- :func:`cypher_literal` — a Cypher literal for a Python value (strings double-quoted, escaped).
- :func:`gbnf_literal` — a GBNF double-quoted literal for llama.cpp grammars.
- :func:`parse_answer_lines` — one answer per line of a model's reply (bullets, numbering, "Answer:" removed).
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable
from typing import Any

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation) | {"\u2018", "\u2019", "\u201c", "\u201d", "\u2013", "\u2014", "\u00b7"}
_SPACE = re.compile(r"\s+")


def normalize(text: str | None) -> str:
    """Normalise one answer or name: ``"The  Godfather!"`` → ``"godfather"``, ``"U.S.A."`` → ``"usa"``."""
    if text is None:
        return ""
    lowered = unicodedata.normalize("NFKC", str(text)).lower()
    no_punct = "".join(ch for ch in lowered if ch not in _PUNCT)
    s = _SPACE.sub(" ", _ARTICLES.sub(" ", no_punct)).strip()
    if not s:  # only articles/punctuation: fall back to a less normalised form
        s = _SPACE.sub(" ", no_punct).strip() or _SPACE.sub(" ", lowered).strip()
    return s


def normalize_set(texts: Iterable[str | None]) -> set[str]:
    """The set of normalised, non-empty strings."""
    return {n for n in (normalize(t) for t in texts) if n}


_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')
_LUCENE_PHRASE_SPECIAL = re.compile(r'([\\"])')


def lucene_phrase(text: str) -> str | None:
    """A Lucene phrase query for ``text``; ``None`` when it has no word characters to search for."""
    if not re.search(r"\w", text):
        return None
    return '"' + _LUCENE_PHRASE_SPECIAL.sub(r"\\\1", text) + '"'


def lucene_terms(text: str, fuzzy: bool = True) -> str:
    """A Lucene query for a mention: each term escaped (and fuzzy ``~`` when it has ≥ 5 letters)."""
    out = []
    for t in (t for t in re.split(r"\s+", text.strip()) if t):
        esc = _LUCENE_SPECIAL.sub(r"\\\1", t)
        if esc.upper() in ("AND", "OR", "NOT", "TO"):
            esc = esc.lower()
        out.append(esc + ("~" if fuzzy and len(t) >= 5 and t.isalpha() else ""))
    return " ".join(out)


def cypher_literal(value: Any) -> str:
    """A Cypher literal for a parameter value (strings double-quoted with escapes; lists recursively)."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(cypher_literal(v) for v in value) + "]"
    return str(value)


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF double-quoted literal (backslash, quote and control characters escaped)."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
_ANSWER_LABEL = re.compile(r"^(?:answers?|a)\s*\d*\s*[:：]\s*", re.IGNORECASE)


def parse_answer_lines(text: str) -> list[str]:
    """A model's answers, one per line: bullets, numbering and a leading "Answer:" removed, quotes
    stripped, duplicates (case-insensitive) dropped, order kept."""
    out: list[str] = []
    seen: set[str] = set()
    for line in text.splitlines():
        s = _ANSWER_LABEL.sub("", _BULLET.sub("", line).strip()).strip().strip('"').strip()
        if s and s.lower() not in seen:
            seen.add(s.lower())
            out.append(s)
    return out
