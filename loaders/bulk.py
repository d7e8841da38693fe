"""The bulk path (``sgr load freebase --bulk``): neo4j-admin import CSV from the sorted spill files.

For an empty database served by the embedded server, the parsed input (every file, sorted and
de-duplicated on disk by :mod:`loaders.spill`) becomes the importer's CSV, streamed, in bounded
memory:

* ``nodes.<i>.header.csv`` + ``nodes.<i>.csv``: the node number ``:ID`` (the entity's rank in the sorted
  ``nodes`` spill, 0, 1, 2 …, imported with ``--id-type=actual``: the importer needs no id map), ``id`` (the
  entity id), ``name``, ``:LABEL`` (``Entity`` or ``Entity;CVT``), ``types:string[]`` and a typed column for
  each literal property key of the file's rows whose values all have one scalar type in the whole
  input (``:long``, ``:double``, ``:boolean``, ``:string``; the spill records the kinds seen). Each
  file holds the rows with one set of literal columns (:class:`loaders.nodecsv.NodeFiles`, which writes them). Past
  :data:`ACTUAL_IDS_MAX_ENTITIES` entities the entity id itself is the key (``id:ID``, ``--id-type=string``).
* ``rels.header.csv`` + ``rels.csv``: ``:START_ID,:END_ID,:TYPE``, one line per distinct triple, the end
  nodes as numbers (:func:`write_relationship_csv` finds the ranks by binary search in the sorted entity ids,
  pyarrow column batches), **the most frequent relation types first**: the importer links the relationships of a
  dense node (50 or more) through a list of its types that it walks from the type seen first at that node,
  so with thousands of types (Freebase) input grouped by type name walked the whole list for every
  relationship of a hub (see ``bench/experiments/loading-profile.md``: linking 6× faster in this order).
* ``fixups.jsonl``: what a CSV column cannot carry exactly (a key with values of several types, a
  multi-valued literal, an empty string, a list element holding the array delimiter, a key the
  header syntax cannot name); set with Cypher after the import, so the graph is the same as the
  transactional path's.

The node files and the relationship file are written at once, each in a helper process of its own
(:data:`HELPER_MIN_TRIPLES`), while :func:`sgr.graph.bulk.server_stopped` stops the server; the importer
runs, the server starts again. Then the same schema (constraints, full-text index), ``(:Relation)``
vocabulary and ``(:Source)`` records as the transactional path are written (the caller records the
sources), so ``sgr stats`` reads the same either way.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from loaders import parallel
from loaders.records import LineReader, joined_lines, line_array
from loaders.nodecsv import column_plan, spans_lines, write_node_csv, write_node_csv_blocks
from loaders.spill import SortedSpill, entity_groups, merge_sorted, unescape
from loaders.writer import build_schema, entity_count, iter_chunks, write_relation_vocabulary
from sgr.core.config import LoadSettings, read_settings
from sgr.core.errors import LoadError
from sgr.graph.bulk import ImportSummary, embedded_server_for, run_import, server_stopped
from sgr.graph.store import GraphStore

#: Most entities imported with node numbers: the relationship writer holds every entity id (a helper process,
#: the id's bytes and 4 more per entity: about 400 MB of Freebase MIDs at this size); above it the entity ids
#: are the importer's keys.
ACTUAL_IDS_MAX_ENTITIES = 25_000_000
#: From this many triples the node files and the relationship file are written by two helper processes at once.
HELPER_MIN_TRIPLES = 200_000
#: Bytes of the ``edges`` spill read per step of the relationship writer.
REL_BLOCK_BYTES = 16 * 2**20
FIXUP_QUERY = "UNWIND $rows AS row MATCH (e:Entity {id: row.id}) SET e += row.props"


@dataclass
class BulkResult:
    """What the bulk path did (the importer's figures, and the steps around it)."""

    entities: int
    cvts: int
    triples: int
    relation_types: int
    fixups: int
    csv_seconds: float
    import_seconds: float
    finish_seconds: float
    summary: str
    id_type: str = "actual"  # the importer's --id-type
    merge_seconds: float = 0.0  # several files' spills merged into one
    restart_seconds: float = 0.0  # the server's start after the import (part of finish_seconds)
    schema_seconds: float = 0.0  # constraints and indexes built over the imported nodes (part of finish_seconds)


def bulk_unavailable(store: GraphStore) -> str | None:
    """Why the bulk path cannot run on ``store`` (None when it can)."""
    if embedded_server_for(store.uri) is None:
        return f"{store.uri} is not the embedded server of this SGR_HOME (`sgr neo4j start`)"
    if store.read("MATCH (n) RETURN count(n) AS n")[0]["n"]:
        return "the database is not empty (the import replaces the whole database)"
    return None


def check_bulk_possible(store: GraphStore) -> None:
    why_not = bulk_unavailable(store)
    if why_not:
        raise LoadError(f"--bulk is not possible: {why_not}; load without --bulk (transactions)")


@dataclass
class RelCsvStats:
    """What :func:`write_relationship_csv` wrote."""

    types: list[str]  # relation types, the most frequent first
    multiline: bool  # a field spans lines
    seconds: float = 0.0


def entity_ids(nodes: Path) -> Any:
    """The distinct (escaped) entity ids of a sorted ``nodes`` spill in its order, as one pyarrow string array: an
    entity's node number is its position (:func:`write_node_csv` numbers the entity groups the same way)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = []
    last = None
    for item in LineReader(nodes).blocks():
        if not isinstance(item, tuple):
            raise LoadError(f"the spill file {nodes} has a line over the limit ({item.reason})")
        ids = pc.extract_regex(line_array(item[1]), r"^(?P<id>[^\t]*)\t").field("id")
        if not len(ids):
            continue
        new = pc.not_equal(ids.slice(1), ids.slice(0, len(ids) - 1))
        first = pa.array([last is None or ids[0].as_py() != last])
        chunks.append(ids.filter(pa.concat_arrays([first, new])))
        last = ids[-1].as_py()
    return pa.concat_arrays(chunks) if chunks else pa.array([], pa.string())


def _csv_field(text: str) -> str:
    """``text`` as one CSV field (quoted when it must be)."""
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


class _TypeBlocks:
    """The line count and byte range of each relation's lines in ``rels.by-name.csv``, which follows the spill's
    grouping by relation: ``(count, type, start, end)``."""

    def __init__(self) -> None:
        self.blocks: list[tuple[int, str, int, int]] = []
        self.current: str | None = None
        self.start = self.count = self.position = 0

    def add(self, escaped_relation: str, lines: int, size: int) -> None:
        """``lines`` lines of ``size`` bytes of one relation, appended."""
        if escaped_relation != self.current:
            self._close()
            self.current, self.start, self.count = escaped_relation, self.position, 0
        self.count += lines
        self.position += size

    def _close(self) -> None:
        if self.current is not None:
            self.blocks.append((self.count, unescape(self.current), self.start, self.position))

    def done(self) -> list[tuple[int, str, int, int]]:
        self._close()
        self.current = None
        return self.blocks


def _numbered_relationships(edges: Path, nodes: Path, out: Any, blocks: _TypeBlocks) -> bool:
    """The ``edges`` spill as ``start,end,TYPE`` lines with node numbers (positions in :func:`entity_ids`), read
    and written a column batch at a time (pyarrow: the ends found by binary search in the sorted ids); returns
    whether a type spans lines."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    ids = entity_ids(nodes)
    fields: dict[str, str] = {}  # escaped relation -> its CSV field and the line break
    reader = pcsv.open_csv(edges, read_options=pcsv.ReadOptions(column_names=["r", "h", "t"],
                                                                block_size=REL_BLOCK_BYTES),
                           parse_options=pcsv.ParseOptions(delimiter="\t", quote_char=False),
                           convert_options=pcsv.ConvertOptions(column_types=dict.fromkeys("rht", pa.string())))
    for batch in reader:
        if not batch.num_rows:
            continue
        ends = []
        for column in (batch.column("h"), batch.column("t")):
            at = pc.search_sorted(ids, column)
            found = ids.take(pc.min_element_wise(at, max(len(ids) - 1, 0))) if len(ids) else column
            if not len(ids) or not pc.all(pc.equal(found, column)).as_py():
                raise LoadError(f"a relationship end is missing from the entity spill {nodes} (the spill files "
                                "do not match)")
            ends.append(pc.cast(at, pa.string()))
        rel = batch.column("r").dictionary_encode()
        names = rel.dictionary.to_pylist()
        for name in names:
            if name not in fields:
                fields[name] = _csv_field(unescape(name)) + "\n"
        typed = pa.array([fields[name] for name in names], pa.string()).take(rel.indices)
        lines = pc.binary_join_element_wise(ends[0], ends[1], typed, ",")
        out.write(joined_lines(lines))
        offsets = np.concatenate([[0], np.cumsum(pc.binary_length(lines).to_numpy())])
        codes = rel.indices.to_numpy()
        starts = np.concatenate([[0], np.flatnonzero(codes[1:] != codes[:-1]) + 1, [len(codes)]])
        for i, j in zip(starts[:-1].tolist(), starts[1:].tolist()):  # one run of a relation at a time
            blocks.add(names[codes[i]], j - i, int(offsets[j] - offsets[i]))
    return any("\n" in f[:-1] or "\r" in f[:-1] for f in fields.values())


def _keyed_relationships(edges: Path, out: Any, blocks: _TypeBlocks) -> bool:
    """The ``edges`` spill as ``start,end,TYPE`` lines with the entity ids as keys (``--id-type=string``);
    returns whether a field spans lines."""
    multiline = False
    fields: dict[str, str] = {}  # escaped relation -> its CSV field
    with open(edges, encoding="utf-8") as src:
        while True:
            lines = src.readlines(REL_BLOCK_BYTES)
            if not lines:
                break
            rows = [line[:-1].split("\t") for line in lines]
            rels = [r[0] for r in rows]
            ends = [(unescape(r[1]), unescape(r[2])) for r in rows]
            multiline = multiline or spans_lines(x for pair in ends for x in pair)
            heads = [_csv_field(h) for h, _ in ends]
            tails = [_csv_field(t) for _, t in ends]
            i, n = 0, len(rows)
            while i < n:  # one run of a relation at a time
                rel = rels[i]
                j = i + 1
                while j < n and rels[j] == rel:
                    j += 1
                field_ = fields.get(rel)
                if field_ is None:
                    text = unescape(rel)
                    multiline = multiline or "\n" in text or "\r" in text
                    field_ = fields[rel] = _csv_field(text)
                data = "".join([f"{h},{t},{field_}\n" for h, t in zip(heads[i:j], tails[i:j])]).encode("utf-8")
                out.write(data)
                blocks.add(rel, j - i, len(data))
                i = j
    return multiline


def write_relationship_csv(edges: Path, nodes: Path, folder: Path, actual_ids: bool = True) -> RelCsvStats:
    """``rels.header.csv`` and ``rels.csv`` from the sorted spill (module doc): one line per distinct triple,
    the end nodes as node numbers (``actual_ids``) or entity ids, the relation types by descending count.

    The spill is grouped by relation, so each type's lines are written as one block of ``rels.by-name.csv``;
    the blocks are then copied into ``rels.csv`` most frequent first."""
    t0 = time.perf_counter()
    by_name = folder / "rels.by-name.csv"
    blocks = _TypeBlocks()
    with open(by_name, "wb") as out:
        if actual_ids:
            multiline = _numbered_relationships(edges, nodes, out, blocks)
        else:
            multiline = _keyed_relationships(edges, out, blocks)
    ordered = sorted(blocks.done(), key=lambda b: (-b[0], b[1]))
    with open(by_name, "rb") as src, open(folder / "rels.csv", "wb") as out:
        for _, _, start, end in ordered:
            _copy_range(src, out, start, end - start)
    by_name.unlink()
    (folder / "rels.header.csv").write_text(":START_ID,:END_ID,:TYPE\n")
    return RelCsvStats(types=[b[1] for b in ordered], multiline=multiline, seconds=time.perf_counter() - t0)


def _copy_range(src: Any, out: Any, offset: int, length: int) -> None:
    """Append ``length`` bytes of ``src`` from ``offset`` to ``out`` (in the kernel where it can)."""
    out.flush()
    while length > 0:
        try:
            done = os.copy_file_range(src.fileno(), out.fileno(), length, offset)
        except (AttributeError, OSError):
            src.seek(offset)
            done = out.write(src.read(min(length, 1 << 24)))
            out.flush()
        if done <= 0:
            raise LoadError(f"copying the relationship CSV stopped at byte {offset:,}")
        offset += done
        length -= done


def apply_fixups(store: GraphStore, path: Path, batch_size: int) -> None:
    with open(path, encoding="utf-8") as fh:
        for part in iter_chunks((json.loads(line) for line in fh), batch_size):
            store.write(FIXUP_QUERY, {"rows": part})


@dataclass
class ImportCsv:
    """The importer's input as :func:`write_import_csv` wrote it."""

    folder: Path
    nodes: list[str]  # node file groups, "Entity=<header>,<body>"
    relationships: list[str]  # relationship file groups
    id_type: str  # "actual" (node numbers) or "string" (entity ids)
    multiline: bool
    entities: int
    cvts: int
    triples: int
    relation_types: list[str]
    fixups: int

    def save(self) -> None:
        """``import.json``: what :func:`sgr.graph.bulk.run_import` needs to import this CSV again."""
        (self.folder / "import.json").write_text(json.dumps(
            {"nodes": self.nodes, "relationships": self.relationships, "id_type": self.id_type,
             "multiline": self.multiline, "entities": self.entities, "triples": self.triples}, indent=1))


def write_import_csv(spill: SortedSpill, folder: Path, entities_hint: int) -> ImportCsv:
    """The node files, ``fixups.jsonl`` and the relationship file of ``spill`` (module doc); from
    :data:`HELPER_MIN_TRIPLES` triples each is written by a helper process of its own, at the same time, the node
    files in column batches (:func:`write_node_csv_blocks`; the same files): the client's memory stays what it
    was before (the block writer's pyarrow buffers grew it by about 240 MB at 5M lines, 8 MiB blocks).
    ``entities_hint``: at least the number of entities (it chooses node numbers or ids)."""
    folder.mkdir(parents=True, exist_ok=True)
    actual = entities_hint <= ACTUAL_IDS_MAX_ENTITIES
    plan = column_plan(spill.prop_kinds)
    args = (spill.edges, spill.nodes, folder, actual)
    if spill.triples >= HELPER_MIN_TRIPLES:
        with ProcessPoolExecutor(2, mp_context=parallel.process_context()) as pool:
            pending = pool.submit(write_relationship_csv, *args)
            nodes = pool.submit(write_node_csv_blocks, spill.nodes, plan, folder, actual).result()
            rels = pending.result()
    else:
        nodes = write_node_csv(entity_groups(spill.nodes), plan, folder, actual)
        rels = write_relationship_csv(*args)
    return ImportCsv(folder=folder, nodes=nodes.groups,
                     relationships=[f"{folder / 'rels.header.csv'},{folder / 'rels.csv'}"],
                     id_type="actual" if actual else "string", multiline=nodes.multiline or rels.multiline,
                     entities=nodes.entities, cvts=nodes.cvts, triples=spill.triples, relation_types=rels.types,
                     fixups=nodes.fixups)


def bulk_import(store: GraphStore, parsed: list[tuple[Any, SortedSpill]], folder: Path, batch_size: int,
                progress: Any = None) -> BulkResult:
    """Import every parsed file at once (module doc); ``parsed``: (file report, sorted spill) pairs.
    With ``SGR_IMPORT_KEEP`` set, the CSV and ``import.json`` are left in that folder."""
    check_bulk_possible(store)
    keep = read_settings(LoadSettings).import_keep
    folder = keep.expanduser() if keep else folder
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with server_stopped(store.uri) as (home, server_down):  # the server shuts down while the CSV is written
        merged = merge_sorted([spill for _, spill in parsed], folder)
        t_merge = time.perf_counter() - t0
        files = write_import_csv(merged, folder, sum(rep.entities for rep, _ in parsed))
        if keep:
            files.save()
        t1 = time.perf_counter()
        if progress:
            progress.notice(f"bulk: wrote import CSV for {files.entities:,} entities and {files.triples:,} triples "
                            f"in {t1 - t0:.1f} s; the embedded server is stopped for neo4j-admin import")
        server_down()
        summary: ImportSummary = run_import(home, files.nodes, files.relationships, folder / "import",
                                            multiline=files.multiline, id_type=files.id_type)
        t_restart = time.perf_counter()
    t2 = time.perf_counter()
    if progress:
        progress.notice(summary.line())
    store.verify()
    if entity_count(store) != files.entities:
        raise LoadError(f"neo4j-admin import stored {entity_count(store):,} entities, expected {files.entities:,} "
                        f"(log: {summary.log})")
    t_schema = time.perf_counter()
    build_schema(store)  # constraints and the name indexes, built once over the imported nodes
    t_schema = time.perf_counter() - t_schema
    write_relation_vocabulary(store, files.relation_types)
    apply_fixups(store, folder / "fixups.jsonl", batch_size)
    for rep, _ in parsed:
        rep.new_entities = rep.entities
        rep.write_seconds = (time.perf_counter() - t0) / len(parsed)
    return BulkResult(entities=files.entities, cvts=files.cvts, triples=files.triples,
                      relation_types=len(files.relation_types), fixups=files.fixups, csv_seconds=t1 - t0,
                      import_seconds=t_restart - t1, finish_seconds=time.perf_counter() - t_restart,
                      summary=summary.line(), id_type=files.id_type,
                      merge_seconds=t_merge, restart_seconds=t2 - t_restart, schema_seconds=t_schema)
