"""Loading files into Neo4j: the one function the CLI (``sgr load``) and the benchmark call.

:func:`load_files` checks every path first (a missing file fails before anything is written),
checks that Neo4j answers, then for each file in turn:

1. skips it when a ``(:Source {path})`` with the same SHA-256 says it is already loaded
   (``force=True`` loads it again; the writer's ``MERGE`` path keeps counts unchanged);
2. parses it with the parser of its format (:mod:`loaders.detect`) into spill files sorted on
   disk (:mod:`loaders.spill`: bounded memory whatever the input size), counting malformed lines
   against the run's ``max_errors`` budget: past the budget the load stops with
   :class:`LoadError` before that file is written (files before it stay loaded);
3. streams the sorted entities and triples into Neo4j (:func:`loaders.writer.write_stream`) and,
   once all of it is committed, records the ``(:Source {path, sha256, triples, loaded_at})`` node.

With ``bulk`` (``sgr load … --bulk``, or chosen for a large input into an empty database) every
file is parsed first and the whole input imported at once by neo4j-admin (:mod:`loaders.bulk`).

A load killed at any point is completed by running the same command again (see
:mod:`loaders.writer` for why the counts are then exact).
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from neo4j.exceptions import Neo4jError

from loaders import bulk as bulk_load
from loaders import ntriples, parallel, rog, triples
from loaders.detect import detect_format
from loaders.records import (UTF8_BOM, EntityType, LineReader, Literal, Malformed, Name, Record, Skipped, Triple,
                             check_file, too_long)
from loaders.spill import SortedSpill, Spill, count_entities, edge_rows, entity_groups, sort_parts
from loaders.writer import DEFAULT_BATCH_SIZE, DEFAULT_WORKERS, WriteStats, record_source, write_stream
from sgr.core.errors import InputError, LoadError, Neo4jUnavailable
from sgr.core.files import sha256_file
from sgr.core.text import check_utf8, visible
from sgr.graph.store import GraphStore

#: Default error budget: malformed lines tolerated in one run before it stops.
DEFAULT_MAX_ERRORS = 100
#: Malformed lines kept (and shown) per file; the rest are only counted.
KEEP_MALFORMED = 20
#: Input size from which ``bulk=None`` chooses the bulk path (about 1.5M Freebase N-Triples lines).
BULK_AUTO_MIN_BYTES = 200_000_000
#: Assumed expansion of a ``.gz`` input when sizing it.
GZIP_RATIO = 8


class LoadProgress:
    """Callbacks for a progress display; the default does nothing."""

    def file_started(self, path: Path, fmt: str, size_bytes: int) -> None: ...
    def parsed_bytes(self, position: int) -> None: ...
    def write_started(self, triples: int) -> None: ...
    def written(self, triples: int) -> None: ...
    def file_done(self, report: "FileReport") -> None: ...
    def notice(self, message: str) -> None: ...


@dataclass
class FileReport:
    """What happened to one file."""

    path: str
    format: str
    sha256: str
    status: str = "loaded"  # loaded | unchanged (already loaded, same sha256)
    lines: int = 0
    triples: int = 0  # distinct triples in the file
    entities: int = 0
    cvts: int = 0
    names: int = 0
    literals: int = 0
    types: int = 0  # entity-type statements (type.object.type, common.topic.notable_types)
    new_entities: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    malformed_count: int = 0
    malformed: list[str] = field(default_factory=list)  # first KEEP_MALFORMED, as "file:line: reason"
    parse_seconds: float = 0.0
    write_seconds: float = 0.0

    @property
    def seconds(self) -> float:
        return self.parse_seconds + self.write_seconds

    @property
    def triples_per_s(self) -> float:
        return self.triples / self.seconds if self.seconds else 0.0

    @property
    def skipped_count(self) -> int:
        return sum(self.skipped.values())


@dataclass
class LoadReport:
    """What :func:`load_files` did, file by file."""

    files: list[FileReport]
    seconds: float
    bulk: Any = None  # a loaders.bulk.BulkResult when the bulk path ran

    @property
    def triples(self) -> int:
        return sum(f.triples for f in self.files if f.status == "loaded")

    @property
    def triples_per_s(self) -> float:
        return self.triples / self.seconds if self.seconds else 0.0

    @property
    def malformed_count(self) -> int:
        return sum(f.malformed_count for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "triples": self.triples, "triples_per_s": self.triples_per_s,
                "files": [asdict(f) for f in self.files],
                "bulk": asdict(self.bulk) if self.bulk is not None else None}


def iter_records(path: Path, fmt: str, keep_all: bool = False,
                 reader: LineReader | None = None) -> Iterator[Record]:
    """The records of ``path`` read with the parser of ``fmt``."""
    if fmt == "triples":
        return triples.parse(path, reader)
    if fmt == "ntriples":
        return ntriples.parse(path, keep_all, reader)
    if fmt == "rog":
        return rog.parse(path, reader)
    raise InputError(f"unknown format {fmt!r}")


def _printable(text: str, limit: int = 300) -> str:
    """``text`` on one line: control and other non-printable characters escaped, cut at ``limit`` characters."""
    out = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return out if len(out) <= limit else out[:limit] + "…"


class _Collector:
    """The record loop of :func:`collect`: each record into the spill and the file's report."""

    def __init__(self, path: Path, spill: Spill, error_budget: int | None) -> None:
        self.path, self.spill, self.error_budget = path, spill, error_budget
        self.report = FileReport(path=str(path), format="", sha256="")
        self.skipped: Counter[str] = Counter()
        self.records = 0  # records read by the record loop

    def take(self, rec: Record, line: int) -> bool:
        """Add ``rec`` (read at ``line``); True once the malformed lines pass the error budget."""
        kind = type(rec)
        if kind is not Skipped and kind is not Malformed:
            why = too_long(rec)  # a stated maximum, checked before anything of the file is written
            if why is not None:
                rec, kind = Malformed(str(self.path), line, why), Malformed
        report, spill = self.report, self.spill
        if kind is Triple:
            spill.triple(rec.head, rec.relation, rec.tail)
        elif kind is Name:
            report.names += 1
            spill.name(rec.entity, rec.name)
        elif kind is Literal:
            report.literals += 1
            spill.literal(rec.entity, rec.key, rec.value)
        elif kind is EntityType:
            report.types += 1
            spill.entity_type(rec.entity, rec.type)
        elif kind is Skipped:
            self.skipped[rec.what] += 1
        elif kind is Malformed:
            report.malformed_count += 1
            if len(report.malformed) < KEEP_MALFORMED:
                report.malformed.append(str(rec))
            if self.error_budget is not None and report.malformed_count > self.error_budget:
                report.lines = line
                return True
        return False

    def block(self, block: ntriples.Block, label: str, keep_all: bool) -> bool:
        """A block of N-Triples lines (:func:`loaders.ntriples.parse_block`): its common lines at once, the
        others record by record. Names (and types) of one entity keep their input order: when some of the
        block's are read line by line, all of its names (types) go through the record loop in line order."""
        rest = [(n, rec) for n, text in block.rest for rec in ntriples.line_records(text, n, label, keep_all)]
        kinds = {type(rec) for _, rec in rest}
        merged = []
        if Name in kinds:
            merged += block.name_records()
            block.names = (block.names[0].slice(0, 0),) * 3
        if EntityType in kinds:
            merged += block.type_records()
            block.types = (block.types[0].slice(0, 0),) * 4
        self.report.names += len(block.names[1])
        self.report.types += len(block.types[1])
        self.skipped.update(block.skipped)
        self.spill.columns(block)
        if merged:
            rest = sorted(rest + merged, key=lambda item: item[0])
        for n, rec in rest:
            if self.take(rec, n):
                return True
        return False


