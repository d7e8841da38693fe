"""Parsing one large plain-text file on several processes, one byte range each.

N-Triples and plain triples are one statement per line with no state across lines, so a large
uncompressed file (:data:`PARALLEL_MIN_BYTES`) is cut at line boundaries into one range per CPU
(:func:`line_ranges`); each range is parsed by its own process (:func:`process_context`) into spill files of its own (:func:`parse_part`), and the caller sorts the parts together
(:func:`loaders.spill.sort_parts`: ``sort`` reads them in range order, so the stable sort of the
``nodes`` facts keeps input order, and "the first name seen is kept" still holds).

Each part counts its own lines; line numbers in malformed-line messages are made global once every
part is done (:func:`global_line`). Each part stops once its own malformed lines pass the error
budget; the caller adds the parts' counts against the budget, so a load stops exactly when the
sequential parse would, with the same first bad line in the message.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from loaders.records import GZIP_MAGIC, LineReader
from loaders.spill import Spill

#: Smallest uncompressed input parsed in parallel (below it a process start costs more than it saves).
PARALLEL_MIN_BYTES = 64 * 2**20
#: Formats without state across lines.
LINE_FORMATS = ("ntriples", "triples")


def process_context() -> multiprocessing.context.BaseContext:
    """``fork`` where there is one (Linux: no re-import of the caller's ``__main__``, which a script without a
    ``__main__`` guard would run again under ``spawn``), else ``spawn``."""
    return multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")


def parallel_parts(path: Path, fmt: str) -> int:
    """How many processes parse ``path`` (1: the ordinary sequential parse)."""
    cpus = os.cpu_count() or 1
    if cpus < 2 or fmt not in LINE_FORMATS or path.stat().st_size < PARALLEL_MIN_BYTES:
        return 1
    with open(path, "rb") as fh:
        if fh.read(2) == GZIP_MAGIC:
            return 1
    return min(cpus, 8)


def line_ranges(path: Path, parts: int) -> list[tuple[int, int]]:
    """``parts`` byte ranges ``[start, end)`` covering ``path``, each starting at the beginning of a line."""
    size = path.stat().st_size
    starts = [0]
    with open(path, "rb") as fh:
        for k in range(1, parts):
            fh.seek(max(size * k // parts, starts[-1]))
            if fh.tell() > 0:
                fh.seek(fh.tell() - 1)
                fh.readline()  # to the end of the line the cut falls in (or right after a newline)
            starts.append(min(fh.tell(), size))
    ends = starts[1:] + [size]
    return [(s, e) for s, e in zip(starts, ends) if e > s]


class _Window:
    """The bytes ``[start, start + length)`` of an open file, read as lines."""

    def __init__(self, raw: BinaryIO, start: int, length: int) -> None:
        raw.seek(start)
        self._raw = raw
        self._left = length

    def readline(self, size: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        limit = self._left if size is None or size < 0 else min(size, self._left)
        line = self._raw.readline(limit)
        self._left -= len(line)
        return line

    def read(self, size: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        data = self._raw.read(self._left if size is None or size < 0 else min(size, self._left))
        self._left -= len(data)
        return data

    def __iter__(self) -> "_Window":
        return self

    def __next__(self) -> bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def close(self) -> None:
        self._raw.close()


class RangeReader(LineReader):
    """A :class:`~loaders.records.LineReader` over one byte range of a plain file (line numbers count
    from the start of the range)."""

    def __init__(self, path: Path, start: int, end: int) -> None:
        super().__init__(path)
        self._stream = _Window(self._raw, start, end - start)  # type: ignore[assignment]


@dataclass
class Part:
    """What one process parsed: its spill files and its share of the file report."""

    folder: Path
    lines: int = 0
    report: dict[str, Any] = field(default_factory=dict)  # FileReport fields: names, literals, types, malformed …
    skipped: dict[str, int] = field(default_factory=dict)
    prop_kinds: dict[str, set[str]] = field(default_factory=dict)
    wrote_anything: bool = False
    over_budget: bool = False


def parse_part(collect: Callable[..., Any], path: Path, fmt: str, keep_all: bool, start: int, end: int,
               folder: Path, error_budget: int | None) -> Part:
    """Parse ``[start, end)`` of ``path`` into spill files under ``folder`` with the loader's record loop
    ``collect`` (:func:`loaders.api.collect`; runs in a worker process)."""
    reader = RangeReader(path, start, end)
    spill = Spill(folder)
    part = Part(folder=folder)
    try:
        report, skipped, part.over_budget = collect(path, fmt, reader, spill, keep_all, error_budget)
    finally:
        spill.close()
    part.lines = reader.lines
    part.report = {"names": report.names, "literals": report.literals, "types": report.types,
                   "malformed_count": report.malformed_count, "malformed": report.malformed}
    part.skipped = dict(skipped)
    part.prop_kinds = spill.prop_kinds
    part.wrote_anything = spill.wrote_anything
    return part


def global_line(message: str, label: str, offset: int) -> str:
    """``label:line: reason`` with ``offset`` added to the line number (a part's line numbers made global)."""
    prefix = label + ":"
    if not offset or not message.startswith(prefix):
        return message
    line, sep, reason = message[len(prefix):].partition(": ")
    return f"{prefix}{int(line) + offset}{sep}{reason}" if line.isdigit() else message
