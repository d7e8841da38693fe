"""The bulk path's node CSV files (``nodes.<i>.header.csv`` + ``nodes.<i>.csv``) and ``fixups.jsonl`` from a sorted
``nodes`` spill (:mod:`loaders.bulk` describes the columns and what goes to the fixups).

Two writers give the same files byte for byte: :func:`write_node_csv`, one :class:`~loaders.spill.EntityFacts` at a
time (a small input), and :func:`write_node_csv_blocks`, which reads the spill a block of lines at a time and builds
the rows in pyarrow kernels, handing only the entities a kernel cannot write exactly (escapes, a quote, a repeated
type or key, a value for the fixups) to the first one's :func:`node_row`.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from loaders.records import LineReader, joined_lines, line_array
from loaders.spill import EntityFacts, group_lines, unescape
from loaders.writer import clean_props
from sgr.core.errors import LoadError
from sgr.graph.store import is_mid

ARRAY_DELIMITER = ";"
CSV_TYPES = {"int": "long", "float": "double", "bool": "boolean", "str": "string"}
#: The columns every node file starts with (then the literal columns of its rows): with node numbers
#: (``--id-type=actual``) and with the entity id as the importer's key (``--id-type=string``).
NODE_COLUMNS = (":ID", "id", "name", ":LABEL", "types:string[]")
STRING_ID_NODE_COLUMNS = ("id:ID", "name", ":LABEL", "types:string[]")
#: Node files with their own literal columns (:class:`NodeFiles`); rows with further column sets share one.
MAX_NODE_FILES = 500


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

    def __init__(self, folder: Path, plan: dict[str, str], actual_ids: bool = True) -> None:
        self.folder = folder
        self.plan = plan
        self.columns = NODE_COLUMNS if actual_ids else STRING_ID_NODE_COLUMNS
        self.files: dict[tuple[str, ...], tuple[Any, Any]] = {}  # column set -> (file, csv writer)
        self.order = {k: i for i, k in enumerate(plan)}

    def writer(self, columns: tuple[str, ...]) -> tuple[tuple[str, ...], Any]:
        """(the columns the row's file has, its CSV writer)."""
        if columns not in self.files and len(self.files) >= MAX_NODE_FILES:
            columns = tuple(self.plan)  # the wide file
        if columns not in self.files:
            i = len(self.files)
            header = [*self.columns, *[f"{k}:{self.plan[k]}" for k in columns]]
            with open(self.folder / f"nodes.{i}.header.csv", "w", newline="", encoding="utf-8") as fh:
                csv.writer(fh, lineterminator="\n").writerow(header)
            body = open(self.folder / f"nodes.{i}.csv", "w", newline="", encoding="utf-8", buffering=1 << 15)
            self.files[columns] = (body, csv.writer(body, lineterminator="\n").writerow)
        return columns, self.files[columns][1]

    def write_lines(self, columns: tuple[str, ...], data: Any) -> None:
        """Whole CSV lines (UTF-8 bytes) appended to the file of ``columns`` (opened by :meth:`writer`)."""
        body = self.files[columns][0]
        body.flush()
        body.buffer.write(data)

    def groups(self) -> list[str]:
        return [f"Entity={self.folder / f'nodes.{i}.header.csv'},{self.folder / f'nodes.{i}.csv'}"
                for i in range(len(self.files))]

    def close(self) -> None:
        for body, _ in self.files.values():
            body.close()


def spans_lines(texts: Iterable[str | None]) -> bool:
    joined = "\0".join(t for t in texts if t)
    return "\n" in joined or "\r" in joined


@dataclass
class NodeRow:
    """One entity's node row before its file is chosen (:func:`node_row`)."""

    key: list[Any]  # [node number, entity id] or [entity id]
    name: str
    cvt: bool
    types: str
    cells: dict[str, str]  # literal column -> CSV cell
    later: dict[str, Any]  # what the CSV cannot carry exactly (``fixups.jsonl``)
    multiline: bool  # a field spans lines

    def columns(self, order: dict[str, int]) -> tuple[str, ...]:
        """Its literal columns in the plan's order (``order``: column -> position)."""
        return tuple(sorted(self.cells, key=order.__getitem__)) if self.cells else ()

    def fields(self, columns: tuple[str, ...]) -> list[Any]:
        """Its CSV fields in a file with the literal ``columns``."""
        return [*self.key, self.name, "Entity;CVT" if self.cvt else "Entity", self.types,
                *[self.cells.get(k, "") for k in columns]]


def node_row(facts: EntityFacts, plan: dict[str, str], key: list[Any]) -> NodeRow:
    """The node CSV row of one entity (module doc): ``key`` its leading columns (node number and id, or id)."""
    if facts.name is not None:
        name, cvt = facts.name, False
    else:  # display_name and is_cvt with one MID test
        cvt = is_mid(facts.id)
        name = None if cvt else facts.id
    cells: dict[str, str] = {}
    later: dict[str, Any] = {}
    if facts.props:
        for prop, value in clean_props(facts.props).items():
            cell = _cell(value, plan[prop]) if prop in plan else None
            if cell is None:
                later[prop] = value
            else:
                cells[prop] = cell
    types = ARRAY_DELIMITER.join(facts.types) if facts.types else None
    if types is not None and (types.count(ARRAY_DELIMITER) != len(facts.types) - 1 or "" in facts.types):
        later["types"], types = list(facts.types), None
    return NodeRow(key=key, name=name or "", cvt=cvt, types=types or "", cells=cells, later=later,
                   multiline=spans_lines((facts.id, name, types, *cells.values())))


def write_node_csv(groups: Iterator[EntityFacts], plan: dict[str, str], folder: Path,
                   actual_ids: bool = True) -> NodeCsvStats:
    """The node CSV files (:class:`NodeFiles`) and ``fixups.jsonl`` (see module doc), one entity at a time (a small
    spill; :func:`write_node_csv_blocks` writes the same files for a large one). ``actual_ids``: each row starts
    with its node number, the entity's rank in ``groups`` (which :func:`write_relationship_csv` gives the same
    entity), else with the entity id as the importer's key."""
    stats = NodeCsvStats()
    files = NodeFiles(folder, plan, actual_ids)
    try:
        with open(folder / "fixups.jsonl", "w", encoding="utf-8") as fix:
            for rank, facts in enumerate(groups):
                row = node_row(facts, plan, [rank, facts.id] if actual_ids else [facts.id])
                columns, write = files.writer(row.columns(files.order))
                write(row.fields(columns))
                _count_row(stats, row, fix)
    finally:
        files.close()
    return _finish_node_files(stats, files)


def _count_row(stats: NodeCsvStats, row: NodeRow, fix: Any) -> None:
    """Add one written row to ``stats``; its fixup to ``fix``."""
    stats.entities += 1
    stats.cvts += row.cvt
    stats.multiline = stats.multiline or row.multiline
    if row.later:
        stats.fixups += 1
        fix.write(json.dumps({"id": row.key[-1], "props": row.later}, ensure_ascii=False) + "\n")


def _finish_node_files(stats: NodeCsvStats, files: NodeFiles) -> NodeCsvStats:
    if not files.files:
        files.writer(())  # an input without entities still gives the importer a node file
        files.close()
    stats.groups = files.groups()
    return stats


#: A literal's JSON text that is its own CSV cell, by column type (a string: the text between its quotes,
#: non-empty and without escapes); any other value goes through :func:`node_row`.
_CELL_PATTERNS = {"long": r"^-?[0-9]+$", "double": r"^-?[0-9]+(\.[0-9]+([eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+)$",
                  "boolean": r"^(true|false)$", "string": r'^"[^"\\]+"$'}


def write_node_csv_blocks(nodes: Path, plan: dict[str, str], folder: Path, actual_ids: bool = True,
                          block_bytes: int | None = None) -> NodeCsvStats:
    """The files of :func:`write_node_csv` (byte for byte) from a sorted ``nodes`` spill, a block of lines at a
    time in pyarrow kernels (:class:`_NodeBlock`); the entities a kernel cannot write exactly (escapes, a quote,
    a repeated type or literal key, a value for ``fixups.jsonl``) go through :func:`node_row` in their place."""
    import pyarrow as pa
    import pyarrow.compute as pc

    stats = NodeCsvStats()
    files = NodeFiles(folder, plan, actual_ids)
    keys = _LiteralKeys(plan, files.order)
    rank = 0
    carry = None
    try:
        with open(folder / "fixups.jsonl", "w", encoding="utf-8") as fix:
            for item in LineReader(nodes).blocks(block_bytes):
                if not isinstance(item, tuple):
                    raise LoadError(f"the spill file {nodes} has a line over the limit ({item.reason})")
                lines = line_array(item[1])
                if carry is not None:
                    lines = pa.concat_arrays([carry, lines])
                columns = _spill_columns(lines)
                ids = columns[0]
                same = pc.equal(ids.slice(1), ids.slice(0, len(ids) - 1)).to_numpy(zero_copy_only=False)
                last = int(np.flatnonzero(~same)[-1]) + 1 if len(same) and not same.all() else 0
                if last:  # the last entity's lines may go on in the next block
                    head = [c.slice(0, last) for c in (lines, *columns)]
                    rank = _NodeBlock(*head, rank=rank, keys=keys).write(files, stats, fix)
                carry = lines.slice(last)
            if carry is not None and len(carry):
                _NodeBlock(carry, *_spill_columns(carry), rank=rank, keys=keys).write(files, stats, fix)
    finally:
        files.close()
    return _finish_node_files(stats, files)


def _open_files(files: NodeFiles, firsts: list[tuple[int, tuple[str, ...]]]) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Each column set of a block → the columns of the file its rows go to, the files opened in the order of each
    set's first row (``firsts``: (entity, column set) pairs), as the row writer opens them."""
    first: dict[tuple[str, ...], int] = {}
    for e, cols in firsts:
        first[cols] = min(first.get(cols, e), e)
    return {cols: files.writer(cols)[0] for cols in sorted(first, key=first.__getitem__)}


def _csv_line(fields: list[Any]) -> str:
    """One CSV line as the node files' ``csv.writer`` writes it."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(fields)
    return buffer.getvalue()


def _wide_lines(base: Any, first_cell: Any, cells: Any, cols: tuple[str, ...], target: tuple[str, ...]) -> Any:
    """Rows whose literal columns are ``cols`` in the file with the columns ``target``: ``base`` (their leading
    fields) and each one's cells (``cells`` from ``first_cell``, in the order of ``cols``) at their columns."""
    import pyarrow as pa
    import pyarrow.compute as pc

    position = {c: i for i, c in enumerate(target)}
    pieces: list[Any] = [base]
    previous = -1
    for j, c in enumerate(cols):
        pieces += ["," * (position[c] - previous), cells.take(pa.array(first_cell + j))]
        previous = position[c]
    pieces.append("," * (len(target) - 1 - previous) + "\n")
    return pc.binary_join_element_wise(*pieces, "")


def _replace(values: Any, at: Any, new: Any) -> Any:
    """``values`` (a pyarrow array) with the elements at the positions ``at`` replaced by ``new``."""
    import pyarrow as pa

    index = np.arange(len(values))
    index[at] = len(values) + np.arange(len(at))
    return pa.concat_arrays([values, new]).take(pa.array(index))


def _spill_columns(lines: Any) -> tuple[Any, Any, Any]:
    """(escaped entity id, kind, the rest) of each ``nodes`` spill line."""
    import pyarrow.compute as pc

    parts = pc.extract_regex(lines, r"^(?P<id>[^\t]*)\t(?P<kind>[^\t])\t(?P<rest>[^\n]*)")
    if parts.null_count:
        raise LoadError("a line of the entity spill file is malformed (the spill files are damaged)")
    return parts.field("id"), parts.field("kind"), parts.field("rest")


class _LiteralKeys:
    """Literal keys (as escaped in the spill) → their node-file column: its position in the plan and its type."""

    def __init__(self, plan: dict[str, str], order: dict[str, int]) -> None:
        self.plan = plan
        self.order = order
        self.known: dict[str, tuple[int, str]] = {}

    def column(self, escaped: str) -> tuple[int, str]:
        """(position, CSV type), or (-1, "") for a key the CSV has no column for."""
        if escaped not in self.known:
            name = next(iter(clean_props({unescape(escaped): None})))
            self.known[escaped] = (self.order[name], self.plan[name]) if name in self.plan else (-1, "")
        return self.known[escaped]


@dataclass
class _FastRows:
    """A block's rows as the kernels build them (:meth:`_NodeBlock._fast_rows`)."""

    base: Any  # the leading fields of each row
    lines: Any  # each whole line, for the file of its own column set
    cells: Any  # the literal cells, by entity then column
    offsets: Any  # each entity's first cell (numpy; one more at the end)
    signatures: list[tuple[str, ...]]  # the column sets
    sig: Any  # each entity's column set (numpy positions in ``signatures``)
    cvt: Any  # which entities are CVTs (numpy)


class _NodeBlock:
    """The node rows of whole entities' spill lines (``lines`` and their :func:`_spill_columns`), numbered from
    ``rank``."""

    def __init__(self, lines: Any, ids: Any, kind: Any, rest: Any, rank: int, keys: _LiteralKeys) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        self.lines, self.kind, self.rest, self.rank, self.keys = lines, kind, rest, rank, keys
        n = len(lines)
        new = np.ones(n, bool)
        new[1:] = pc.not_equal(ids.slice(1), ids.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        self.entity = np.cumsum(new) - 1  # each line's entity, 0 …
        self.count = int(self.entity[-1]) + 1
        self.ids = ids.filter(pa.array(new))
        self.slow = pc.match_substring_regex(self.ids, r'[\\,"]').to_numpy(zero_copy_only=False).copy()

    def _of_kind(self, kind: str) -> tuple[Any, Any]:
        """(line positions, their entities) of one kind of fact."""
        import pyarrow.compute as pc

        at = np.flatnonzero(pc.equal(self.kind, kind).to_numpy(zero_copy_only=False))
        return at, self.entity[at]

    def _mark_slow(self, entities: Any, mask: Any) -> None:
        self.slow[entities[np.asarray(mask.to_numpy(zero_copy_only=False), bool)]] = True

    def _names(self) -> tuple[Any, Any]:
        """(the name field of each entity, which entities are CVTs)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        at, ent = self._of_kind("n")
        first = np.ones(len(at), bool)
        first[1:] = ent[1:] != ent[:-1]  # the first name seen is kept
        at, ent = at[first], ent[first]
        text = self.rest.take(pa.array(at, pa.int64()))
        self._mark_slow(ent, pc.match_substring(text, "\\"))
        name = pc.utf8_slice_codeunits(text, 1, -1)
        name = pc.if_else(pc.match_substring(name, ","), pc.binary_join_element_wise('"', name, '"', ""), name)
        position = np.full(self.count, -1)
        position[ent] = np.arange(len(ent))
        named = position >= 0
        name = name.take(pa.array(position, mask=~named))
        cvt = ~named & pc.match_substring_regex(self.ids, r"^[mg]\.[0-9a-z_]+$").to_numpy(zero_copy_only=False)
        field_ = pc.if_else(pa.array(named), name, pc.if_else(pa.array(cvt), "", self.ids))
        return field_, cvt

    def _types(self) -> Any:
        """Each entity's types joined by the array delimiter."""
        import pyarrow as pa
        import pyarrow.compute as pc

        at, ent = self._of_kind("t")
        text = self.rest.take(pa.array(at, pa.int64()))
        self._mark_slow(ent, pc.match_substring_regex(text, r'^$|[\\,";]'))
        pairs = pa.table({"e": ent, "t": text}).group_by(["e", "t"]).aggregate([([], "count_all")])
        self._mark_slow(pairs.column("e").to_numpy(), pc.greater(pairs.column("count_all"), 1).combine_chunks())
        offsets = np.concatenate([[0], np.cumsum(np.bincount(ent, minlength=self.count))]).astype(np.int32)
        return pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), text), ARRAY_DELIMITER)

    def _cells(self) -> tuple[Any, Any, Any]:
        """The literals as cells, sorted by (entity, column): (cells, their entities, their columns)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        at, ent = self._of_kind("p")
        kv = pc.extract_regex(self.rest.take(pa.array(at, pa.int64())), r"^(?P<key>[^\t]*)\t(?P<value>.*)$")
        keys = kv.field("key").dictionary_encode()
        value = kv.field("value")
        known = [self.keys.column(k) for k in keys.dictionary.to_pylist()]
        codes = keys.indices.to_numpy(zero_copy_only=False)
        column = np.array([c for c, _ in known] or [0], np.int64)[codes]
        kind = np.array([k for _, k in known] or [""], object)[codes]
        ok = column >= 0
        for name, pattern in _CELL_PATTERNS.items():
            mask = kind == name
            if mask.any():
                ok[mask] &= pc.match_substring_regex(value.filter(pa.array(mask)), pattern).to_numpy(
                    zero_copy_only=False)
        self.slow[ent[~ok]] = True
        order = np.lexsort((column, ent))
        ent, column, kind = ent[order], column[order], kind[order]
        value = value.take(pa.array(order, pa.int64()))
        repeated = np.flatnonzero((ent[1:] == ent[:-1]) & (column[1:] == column[:-1]))
        self.slow[ent[repeated]] = True  # a key given twice (a list, or one value twice): node_row decides
        text = pc.utf8_slice_codeunits(value, 1, -1)
        text = pc.if_else(pc.match_substring(text, ","), pc.binary_join_element_wise('"', text, '"', ""), text)
        cells = pc.if_else(pa.array(kind == "string"), text, value)
        return cells, ent, column

    def _fast_rows(self, files: NodeFiles) -> _FastRows:
        """The rows of the entities the kernels write (the others' are empty), each in its own column set's file."""
        import pyarrow as pa
        import pyarrow.compute as pc

        name, cvt = self._names()
        types = self._types()
        cells, cell_ent, cell_col = self._cells()
        ranks = np.arange(self.rank, self.rank + self.count)
        key = [pc.cast(pa.array(ranks), pa.string()), self.ids] if files.columns == NODE_COLUMNS else [self.ids]
        label = pc.if_else(pa.array(cvt), "Entity;CVT", "Entity")
        keep = ~self.slow[cell_ent]
        cells, cell_ent, cell_col = cells.filter(pa.array(keep)), cell_ent[keep], cell_col[keep]
        offsets = np.concatenate([[0], np.cumsum(np.bincount(cell_ent, minlength=self.count))]).astype(np.int32)
        joined = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), cells), ",")
        base = pc.binary_join_element_wise(*key, name, label, types, ",")
        ending = pc.if_else(pa.array(offsets[1:] > offsets[:-1]), pc.binary_join_element_wise(",", joined, "\n", ""),
                            "\n")
        sig_text = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), pc.cast(pa.array(cell_col), pa.string())),
                                  ",").dictionary_encode()
        plan = list(files.plan)
        return _FastRows(base=base, lines=pc.binary_join_element_wise(base, ending, ""), cells=cells, offsets=offsets,
                         signatures=[tuple(plan[int(c)] for c in s.split(",")) if s else ()
                                     for s in sig_text.dictionary.to_pylist()],
                         sig=sig_text.indices.to_numpy(zero_copy_only=False), cvt=cvt)

    def write(self, files: NodeFiles, stats: NodeCsvStats, fix: Any) -> int:
        """Append the block's rows to their files in rank order and its fixups; returns the next rank."""
        import pyarrow as pa

        rows = self._fast_rows(files)
        fast = ~self.slow
        base, lines, cells, offsets, signatures, sig = (rows.base, rows.lines, rows.cells, rows.offsets,
                                                        rows.signatures, rows.sig)
        slow_rows = self._slow_rows(files)
        actual = _open_files(files, [(e, signatures[sig[e]]) for e in np.flatnonzero(fast)[
            np.unique(sig[fast], return_index=True)[1]].tolist()] + [(e, row.columns(files.order)) for e, row in slow_rows])
        targets = list(dict.fromkeys(actual.values()))
        target_of = np.array([targets.index(actual[cols]) if cols in actual else -1 for cols in signatures] or [-1])
        wide = [s for s, cols in enumerate(signatures) if cols in actual and actual[cols] != cols]
        if wide:  # rows in the wide file: every column, their cells in place
            ents = np.flatnonzero(fast & np.isin(sig, wide))
            ents = ents[np.argsort(sig[ents], kind="stable")]
            bounds = np.searchsorted(sig[ents], wide + [len(signatures)])
            lines = _replace(lines, ents, pa.concat_arrays([
                _wide_lines(base.take(pa.array(ents[bounds[i]:bounds[i + 1]])), offsets[ents[bounds[i]:bounds[i + 1]]],
                            cells, signatures[s], actual[signatures[s]]) for i, s in enumerate(wide)]))
        file_of = np.where(fast, target_of[sig], -1)
        if slow_rows:
            texts = []
            for e, row in slow_rows:
                file_of[e] = targets.index(actual[row.columns(files.order)])
                texts.append(_csv_line(row.fields(targets[file_of[e]])))
                _count_row(stats, row, fix)
            lines = _replace(lines, np.array([e for e, _ in slow_rows]), pa.array(texts, pa.string()))
        order = np.argsort(file_of, kind="stable")  # each file's rows together, in rank order
        bounds = np.searchsorted(file_of[order], np.arange(len(targets) + 1))
        for i, target in enumerate(targets):
            if bounds[i + 1] > bounds[i]:
                files.write_lines(target, joined_lines(lines.take(pa.array(order[bounds[i]:bounds[i + 1]]))))
        stats.entities += int(fast.sum())
        stats.cvts += int(rows.cvt[fast].sum())
        return self.rank + self.count

    def _slow_rows(self, files: NodeFiles) -> list[tuple[int, NodeRow]]:
        """(entity, row) of the entities :func:`node_row` writes, in rank order."""
        import pyarrow as pa

        if not self.slow.any():
            return []
        lines = self.lines.filter(pa.array(self.slow[self.entity])).to_pylist()
        actual_ids = files.columns == NODE_COLUMNS
        return [(int(e), node_row(facts, self.keys.plan,
                                  [self.rank + int(e), facts.id] if actual_ids else [facts.id]))
                for e, facts in zip(np.flatnonzero(self.slow), group_lines(lines))]
