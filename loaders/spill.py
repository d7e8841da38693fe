"""Disk-backed de-duplication: parsed records spilled to text files and sorted by GNU ``sort``.

A load must not hold every triple in memory (about 0.5 KB per triple in Python sets), yet it must
de-duplicate triples across the whole input and give each entity everything the input says about
it, wherever it appears (a name arriving after its entity's triples still removes ``:CVT``). So the
parser's records are appended to two spill files as they stream in:

* ``edges``: ``relation<TAB>head<TAB>tail`` per triple; ``sort -u`` removes repeats and groups the
  lines by relation type, then head (what the relationship writers want);
* ``nodes``: ``id<TAB>kind<TAB>payload`` per fact about an entity (``a``: it appears in a triple,
  ``n``: its name, ``p``: a literal ``key<TAB>json``, ``t``: a type); a stable ``sort`` on the id
  brings each entity's facts together in input order, so "the first name seen is kept" holds as
  before. A bounded set of recently spilled ids keeps Freebase's subject-grouped lines from writing
  one ``a`` line per triple.

GNU ``sort`` is an external merge sort: its memory is capped (``-S``, for each of the two files,
which are sorted at once) and it spills sorted runs to the same temporary folder, so the client's
memory stays bounded whatever the input size. Tabs,
newlines and backslashes inside ids are escaped (``\\t``, ``\\n``, ``\\\\``), so each fact is one
line and equal ids sort together.

:func:`entity_groups` reads the sorted ``nodes`` back as one :class:`EntityFacts` per entity,
:func:`edge_rows` the sorted ``edges`` as ``(head, relation, tail)``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loaders.records import joined_lines
from sgr.core.config import LoadSettings, read_settings
from sgr.core.errors import LoadError
from sgr.graph.store import is_mid

#: Recently spilled entity ids remembered to skip repeated ``a`` lines (cleared when full).
RECENT_IDS = 200_000

_ESC = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESC = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


def escape(text: str) -> str:
    """One-line, tab-free form of ``text`` (reversible with :func:`unescape`)."""
    if "\\" in text or "\t" in text or "\n" in text or "\r" in text:
        return "".join(_ESC.get(c, c) for c in text)
    return text


def unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(_UNESC.get(text[i + 1], text[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


@dataclass(slots=True)
class EntityFacts:
    """Everything the input says about one entity, in input order."""

    id: str
    name: str | None = None
    props: dict[str, Any] = field(default_factory=dict)
    types: list[str] = field(default_factory=list)

    @property
    def is_cvt(self) -> bool:
        """A MID without a name (a compound-value node)."""
        return self.name is None and is_mid(self.id)

    @property
    def display_name(self) -> str | None:
        """The stored name: the first name seen, else the id itself when it is not a MID."""
        return self.name if self.name is not None else (None if is_mid(self.id) else self.id)

    def add_property(self, key: str, value: Any) -> None:
        """Several values of one key become a list (no repeats), as the writer always did."""
        if key not in self.props:
            self.props[key] = value
            return
        old = self.props[key]
        values = old if isinstance(old, list) else [old]
        if value not in values:
            self.props[key] = values + [value]


class Spill:
    """The spill files of one input file (``folder/edges``, ``folder/nodes``) while it is parsed."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.edges_path = folder / "edges"
        self.nodes_path = folder / "nodes"
        self._edges = open(self.edges_path, "w", encoding="utf-8", buffering=1 << 20)
        self._nodes = open(self.nodes_path, "w", encoding="utf-8", buffering=1 << 20)
        self._recent: set[str] = set()
        self.wrote_anything = False
        #: literal property key -> kinds of value seen (``int``, ``float``, ``bool``, ``str``)
        self.prop_kinds: dict[str, set[str]] = {}

    def _appears(self, eid: str) -> None:
        if eid in self._recent:
            return
        if len(self._recent) >= RECENT_IDS:
            self._recent.clear()
        self._recent.add(eid)
        self._nodes.write(f"{eid}\ta\t\n")

    def triple(self, head: str, relation: str, tail: str) -> None:
        self.wrote_anything = True
        h, t = escape(head), escape(tail)
        self._edges.write(f"{escape(relation)}\t{h}\t{t}\n")
        self._appears(h)
        self._appears(t)

    def name(self, entity: str, name: str) -> None:
        self.wrote_anything = True
        self._nodes.write(f"{escape(entity)}\tn\t{json.dumps(name, ensure_ascii=False)}\n")

    def literal(self, entity: str, key: str, value: Any) -> None:
        self.wrote_anything = True
        self.prop_kinds.setdefault(key, set()).add(type(value).__name__)
        self._nodes.write(f"{escape(entity)}\tp\t{escape(key)}\t{json.dumps(value, ensure_ascii=False)}\n")

    def entity_type(self, entity: str, type_: str) -> None:
        self.wrote_anything = True
        self._nodes.write(f"{escape(entity)}\tt\t{escape(type_)}\n")

    def columns(self, ntriples_block: Any) -> None:
        """A block's common lines at once (:class:`loaders.ntriples.Block`, whose ids and names need no
        escaping): its triples, an ``a`` line per entity they name, its names and its types."""
        rel, head, tail = ntriples_block.edges
        _, named, names = ntriples_block.names
        _, typed, types, _ = ntriples_block.types
        if len(rel) or len(named) or len(typed):
            self.wrote_anything = True
        import pyarrow as pa
        import pyarrow.compute as pc

        self._edges.flush()
        self._edges.buffer.write(_lines(rel, head, tail))
        self._nodes.flush()
        seen = pc.unique(pa.concat_arrays([head, tail])) if len(rel) else head
        self._nodes.buffer.write(_lines(seen, "a", ""))
        self._nodes.buffer.write(_lines(named, "n", names))
        self._nodes.buffer.write(_lines(typed, "t", types))

    def close(self) -> None:
        self._edges.close()
        self._nodes.close()
        self._recent.clear()

    def sort(self) -> "SortedSpill":
        """Sort both files in place (edges de-duplicated); returns the sorted pair with its counts."""
        self.close()
        run_sorts([(["-u"], [self.edges_path], self.edges_path),
                   (["-s", "-t", "\t", "-k1,1"], [self.nodes_path], self.nodes_path)], self.folder)
        return SortedSpill(self.edges_path, self.nodes_path, count_lines(self.edges_path), dict(self.prop_kinds))