def collect(path: Path, fmt: str, reader: LineReader | None, spill: Spill, keep_all: bool = False,
            error_budget: int | None = None, progress: LoadProgress | None = None
            ) -> tuple[FileReport, Counter[str], bool]:
    """The records of ``path`` (read by ``reader``) appended to ``spill``: the file's report, the skipped
    relations, and whether it stopped at a malformed line past ``error_budget``. N-Triples is read in blocks
    of lines (:meth:`LineReader.blocks`, :func:`loaders.ntriples.parse_block`), other formats record by record."""
    c = _Collector(path, spill, error_budget)
    c.report.format = fmt
    n = 0
    if fmt == "ntriples" and reader is not None:
        stopped = _collect_blocks(c, reader, keep_all, progress)
    else:
        stopped = _collect_records(c, iter_records(path, fmt, keep_all, reader), reader, progress)
        n = c.records
    if not stopped:
        c.report.lines = reader_lines(reader, n)
    return c.report, c.skipped, stopped


def _collect_records(c: _Collector, records: Iterator[Record], reader: LineReader | None,
                     progress: LoadProgress | None) -> bool:
    """:func:`collect` record by record (plain triples, RoG): True when it stopped past the error budget. A
    triple within the stated maximums goes straight to the spill (the loop a small file spends its parse in);
    every other record through :meth:`_Collector.take`."""
    add_triple, take = c.spill.triple, c.take
    report_every = 16384 if progress is not None and reader is not None else 0
    n = 0
    for n, rec in enumerate(records, start=1):
        if type(rec) is Triple and too_long(rec) is None:
            add_triple(rec.head, rec.relation, rec.tail)
        elif take(rec, reader_lines(reader, n)):
            c.records = n
            return True
        if report_every and not n % report_every:
            progress.parsed_bytes(reader.position)
    c.records = n
    return False


