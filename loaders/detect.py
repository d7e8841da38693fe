"""Which parser reads a file: from its extension when that is unambiguous, else from its content.

* ``.parquet``, ``.jsonl`` (``.jsonl.gz``) → ``rog``; ``.nt`` / ``.ntriples`` (``.gz``) → ``ntriples``;
  ``.tsv`` → ``triples``.
* Anything else (``.txt``, ``.json``, no extension …) is sniffed: the ``PAR1`` magic → ``rog``; a
  first statement line starting with ``{`` → ``rog``; with ``<`` or ``_:`` and ending in ``.`` →
  ``ntriples``; with ``|`` or a TAB → ``triples``. Otherwise :class:`InputError` asks for ``--format``.
"""

from __future__ import annotations

from pathlib import Path

from loaders.records import PARQUET_MAGIC, check_file, head_bytes, text_sample
from sgr.core.errors import InputError

FORMATS = ("rog", "ntriples", "triples")
_BY_SUFFIX = {".parquet": "rog", ".jsonl": "rog", ".nt": "ntriples", ".ntriples": "ntriples", ".tsv": "triples"}


def _suffix(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def sniff(path: Path) -> str | None:
    """The format told by the file's first bytes, or None."""
    if head_bytes(path, 4) == PARQUET_MAGIC:
        return "rog"
    for line in text_sample(path, 5):
        if line.startswith("{"):
            return "rog"
        if line.startswith(("<", "_:")) and line.rstrip().endswith("."):
            return "ntriples"
        if "|" in line or "\t" in line:
            return "triples"
        return None
    return None


def detect_format(path: Path, forced: str | None = None) -> str:
    """``forced`` when given (validated), else the format of ``path`` (see module doc)."""
    if forced:
        if forced not in FORMATS:
            raise InputError(f"unknown format {forced!r}: use one of {', '.join(FORMATS)}")
        return forced
    check_file(path)
    by_ext = _BY_SUFFIX.get(_suffix(path))
    if by_ext:
        return by_ext
    found = sniff(path)
    if found is None:
        raise InputError(f"{path}: cannot tell the format from its name or first lines; "
                         f"pass --format {'|'.join(FORMATS)}")
    return found
