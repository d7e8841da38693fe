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

Stated maximums (memory and the store's index limits stay bounded whatever a file holds):

* a line is at most :data:`MAX_LINE_BYTES`; a longer one becomes one :class:`Malformed` record and is skipped in
  bounded memory (a gzip that inflates to one 1 GB line no longer takes gigabytes);
* gzip input may expand at most :data:`MAX_GZIP_RATIO` times (text dumps expand about 10×; a stream of
  newlines or one endless line, about 1000×): past that the file is refused with :class:`InputError`, within
  the first few MiB;
* an entity id, name or type is at most :data:`MAX_NAME_CHARS` characters and a relation name (or a literal's
  property key) at most :data:`MAX_RELATION_CHARS` (:func:`too_long`): a longer one is a :class:`Malformed` line,
  found while parsing, before anything of the file is written (Neo4j cannot index a value over 8 KB, so such a
  name failed only after the relationships were committed).
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
#: Longest line read (bytes): a RoG record of thousands of triples takes a few MB.
MAX_LINE_BYTES = 64 * 2**20
#: Bytes read at a time by :meth:`LineReader.blocks` (whole lines, parsed together by vectorised kernels).
BLOCK_BYTES = 8 * 2**20
#: Most a gzip input may expand (decompressed bytes per compressed byte), checked from 1 MiB read on, every
#: 4,096 lines and every MiB of an over-long line.
MAX_GZIP_RATIO = 200
_RATIO_CHECK_BYTES = 2**20
#: Longest entity id, name or type (characters): 2,000 characters are at most 8,000 UTF-8 bytes, under the
#: 8,167-byte key limit of Neo4j's range indexes on ``Entity.id`` and ``Entity.name``.
MAX_NAME_CHARS = 2_000
#: Longest relation name or literal property key (characters); Freebase's are under 100.
MAX_RELATION_CHARS = 1_000


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


def too_long(rec: Record) -> str | None:
    """Why ``rec`` breaks a stated maximum (:data:`MAX_NAME_CHARS`, :data:`MAX_RELATION_CHARS`), or None."""
    kind = type(rec)
    if kind is Triple:
        fields = (("head", rec.head, MAX_NAME_CHARS), ("relation", rec.relation, MAX_RELATION_CHARS),
                  ("tail", rec.tail, MAX_NAME_CHARS))
    elif kind is Name:
        fields = (("entity", rec.entity, MAX_NAME_CHARS), ("name", rec.name, MAX_NAME_CHARS))
    elif kind is EntityType:
        fields = (("entity", rec.entity, MAX_NAME_CHARS), ("type", rec.type, MAX_NAME_CHARS))
    elif kind is Literal:
        fields = (("entity", rec.entity, MAX_NAME_CHARS), ("property", rec.key, MAX_RELATION_CHARS))
    else:
        return None
    for what, value, limit in fields:
        if len(value) > limit:
            return f"the {what} is {len(value):,} characters long; the limit is {limit:,}"
    return None


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

    def __init__(self, path: Path, max_line_bytes: int | None = None) -> None:
        check_file(path)
        self.path = path
        self.max_line_bytes = max_line_bytes or MAX_LINE_BYTES
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
        limit = self.max_line_bytes
        readline = self._stream.readline
        inflated = 0
        try:
            while True:
                raw = readline(limit + 1)
                if not raw:
                    break
                n += 1
                self.lines = n
                inflated += len(raw)
                if len(raw) > limit and not raw.endswith(b"\n"):
                    inflated += self._skip_rest_of_line(inflated)
                    yield n, Malformed(self.label, n, f"the line is longer than {limit:,} bytes (the limit); skipped")
                    continue
                if self.compressed and not n & 4095 and inflated > _RATIO_CHECK_BYTES:
                    self._check_ratio(inflated, n)
                yield n, self.decoded(raw, n)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{self.path}: corrupt or truncated gzip data after line {n} ({exc})") from exc
        finally:
            self.close()

    def decoded(self, raw: bytes, n: int) -> str | Malformed:
        """Line ``n`` as text without its line break (a :class:`Malformed` record when it is not UTF-8)."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return Malformed(self.label, n, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column "
                                            f"{exc.start + 1}); re-encode the file as UTF-8")
        if n == 1 and text.startswith(UTF8_BOM):
            text = text[1:]
        return text.rstrip("\r\n")

    def blocks(self, size: int | None = None) -> Iterator[tuple[int, bytes] | Malformed]:
        """The file as blocks of whole lines, about ``size`` bytes each: ``(number of its first line, bytes)``,
        each block ending with a line break (the last one perhaps not). A line over :data:`MAX_LINE_BYTES` is a
        :class:`Malformed` record in its place and skipped in bounded memory, as in line-by-line reading; gzip
        input is held to :data:`MAX_GZIP_RATIO` the same way. ``lines`` counts the lines handed out."""
        limit = self.max_line_bytes
        size = size or BLOCK_BYTES
        read = self._stream.read
        carry = b""
        inflated = 0
        n = 0
        try:
            while True:
                data = read(size)
                inflated += len(data)
                if self.compressed and inflated > _RATIO_CHECK_BYTES:
                    self._check_ratio(inflated, n)
                buf = carry + data if carry else data
                carry = b""
                if not data:
                    if buf:
                        n += 1
                        self.lines = n
                        yield n, buf
                    break
                first = buf.find(b"\n")
                if (first if first >= 0 else len(buf)) > limit:  # the next line is over-long: skip it whole
                    n += 1
                    self.lines = n
                    yield Malformed(self.label, n, f"the line is longer than {limit:,} bytes (the limit); skipped")
                    if first < 0:
                        inflated += self._skip_rest_of_line(inflated)
                    else:
                        carry = buf[first + 1:]
                    continue
                cut = buf.rfind(b"\n") + 1
                if cut == 0:
                    carry = buf
                    continue
                block, carry = buf[:cut], buf[cut:]
                start = n + 1
                n += block.count(b"\n")
                self.lines = n
                yield start, block
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{self.path}: corrupt or truncated gzip data after line {n} ({exc})") from exc
        finally:
            self.close()

    def _skip_rest_of_line(self, inflated: int) -> int:
        """Read past the rest of an over-long line in 1 MiB pieces (bounded memory); return the bytes read."""
        skipped = 0
        while True:
            piece = self._stream.readline(2**20)
            skipped += len(piece)
            if self.compressed and inflated + skipped > _RATIO_CHECK_BYTES:
                self._check_ratio(inflated + skipped, self.lines)
            if not piece or piece.endswith(b"\n"):
                return skipped

    def _check_ratio(self, inflated: int, line: int) -> None:
        """Refuse gzip data that expands more than :data:`MAX_GZIP_RATIO` times (a decompression bomb)."""
        packed = max(self.position, 1)
        if inflated > MAX_GZIP_RATIO * packed:
            raise InputError(f"{self.path}: the gzip data expands more than {MAX_GZIP_RATIO}× ({inflated:,} bytes "
                             f"from {packed:,} by line {line:,}); text dumps expand about 10×, so it is refused as a "
                             "decompression bomb")

def line_array(raw: bytes) -> Any:
    """The lines of ``raw`` (whole lines, valid UTF-8) as a pyarrow string array without copying, each value with
    its line break (one is added to a last line without one)."""
    import numpy as np
    import pyarrow as pa

    if not raw.endswith(b"\n"):
        raw += b"\n"
    ends = np.flatnonzero(np.frombuffer(raw, np.uint8) == 10) + 1
    offsets = np.concatenate([np.zeros(1, np.int64), ends]).astype(np.int32)
    return pa.StringArray.from_buffers(len(ends), pa.py_buffer(offsets), pa.py_buffer(raw))


def joined_lines(lines: Any) -> Any:
    """A pyarrow string array of lines (each with its line break) as one bytes buffer, to write."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(lines):
        return b""
    whole = pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()), lines)  # a block: far under 2 GiB
    return pc.binary_join(whole, "")[0].as_buffer()


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