def _collect_blocks(c: _Collector, reader: LineReader, keep_all: bool, progress: LoadProgress | None) -> bool:
    """:func:`collect` for N-Triples: True when it stopped past the error budget."""
    label = reader.label
    for item in reader.blocks():
        if type(item) is Malformed:
            if c.take(item, item.line):
                return True
            continue
        first, raw = item
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:  # line by line, so only the bad lines are lost
            for k, line in enumerate(raw.split(b"\n")[:raw.count(b"\n") + (not raw.endswith(b"\n"))]):
                decoded = reader.decoded(line, first + k)
                records = ((decoded,) if type(decoded) is Malformed
                           else ntriples.line_records(decoded, first + k, label, keep_all))
                for rec in records:
                    if c.take(rec, first + k):
                        return True
            continue
        if first == 1 and raw.startswith(UTF8_BOM.encode()):
            raw = raw[3:]
        if c.block(ntriples.parse_block(raw, first, keep_all), label, keep_all):
            return True
        if progress is not None:
            progress.parsed_bytes(reader.position)
    return False


def over_budget(path: Path, fmt: str, count: int, first: str) -> LoadError:
    return LoadError(f"{path}: stopped after {count} malformed lines (over the --max-errors "
                     f"budget); nothing from this file was written (is it really {fmt}? try --format); "
                     f"first: {_printable(first)}")


def parse_file(path: Path, fmt: str, workdir: Path, keep_all: bool = False, error_budget: int | None = None,
               progress: LoadProgress | None = None) -> tuple[SortedSpill, FileReport]:
    """Parse one file into sorted spill files under ``workdir`` (:mod:`loaders.spill`, bounded
    memory; a large plain file in parallel, :mod:`loaders.parallel`); raise :class:`LoadError` past
    ``error_budget`` bad lines, before anything is written."""
    t0 = time.perf_counter()
    parts = parallel.parallel_parts(path, fmt)
    if parts > 1:
        report, skipped, wrote_anything, sort = _parse_parallel(path, fmt, workdir, keep_all, error_budget, parts)
    else:
        spill = Spill(workdir)
        reader = None if (fmt == "rog" and rog.is_parquet(path)) else LineReader(path)
        try:
            report, skipped, stopped = collect(path, fmt, reader, spill, keep_all, error_budget, progress)
        finally:
            spill.close()
        if stopped:
            raise over_budget(path, fmt, report.malformed_count, report.malformed[0])
        wrote_anything, sort = spill.wrote_anything, spill.sort
    if progress is not None:
        progress.parsed_bytes(path.stat().st_size)
    report.skipped = dict(skipped.most_common())
    if not wrote_anything:
        if report.malformed_count:
            raise LoadError(f"{path}: no valid line; first bad line: {report.malformed[0]}")
        if skipped:
            raise InputError(f"{path}: every statement is a housekeeping relation "
                             f"({', '.join(list(report.skipped)[:3])} …); use --keep-all to load them")
        raise InputError(f"{path}: no triples found (only blank or comment lines)")
    done = sort()
    report.triples = done.triples
    report.entities, report.cvts = count_entities(done.nodes)
    report.parse_seconds = time.perf_counter() - t0
    return done, report