def _lines(*columns: Any) -> Any:
    """pyarrow string columns (or constant strings) as tab-separated lines, one bytes buffer."""
    import pyarrow.compute as pc

    if not len(columns[0]):
        return b""
    last = pc.binary_join_element_wise(columns[-1], "", "\n")
    return joined_lines(pc.binary_join_element_wise(*columns[:-1], last, "\t"))


@dataclass
class SortedSpill:
    """Sorted spill files: ``edges`` unique lines by (relation, head, tail), ``nodes`` grouped by id."""

    edges: Path
    nodes: Path
    triples: int
    prop_kinds: dict[str, set[str]]


def run_sorts(jobs: Sequence[tuple[Sequence[str], Sequence[Path], Path]], tmp: Path) -> None:
    """GNU sort in the C locale with bounded memory, one process per job ``(options, inputs, output)``, all at
    once (each within ``SGR_SORT_MEMORY``; ``-o`` may name one of the inputs)."""
    exe = shutil.which("sort")
    if exe is None:
        raise LoadError("GNU `sort` was not found on PATH (coreutils); the loader sorts its spill files with it")
    memory = read_settings(LoadSettings).sort_memory
    procs = [(output, subprocess.Popen([exe, *options, "-S", memory, "-T", str(tmp), "-o", str(output),
                                        *map(str, inputs)], env={**os.environ, "LC_ALL": "C"},
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
             for options, inputs, output in jobs]
    errors = [proc.communicate()[1] for _, proc in procs]
    for (output, proc), err in zip(procs, errors):
        if proc.returncode != 0:
            raise LoadError(f"sorting the spill file {output} failed: {err.strip()[:300]} "
                            f"(is there room in {tmp}? set TMPDIR to a larger disk)")


def sort_parts(folders: Sequence[Path], folder: Path, prop_kinds: dict[str, set[str]]) -> SortedSpill:
    """The spill files of one input parsed in parts (:mod:`loaders.parallel`; ``folders`` in input order)
    sorted together into ``folder``: ``sort`` reads its inputs in the order given, so the stable sort of the
    ``nodes`` facts keeps input order across the parts."""
    edges, nodes = folder / "edges", folder / "nodes"
    run_sorts([(["-u"], [f / "edges" for f in folders], edges),
               (["-s", "-t", "\t", "-k1,1"], [f / "nodes" for f in folders], nodes)], folder)
    for f in folders:
        (f / "edges").unlink()
        (f / "nodes").unlink()
    return SortedSpill(edges, nodes, count_lines(edges), prop_kinds)


def merge_sorted(spills: Sequence[SortedSpill], folder: Path) -> SortedSpill:
    """One sorted spill for several files (``sort -m``: a merge, no re-sort)."""
    if len(spills) == 1:
        return spills[0]
    edges, nodes = folder / "edges.all", folder / "nodes.all"
    run_sorts([(["-m", "-u"], [s.edges for s in spills], edges),
               (["-m", "-s", "-t", "\t", "-k1,1"], [s.nodes for s in spills], nodes)], folder)
    kinds: dict[str, set[str]] = {}
    for s in spills:
        for key, ks in s.prop_kinds.items():
            kinds.setdefault(key, set()).update(ks)
    return SortedSpill(edges, nodes, count_lines(edges), kinds)


def count_lines(path: Path) -> int:
    n = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            n += block.count(b"\n")
    return n


def count_entities(nodes: Path) -> tuple[int, int]:
    """(entities, CVTs) of a sorted ``nodes`` spill without building the groups."""
    entities = cvts = 0
    current, named = None, False
    with open(nodes, encoding="utf-8") as fh:
        for line in fh:
            eid, kind, _ = line.split("\t", 2)
            if eid != current:
                if current is not None and not named and is_mid(unescape(current)):
                    cvts += 1
                entities += 1
                current, named = eid, False
            named = named or kind == "n"
    if current is not None and not named and is_mid(unescape(current)):
        cvts += 1
    return entities, cvts


def entity_groups(nodes: Path) -> Iterator[EntityFacts]:
    """One :class:`EntityFacts` per entity of a sorted ``nodes`` spill."""
    current: EntityFacts | None = None
    current_key = None
    loads = json.loads
    with open(nodes, encoding="utf-8") as fh:
        for line in fh:
            eid, kind, rest = line.split("\t", 2)
            if eid != current_key:  # equal escaped ids are equal ids
                if current is not None:
                    yield current
                current = EntityFacts(unescape(eid))
                current_key = eid
            if kind == "a":
                continue
            rest = rest[:-1] if rest.endswith("\n") else rest
            if kind == "n":
                if current.name is None:  # JSON text: without a backslash, the characters between the quotes
                    current.name = rest[1:-1] if "\\" not in rest else loads(rest)
            elif kind == "p":
                key, value = rest.split("\t", 1)
                current.add_property(unescape(key), loads(value))
            elif kind == "t":
                ty = unescape(rest)
                if ty not in current.types:
                    current.types.append(ty)
    if current is not None:
        yield current


def edge_rows(edges: Path, by_count: bool = False) -> Iterator[tuple[str, str, str]]:
    """``(head, relation, tail)`` of a sorted ``edges`` spill, grouped by relation then head; ``by_count``: the
    relation with the most triples first (:func:`edge_blocks`), else in name order."""
    blocks = edge_blocks(edges) if by_count else [(0, "", 0, -1)]
    with open(edges, "rb") as fh:
        for _, _, start, end in blocks:
            fh.seek(start)
            left = end - start
            while left != 0:
                raw = fh.readline()
                if not raw:
                    break
                left -= len(raw)
                rel, head, tail = raw.decode("utf-8").rstrip("\n").split("\t")
                yield unescape(head), unescape(rel), unescape(tail)


def edge_blocks(edges: Path) -> list[tuple[int, str, int, int]]:
    """``(triples, relation, start, end)``: the byte range of each relation's lines in a sorted ``edges`` spill,
    the relation with the most triples first (ties by name). Writing relationships in this order puts the
    most frequent types first in each dense node's list of types, which Neo4j (its importer and its store)
    walks from the front to find a relationship's type (see ``bench/experiments/loading-profile.md``)."""
    blocks = []
    current, start, count, position = None, 0, 0, 0
    with open(edges, "rb") as fh:
        for line in fh:
            rel = line[:line.index(b"\t")]
            if rel != current:
                if current is not None:
                    blocks.append((count, current.decode("utf-8"), start, position))
                current, start, count = rel, position, 0
            count += 1
            position += len(line)
    if current is not None:
        blocks.append((count, current.decode("utf-8"), start, position))
    blocks.sort(key=lambda b: (-b[0], b[1]))
    return [(n, unescape(rel), start, end) for n, rel, start, end in blocks]
