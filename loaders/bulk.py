"""The bulk path (``sgr load freebase --bulk``): neo4j-admin import CSV from the sorted spill files.

For an empty database served by the embedded server, the parsed input (every file, sorted and
de-duplicated on disk by :mod:`loaders.spill`) becomes the importer's CSV, streamed, in bounded
memory:

* ``nodes.<i>.header.csv`` + ``nodes.<i>.csv``: ``id:ID`` (the entity id, also stored as ``id``),
  ``name``, ``:LABEL`` (``Entity`` or ``Entity;CVT``), ``types:string[]`` and a typed column for
  each literal property key of the file's rows whose values all have one scalar type in the whole
  input (``:long``, ``:double``, ``:boolean``, ``:string``; the spill records the kinds seen). Each
  file holds the rows with one set of literal columns (:class:`NodeFiles`).
* ``rels.header.csv`` + ``rels.csv``: ``:START_ID,:END_ID,:TYPE``, one line per distinct triple.
* ``fixups.jsonl``: what a CSV column cannot carry exactly (a key with values of several types, a
  multi-valued literal, an empty string, a list element holding the array delimiter, a key the
  header syntax cannot name); set with Cypher after the import, so the graph is the same as the
  transactional path's.

:func:`sgr.graph.bulk.server_stopped` stops the server (while the CSV is written), the importer runs,
the server starts again. Then the same schema (constraints, full-text index), ``(:Relation)`` vocabulary and ``(:Source)``
records as the transactional path are written (the caller records the sources), so ``sgr stats``
reads the same either way.
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loaders.spill import EntityFacts, SortedSpill, entity_groups, merge_sorted, unescape
from loaders.writer import clean_props, entity_count, iter_chunks, write_relation_vocabulary
from sgr.core.errors import LoadError
from sgr.graph.bulk import ImportSummary, embedded_server_for, run_import, server_stopped
from sgr.graph.store import GraphStore

ARRAY_DELIMITER = ";"
CSV_TYPES = {"int": "long", "float": "double", "bool": "boolean", "str": "string"}
#: The columns every node file starts with (then the literal columns of its rows).
NODE_COLUMNS = ("id:ID", "name", ":LABEL", "types:string[]")
#: Node files with their own literal columns (:class:`NodeFiles`); rows with further column sets share one.
MAX_NODE_FILES = 500
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


def column_plan(prop_kinds: dict[str, set[str]]) -> dict[str, str]:
    """Literal key (after :func:`~loaders.writer.clean_props` renaming) → CSV column type, for the
    keys whose values have one scalar type and whose name the header syntax can carry."""
    plan = {}
    for key, kinds in sorted(prop_kinds.items()):
        name = next(iter(clean_props({key: None})))
        if len(kinds) == 1 and next(iter(kinds)) in CSV_TYPES and not any(c in name for c in ':,"\n\r'):
            plan[name] = CSV_TYPES[next(iter(kinds))]
    return plan


def _cell(value: Any, kind: str) -> str | None:
    """The CSV text of a scalar, or None when the column cannot carry it exactly."""
    if isinstance(value, list):
        return None
    if kind == "boolean":
        return "true" if value else "false"
    if kind == "double":
        return repr(float(value)) if math.isfinite(value) else None
    if kind == "long":
        return str(value)
    return value if value != "" else None


@dataclass
class NodeCsvStats:
    entities: int = 0
    cvts: int = 0
    fixups: int = 0
    multiline: bool = False
    #: the importer's node file groups, ``"Entity=<header>,<body>"``
    groups: list[str] = field(default_factory=list)


class NodeFiles:
    """One node CSV per set of literal columns used (``nodes.<i>.csv`` + ``nodes.<i>.header.csv``), so a row
    carries only its own columns: one file with a column per literal key (hundreds of keys in a Freebase
    extract) spent most of the CSV and node-import time on empty cells. Past :data:`MAX_NODE_FILES` column
    sets, the remaining rows share one file with every column."""

    def __init__(self, folder: Path, plan: dict[str, str]) -> None:
        self.folder = folder
        self.plan = plan
        self.files: dict[tuple[str, ...], tuple[Any, Any]] = {}  # column set -> (file, csv writer)
        self.order = {k: i for i, k in enumerate(plan)}

    def writer(self, columns: tuple[str, ...]) -> tuple[tuple[str, ...], Any]:
        """(the columns the row's file has, its CSV writer)."""
        if columns not in self.files and len(self.files) >= MAX_NODE_FILES:
            columns = tuple(self.plan)  # the wide file
        if columns not in self.files:
            i = len(self.files)
            header = [*NODE_COLUMNS, *[f"{k}:{self.plan[k]}" for k in columns]]
            with open(self.folder / f"nodes.{i}.header.csv", "w", newline="", encoding="utf-8") as fh:
                csv.writer(fh, lineterminator="\n").writerow(header)
            body = open(self.folder / f"nodes.{i}.csv", "w", newline="", encoding="utf-8", buffering=1 << 15)
            self.files[columns] = (body, csv.writer(body, lineterminator="\n").writerow)
        return columns, self.files[columns][1]

    def groups(self) -> list[str]:
        return [f"Entity={self.folder / f'nodes.{i}.header.csv'},{self.folder / f'nodes.{i}.csv'}"
                for i in range(len(self.files))]

    def close(self) -> None:
        for body, _ in self.files.values():
            body.close()


def _spans_lines(texts: Iterable[str | None]) -> bool:
    return any(t is not None and ("\n" in t or "\r" in t) for t in texts)


def write_node_csv(groups: Iterator[EntityFacts], plan: dict[str, str], folder: Path) -> NodeCsvStats:
    """The node CSV files (:class:`NodeFiles`) and ``fixups.jsonl`` (see module doc)."""
    stats = NodeCsvStats()
    files = NodeFiles(folder, plan)
    try:
        with open(folder / "fixups.jsonl", "w", encoding="utf-8") as fix:
            for facts in groups:
                stats.entities += 1
                stats.cvts += facts.is_cvt
                name = facts.display_name
                cells: dict[str, str] = {}
                later: dict[str, Any] = {}
                if facts.props:
                    for key, value in clean_props(facts.props).items():
                        cell = _cell(value, plan[key]) if key in plan else None
                        if cell is None:
                            later[key] = value
                        else:
                            cells[key] = cell
                types = ARRAY_DELIMITER.join(facts.types) if facts.types else None
                if facts.types and any(ARRAY_DELIMITER in t or t == "" for t in facts.types):
                    later["types"], types = list(facts.types), None
                columns, write = files.writer(tuple(sorted(cells, key=files.order.__getitem__)))
                texts = [facts.id, name, types, *cells.values()]
                if not stats.multiline and _spans_lines(texts):
                    stats.multiline = True
                write([facts.id, name or "", "Entity;CVT" if facts.is_cvt else "Entity", types or "",
                       *[cells.get(k, "") for k in columns]])
                if later:
                    stats.fixups += 1
                    fix.write(json.dumps({"id": facts.id, "props": later}, ensure_ascii=False) + "\n")
    finally:
        files.close()
    if not files.files:
        files.writer(())  # an input without entities still gives the importer a node file
        files.close()
    stats.groups = files.groups()
    return stats


def write_relationship_csv(spill: SortedSpill, folder: Path) -> tuple[set[str], bool]:
    """``rels.header.csv`` and ``rels.csv``; returns the relation types and whether a field spans lines.

    A spill line without ``"``, ``,`` or an escape is rewritten as is (the common case, no CSV
    quoting needed); any other goes through :mod:`csv`."""
    types: set[str] = set()
    multiline = False
    with open(spill.edges, encoding="utf-8") as src, \
            open(folder / "rels.csv", "w", newline="", encoding="utf-8", buffering=1 << 20) as body:
        out = csv.writer(body, lineterminator="\n")
        write = body.write
        for line in src:
            rel, head, tail = line.rstrip("\n").split("\t")
            if rel not in types:
                types.add(rel)
            if '"' in line or "," in line or "\\" in line:
                h, r, t = unescape(head), unescape(rel), unescape(tail)
                multiline = multiline or any("\n" in x or "\r" in x for x in (h, r, t))
                out.writerow([h, t, r])
            else:
                write(f"{head},{tail},{rel}\n")
    (folder / "rels.header.csv").write_text(":START_ID,:END_ID,:TYPE\n")
    return {unescape(r) for r in types}, multiline


def apply_fixups(store: GraphStore, path: Path, batch_size: int) -> None:
    with open(path, encoding="utf-8") as fh:
        for part in iter_chunks((json.loads(line) for line in fh), batch_size):
            store.write(FIXUP_QUERY, {"rows": part})


def bulk_import(store: GraphStore, parsed: list[tuple[Any, SortedSpill]], folder: Path, batch_size: int,
                progress: Any = None) -> BulkResult:
    """Import every parsed file at once (module doc); ``parsed``: (file report, sorted spill) pairs."""
    check_bulk_possible(store)
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with server_stopped(store.uri) as (home, server_down):  # the server shuts down while the CSV is written
        merged = merge_sorted([spill for _, spill in parsed], folder)
        plan = column_plan(merged.prop_kinds)
        nodes = write_node_csv(entity_groups(merged.nodes), plan, folder)
        rel_types, rel_multiline = write_relationship_csv(merged, folder)
        t1 = time.perf_counter()
        if progress:
            progress.notice(f"bulk: wrote import CSV for {nodes.entities:,} entities and {merged.triples:,} triples "
                            f"in {t1 - t0:.1f} s; the embedded server is stopped for neo4j-admin import")
        server_down()
        summary: ImportSummary = run_import(
            home, nodes.groups, [f"{folder / 'rels.header.csv'},{folder / 'rels.csv'}"], folder / "import",
            multiline=nodes.multiline or rel_multiline)
    t2 = time.perf_counter()
    if progress:
        progress.notice(summary.line())
    store.verify()
    if entity_count(store) != nodes.entities:
        raise LoadError(f"neo4j-admin import stored {entity_count(store):,} entities, expected {nodes.entities:,} "
                        f"(log: {summary.log})")
    store.ensure_schema()  # constraints and the full-text index, built once over the imported nodes
    write_relation_vocabulary(store, rel_types)
    apply_fixups(store, folder / "fixups.jsonl", batch_size)
    for rep, _ in parsed:
        rep.new_entities = rep.entities
        rep.write_seconds = (time.perf_counter() - t0) / len(parsed)
    return BulkResult(entities=nodes.entities, cvts=nodes.cvts, triples=merged.triples,
                      relation_types=len(rel_types), fixups=nodes.fixups, csv_seconds=t1 - t0,
                      import_seconds=t2 - t1, finish_seconds=time.perf_counter() - t2, summary=summary.line())
