"""What the format parsers yield, and the line reader they share.

A parser turns one file into a stream of records: :class:`Triple` (an edge), :class:`Name` (an
entity's name), :class:`Literal` (a literal property), :class:`EntityType` (the entity's type), :class:`Skipped` (a line dropped on
purpose, e.g. a Freebase housekeeping relation) and :class:`Malformed` (a line that could not be
read, with ``file:line`` and the reason). Malformed lines never stop a parser: the loader counts
them against the ``--max-errors`` budget and loads the rest.

:class:`LineReader` opens plain or gzip-compressed text, decodes each line as UTF-8 on its own (a
line in another encoding becomes one :class:`Malformed` record, the rest of the file still
loads), and raises :class:`sgr.core.errors.InputError` with one line for what cannot be read at all:
a missing file, a folder, UTF-16 text, binary data, a corrupt gzip stream.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Union

from sgr.core.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
UTF8_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class Triple:
    """An edge ``(head)-[:relation]->(tail)``; ids are MIDs or names."""

    head: str
    relation: str
    tail: str


@dataclass(frozen=True, slots=True)
class Name:
    """``entity`` is called ``name`` (Freebase: an English ``type.object.name``)."""

    entity: str
    name: str


@dataclass(frozen=True, slots=True)
class Literal:
    """A literal property ``entity.key = value`` (Freebase: any other literal object)."""

    entity: str
    key: str
    value: Any


@dataclass(frozen=True, slots=True)
class EntityType:
    """``entity`` is an instance of ``type`` (Freebase: ``type.object.type`` or
    ``common.topic.notable_types``); stored in the entity's ``types`` list."""

    entity: str
    type: str
    relation: str = "type.object.type"


@dataclass(frozen=True, slots=True)
class Skipped:
    """A well-formed line left out on purpose (``what``: e.g. the housekeeping relation's name)."""

    what: str
    reason: str


@dataclass(frozen=True, slots=True)
class Malformed:
    """A line that could not be parsed."""

    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


Record = Union[Triple, Name, Literal, EntityType, Skipped, Malformed]


def check_file(path: Path) -> None:
    """Raise :class:`InputError` unless ``path`` is a readable, non-empty regular file."""
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a folder; pass the files in it (e.g. {path}/*.nt.gz)")
    if not os.access(path, os.R_OK):
        raise InputError(f"{path}: not readable (check its permissions)")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty")


def head_bytes(path: Path, n: int = 4096) -> bytes:
    """The first ``n`` bytes of the file, decompressed when it is gzip."""
    with open(path, "rb") as fh:
        start = fh.read(n)
    if start[:2] == GZIP_MAGIC:
        try:
            with gzip.open(path, "rb") as gz:
                return gz.read(n)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{path}: not a valid gzip file ({exc})") from exc
    return start


class LineReader:
    """Iterate ``(line_number, text)`` over a text file; ``position`` is the raw bytes read so far.

    ``text`` is a :class:`Malformed` record when the line is not valid UTF-8.
    """

    def __init__(self, path: Path) -> None:
        check_file(path)
        self.path = path
        self.label = str(path)
        self.lines = 0
        self._raw: BinaryIO = open(path, "rb")
        start = self._raw.read(4)
        self._raw.seek(0)
        self.compressed = start[:2] == GZIP_MAGIC
        sample = head_bytes(path)
        if sample[:2] in UTF16_BOMS:
            self._raw.close()
            raise InputError(f"{path}: the file is UTF-16 text; convert it to UTF-8 "
                             f"(e.g. iconv -f UTF-16 -t UTF-8 {path.name} > {path.stem}.utf8{path.suffix})")
        if sample[:4] == PARQUET_MAGIC or b"\x00" in sample:
            self._raw.close()
            raise InputError(f"{path}: binary data, not a text file of triples (wrong --format?)")
        self._stream: BinaryIO = gzip.GzipFile(fileobj=self._raw) if self.compressed else self._raw  # type: ignore[assignment]

    @property
    def position(self) -> int:
        try:
            return self._raw.tell()
        except (ValueError, OSError):
            return 0

    @property
    def size(self) -> int:
        return self.path.stat().st_size

    def close(self) -> None:
        self._stream.close()
        self._raw.close()

    def __iter__(self) -> Iterator[tuple[int, str | Malformed]]:
        n = 0
        try:
            for n, raw in enumerate(self._stream, start=1):
                self.lines = n
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    yield n, Malformed(self.label, n, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column "
                                                      f"{exc.start + 1}); re-encode the file as UTF-8")
                    continue
                if n == 1 and text.startswith(UTF8_BOM):
                    text = text[1:]
                yield n, text.rstrip("\r\n")
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{self.path}: corrupt or truncated gzip data after line {n} ({exc})") from exc
        finally:
            self.close()


def open_lines(path: Path) -> LineReader:
    """A :class:`LineReader` on ``path`` (see module doc)."""
    return LineReader(path)


def text_sample(path: Path, lines: int = 20) -> list[str]:
    """Up to ``lines`` non-blank, non-comment lines from the start of the file (for format sniffing)."""
    data = head_bytes(path, 64 * 1024)
    out = []
    for raw in io.BytesIO(data):
        text = raw.decode("utf-8", errors="replace").lstrip(UTF8_BOM).strip()
        if text and not text.startswith("#"):
            out.append(text)
            if len(out) >= lines:
                break
    return out