def _parse_parallel(path: Path, fmt: str, workdir: Path, keep_all: bool, error_budget: int | None,
                    parts: int) -> tuple[FileReport, Counter[str], bool, Callable[[], SortedSpill]]:
    """:func:`parse_file`'s parse on ``parts`` processes (:mod:`loaders.parallel`)."""
    ranges = parallel.line_ranges(path, parts)
    with ProcessPoolExecutor(len(ranges), mp_context=parallel.process_context()) as pool:
        done = list(pool.map(parallel.parse_part, *zip(*[
            (collect, path, fmt, keep_all, start, end, workdir / f"part{k}", error_budget)
            for k, (start, end) in enumerate(ranges)])))
    report = FileReport(path=str(path), format=fmt, sha256="")
    skipped: Counter[str] = Counter()
    offset = 0
    for part in done:
        for key in ("names", "literals", "types", "malformed_count"):
            setattr(report, key, getattr(report, key) + part.report[key])
        room = KEEP_MALFORMED - len(report.malformed)
        report.malformed += [parallel.global_line(m, str(path), offset) for m in part.report["malformed"][:room]]
        skipped.update(part.skipped)
        offset += part.lines
    report.lines = offset
    if error_budget is not None and report.malformed_count > error_budget:
        raise over_budget(path, fmt, report.malformed_count, report.malformed[0])
    kinds: dict[str, set[str]] = {}
    for part in done:
        for key, seen in part.prop_kinds.items():
            kinds.setdefault(key, set()).update(seen)
    return (report, skipped, any(p.wrote_anything for p in done),
            lambda: sort_parts([p.folder for p in done], workdir, kinds))


def reader_lines(reader: LineReader | None, records: int) -> int:
    """Lines read (records for Parquet, where there is no line reader)."""
    return reader.lines if reader is not None else records


def already_loaded(store: GraphStore, path: str, sha256: str) -> bool:
    rows = store.read("MATCH (s:Source {path: $p}) RETURN s.sha256 AS sha", {"p": path})
    return bool(rows) and rows[0]["sha"] == sha256


