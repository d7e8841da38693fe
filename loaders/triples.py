"""Plain triples: one ``head|relation|tail`` or ``head<TAB>relation<TAB>tail`` per line.

This is the MetaQA ``kb.txt`` format. A line with a tab is split on tabs, any other line on
``|``; it must give exactly three non-empty fields (surrounding spaces are removed). Blank lines
and lines starting with ``#`` are ignored. Anything else is a :class:`~loaders.records.Malformed`
record naming the file, the line and what was wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from loaders.records import LineReader, Malformed, Record, Triple

FORMAT = "triples"


def parse_line(text: str) -> Triple | str:
    """A :class:`Triple`, or the reason the line is malformed."""
    sep = "\t" if "\t" in text else "|"
    parts = text.split(sep)
    if len(parts) != 3:
        shown = "<TAB>" if sep == "\t" else "|"
        return (f"expected 3 fields head{shown}relation{shown}tail, found {len(parts)}"
                + (" (no '|' or TAB separator)" if len(parts) == 1 else ""))
    head, relation, tail = (p.strip() for p in parts)
    for field_name, value in (("head", head), ("relation", relation), ("tail", tail)):
        if not value:
            return f"empty {field_name}"
    return Triple(head, relation, tail)


def parse(path: Path, reader: LineReader | None = None) -> Iterator[Record]:
    """Yield the records of a plain-triples file (see module doc)."""
    reader = reader or LineReader(path)
    label = reader.label
    for n, text in reader:
        if isinstance(text, Malformed):
            yield text
            continue
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        res = parse_line(text)
        if isinstance(res, str):
            yield Malformed(label, n, res)
        else:
            yield res
