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
- :func:`visible` — text for a terminal: control characters (ANSI escapes, carriage returns, bidi overrides …)
  written as visible escapes, so data cannot move the cursor, clear the screen or reorder a line.
- :func:`check_utf8` — refuse text that came from bytes that are not UTF-8 (a lone surrogate from the command line).
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


#: Invisible characters that reorder or hide text: bidi embeddings/overrides/isolates, line/paragraph separators.
_INVISIBLE = frozenset(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029, 0xFEFF))


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: Any, *, newlines: bool = False) -> str:
    """``text`` safe to print on a terminal: every control character (C0, DEL, C1: ``ESC[2J`` clears no screen),
    lone surrogate and invisible reordering character (U+202E …) written as ``\\x1b`` / ``\\u202e``.

    ``newlines`` keeps line feeds and tabs (a multi-line block such as a query); otherwise they are escaped too, so
    one value stays on one line. Carriage returns are always escaped (they would overwrite the line).
    """
    s = str(text)
    keep = "\n\t" if newlines else ""
    if s.isprintable() and not any(ch in _INVISIBLE for ch in s):
        return s
    return "".join(ch if ch in keep or (ch.isprintable() and ch not in _INVISIBLE) or ch == " "
                   else _escape_char(ch) for ch in s)


def check_utf8(text: str, what: str) -> str:
    """``text`` if it encodes as UTF-8; else :class:`~sgr.core.errors.InputError` naming ``what`` and the first byte
    that was not UTF-8 (the command line hands such bytes over as lone surrogates)."""
    from sgr.core.errors import InputError

    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        byte = f"byte 0x{ord(bad) - 0xDC00:02x}" if 0xDC80 <= ord(bad) <= 0xDCFF else f"U+{ord(bad):04X}"
        raise InputError(f"{what} is not valid UTF-8 ({byte} at character {exc.start + 1}): pass UTF-8 text") from None
    return text


def question_inputs(text: Any, topics: Any) -> tuple[str, list[str]]:
    """The question and its topics as checked text: ``topics`` may be one name (``topics="Jamaica"``) or a list of
    names; every one must be a string of UTF-8 text (bytes that are not UTF-8 reach argv as lone surrogates)."""
    from sgr.core.errors import ConfigError

    if not isinstance(text, str):
        raise ConfigError(f"the question must be a string, got {type(text).__name__}")
    if topics is None:
        topics = []
    elif isinstance(topics, str):
        topics = [topics]
    elif not isinstance(topics, (list, tuple)) or not all(isinstance(t, str) for t in topics):
        raise ConfigError("topics must be a topic name or a list of names (strings), got "
                          f"{type(topics).__name__}")
    return check_utf8(text, "the question"), [check_utf8(t, "a topic (--topic)") for t in topics]