def load_files(store: GraphStore, paths: Sequence[str | Path], fmt: str | None = None, keep_all: bool = False,
               max_errors: int = DEFAULT_MAX_ERRORS, batch_size: int = DEFAULT_BATCH_SIZE,
               workers: int = DEFAULT_WORKERS, force: bool = False, bulk: bool | None = False,
               progress: LoadProgress | None = None) -> LoadReport:
    """Load ``paths`` into ``store`` (see module doc) and report what happened per file.

    ``bulk``: True imports through neo4j-admin (:mod:`loaders.bulk`; an empty database served by
    the embedded server), False writes transactions, None chooses the bulk path for a large input
    (:data:`BULK_AUTO_MIN_BYTES`) into an empty embedded database, saying so through ``progress``.
    """
    t0 = time.perf_counter()
    if max_errors < 0:
        raise InputError("--max-errors must be 0 or more")
    if batch_size < 1:
        raise InputError("--batch-size must be at least 1")
    if workers < 1:
        raise InputError("--workers must be at least 1")
    if not paths:
        raise InputError("no files given")
    files = [Path(p).expanduser() for p in paths]
    for path in files:
        check_file(path)
        check_utf8(str(path.resolve()), f"the file name {visible(path)}")  # recorded in (:Source {path}) as text
    formats = [detect_format(path, fmt) for path in files]
    store.verify()
    if bulk is None:
        bulk = choose_bulk(store, files, progress)
    elif bulk:
        bulk_load.check_bulk_possible(store)

    reports: list[FileReport] = []
    parsed: list[tuple[FileReport, SortedSpill]] = []
    budget_left = max_errors
    with tempfile.TemporaryDirectory(prefix="sgr-load-") as tmp:
        for i, (path, file_fmt) in enumerate(zip(files, formats)):
            key = str(path.resolve())
            sha = sha256_file(path)
            if progress:
                progress.file_started(path, file_fmt, path.stat().st_size)
            if not force and already_loaded(store, key, sha):
                rep = FileReport(path=key, format=file_fmt, sha256=sha, status="unchanged")
                reports.append(rep)
                if progress:
                    progress.file_done(rep)
                continue
            spill, rep = parse_file(path, file_fmt, Path(tmp) / str(i), keep_all, budget_left, progress)
            budget_left -= rep.malformed_count
            rep.path, rep.sha256 = key, sha
            reports.append(rep)
            if bulk:  # everything is imported at once, after the last file is parsed
                parsed.append((rep, spill))
                continue
            if progress:
                progress.write_started(rep.triples)
            stats = _write(store, path, spill, rep.entities, batch_size, workers,
                           progress.written if progress else None)
            rep.new_entities = stats.new_entities
            rep.write_seconds = stats.seconds
            _record(store, rep)
            if progress:
                progress.file_done(rep)
        if bulk and parsed:
            result = bulk_load.bulk_import(store, parsed, Path(tmp) / "bulk", batch_size, progress)
            for rep, _ in parsed:
                _record(store, rep)
                if progress:
                    progress.file_done(rep)
            return LoadReport(files=reports, seconds=time.perf_counter() - t0, bulk=result)
    return LoadReport(files=reports, seconds=time.perf_counter() - t0)


def choose_bulk(store: GraphStore, files: Sequence[Path], progress: LoadProgress | None) -> bool:
    """The automatic choice: bulk for at least :data:`BULK_AUTO_MIN_BYTES` of input (gzip counted
    ×:data:`GZIP_RATIO`) into an empty database served by the embedded server."""
    size = sum(p.stat().st_size * (GZIP_RATIO if p.suffix == ".gz" else 1) for p in files)
    if size < BULK_AUTO_MIN_BYTES:
        return False
    why_not = bulk_load.bulk_unavailable(store)
    if why_not:
        if progress:
            progress.notice(f"large input ({size / 1e6:,.0f} MB) but the transactional path is used: {why_not}")
        return False
    if progress:
        progress.notice(f"large input ({size / 1e6:,.0f} MB) into an empty database: using the bulk path "
                        f"(neo4j-admin import; the embedded server restarts); --no-bulk writes transactions")
    return True


def _record(store: GraphStore, rep: FileReport) -> None:
    try:
        record_source(store, rep.path, rep.sha256, rep.triples, format=rep.format, entities=rep.entities,
                      literals=rep.literals, malformed=rep.malformed_count)
    except Neo4jError as exc:
        raise LoadError(f"{rep.path}: could not record the load ({exc.message or exc})") from exc


def _write(store: GraphStore, path: Path, spill: SortedSpill, entities: int, batch_size: int, workers: int,
           progress: Callable[[int], None] | None) -> WriteStats:
    try:
        return write_stream(store, entity_groups(spill.nodes), edge_rows(spill.edges, by_count=True), spill.triples,
                            batch_size=batch_size, workers=workers, progress=progress, entities_hint=entities)
    except Neo4jUnavailable:
        raise
    except Neo4jError as exc:
        raise LoadError(f"{path}: Neo4j rejected a write ({exc.code}: {exc.message}); what was committed "
                        f"stays, run the same command again to finish the load") from exc
