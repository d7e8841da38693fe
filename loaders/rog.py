"""RoG-style question records (JSONL, or Parquet as on the public RoG datasets).

Each record is one question with a ``graph`` field: a list of ``[head, relation, tail]`` triples
(Luo et al., "Reasoning on Graphs", ICLR 2024, data format of ``rmanluo/RoG-webqsp``). Heads and
tails are entity names, or MIDs (``m.…``) for compound-value nodes that have no name. The loader
merges every record's graph into one graph (a triple seen in many questions is stored once).

JSONL: one JSON object per line; the line number is the record's place. Parquet: read with
pyarrow, only the ``graph`` column, a row group at a time; the "line" is the 1-based row number.
A record that is not an object, has no ``graph`` list, or holds an entry that is not a list of three
non-empty strings (a JSON object with three keys is not a triple) gives a :class:`~loaders.records.Malformed`
record; its other triples still load.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loaders.records import PARQUET_MAGIC, LineReader, Malformed, Record, Triple, check_file
from sgr.core.errors import InputError

FORMAT = "rog"
GRAPH_FIELD = "graph"


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def graph_records(graph: Any, label: str, line: int) -> Iterator[Record]:
    """Triples of one record's ``graph`` value, with a Malformed record per bad entry."""
    if graph is None:
        yield Malformed(label, line, f"no `{GRAPH_FIELD}` field")
        return
    if not isinstance(graph, (list, tuple)):  # a JSON array (Parquet lists come as lists too), not an object
        yield Malformed(label, line, f"`{GRAPH_FIELD}` must be a list of [head, relation, tail], got {_short(graph)}")
        return
    for i, entry in enumerate(graph):
        if not isinstance(entry, (list, tuple)):  # an object's keys are not a triple
            yield Malformed(label, line, f"{GRAPH_FIELD}[{i}]: expected [head, relation, tail], got {_short(entry)}")
            continue
        parts = list(entry)
        if len(parts) != 3 or not all(isinstance(p, str) for p in parts):
            yield Malformed(label, line, f"{GRAPH_FIELD}[{i}]: expected [head, relation, tail] strings, "
                                         f"got {_short(parts)}")
            continue
        head, relation, tail = (p.strip() for p in parts)
        if not head or not relation or not tail:
            yield Malformed(label, line, f"{GRAPH_FIELD}[{i}]: empty head, relation or tail")
            continue
        yield Triple(head, relation, tail)


def parse_jsonl(path: Path, reader: LineReader | None = None) -> Iterator[Record]:
    """Records of a JSONL file of RoG questions."""
    reader = reader or LineReader(path)
    label = reader.label
    for n, text in reader:
        if isinstance(text, Malformed):
            yield text
            continue
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            yield Malformed(label, n, f"invalid JSON ({exc.msg} at column {exc.colno})")
            continue
        except RecursionError:  # json gives up on very deep nesting this way
            yield Malformed(label, n, "invalid JSON (nested too deeply)")
            continue
        if not isinstance(obj, dict):
            yield Malformed(label, n, f"expected a JSON object with a `{GRAPH_FIELD}` field, got {type(obj).__name__}")
            continue
        yield from graph_records(obj.get(GRAPH_FIELD), label, n)


def parse_parquet(path: Path) -> Iterator[Record]:
    """Records of a Parquet file with a ``graph`` column (row number as line)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    check_file(path)
    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from exc
    names = pf.schema_arrow.names
    if GRAPH_FIELD not in names:
        raise InputError(f"{path}: no `{GRAPH_FIELD}` column (columns: {', '.join(names)})")
    label = str(path)
    row = 0
    try:
        for rb in pf.iter_batches(columns=[GRAPH_FIELD], batch_size=1024):
            for graph in rb.column(0).to_pylist():
                row += 1
                yield from graph_records(graph, label, row)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path}: unreadable Parquet data after row {row} ({exc})") from exc


def is_parquet(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(4) == PARQUET_MAGIC


def parse(path: Path, reader: LineReader | None = None) -> Iterator[Record]:
    """Yield the records of a RoG file, JSONL or Parquet (told apart by the ``PAR1`` magic)."""
    check_file(path)
    if is_parquet(path):
        return parse_parquet(path)
    return parse_jsonl(path, reader)
