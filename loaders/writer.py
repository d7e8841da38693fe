"""Batched, idempotent, resumable writes of entities and triples into Neo4j.

Every format parser in ``loaders/`` fills a :class:`GraphBatch` (entities with names and literal
properties, plus de-duplicated ``(head, relation, tail)`` triples); :func:`write_graph` puts it
into the graph model of :mod:`sgr.store` with as few round trips and as little server work as
possible, while staying exact when a load is repeated or resumed after ``kill -9``:

0. **Bulk mode.** When the store holds no ``:Entity`` yet and the batch is large
   (``BULK_MIN_ENTITIES``), the full-text index ``entity_name`` is dropped first and built once
   after the load (``ensure_schema`` waits until it is online, inside the timed write): Lucene
   updates per transaction cost about as much server CPU as creating the nodes. A load killed in
   bulk mode leaves the index missing until the next ``ensure_schema`` (every load starts with one).
1. **Which entities exist?** One ``UNWIND $ids … MATCH (e:Entity {id})`` per 50k ids (index seeks)
   returns the internal ids of the entities already stored.
2. **New entities** are written with ``CREATE`` (``:Entity`` or ``:Entity:CVT``), returning their
   internal ids; the ``entity_id`` uniqueness constraint still guards them: should another writer
   have created one of those ids in the meantime, the batch fails as a whole and is re-run with
   ``MERGE``. **Existing entities** get a name only if they had none (``coalesce``), and lose
   ``:CVT`` once they have a name ("names that arrive later remove :CVT").
3. **Relationships** are matched by internal id (``NodeByIdSeek``, cheaper than an index seek) and
   written with Neo4j 5.26 dynamic types (``CREATE (h)-[:$(type)]->(t)``), so a graph with a
   thousand relation types (the WebQSP slice has 1,157) needs no more round trips than one with
   nine. A type that has no relationship yet when the load starts (``db.relationshipTypes()``
   lists only types in use) is written with ``CREATE`` — the triples are de-duplicated in
   :class:`GraphBatch`, so this is exact; a type that already has some (a second load, or a load
   resumed after a kill) is written with ``MERGE``, so nothing is ever duplicated.
   Batches are spread over ``workers`` threads (one session each); a deadlock between them is a
   transient error that the driver retries, and a retried transaction was rolled back first.
4. The ``(:Relation {name, text})`` vocabulary is merged last. ``record_source`` writes the
   ``(:Source)`` record once a file is completely in, so a load that died half-way leaves none.

Each batch is its own transaction: a load killed mid-way keeps what it committed, and running it
again completes it with exact counts.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from neo4j.exceptions import ConstraintError

from sgr.graph.store import GraphStore, is_mid, quote_identifier, relation_text

ProgressFn = Callable[[int], None]

#: Rows per write transaction (nodes and relationships).
DEFAULT_BATCH_SIZE = 20_000
#: Threads writing relationship batches concurrently. 1 by default: with 2, transactions that touch
#: the same dense nodes deadlock (Neo4j detects it; the driver retries after ~1 s), which on the
#: WebQSP slice cost more than the second thread saved.
DEFAULT_WORKERS = 1
#: A load of at least this many entities into a store without entities builds the full-text
#: index after the load instead of updating it per transaction (about 2x faster node writes).
BULK_MIN_ENTITIES = 5_000
FULLTEXT_INDEX = "entity_name"
#: Property keys a literal may not overwrite (they are the graph model's own).
RESERVED_KEYS = frozenset({"id", "name"})


@dataclass
class GraphBatch:
    """Entities and triples parsed from one or more files, de-duplicated.

    ``names[id]`` is the entity's name (``None`` for a MID without a name so far: a CVT unless a
    name arrives later); ``props[id]`` its literal properties; ``triples`` the distinct triples.
    """

    names: dict[str, str | None] = field(default_factory=dict)
    props: dict[str, dict[str, Any]] = field(default_factory=dict)
    triples: set[tuple[str, str, str]] = field(default_factory=set)

    def add_entity(self, entity_id: str, name: str | None = None) -> None:
        """Add an entity; a name fills in a missing one, the first name seen is kept."""
        if self.names.get(entity_id) is None:
            self.names[entity_id] = name

    def add_triple(self, head: str, relation: str, tail: str) -> None:
        """Add ``(head, relation, tail)``; non-MID ids are their own names."""
        if head not in self.names or self.names[head] is None:
            self.add_entity(head, None if is_mid(head) else head)
        if tail not in self.names or self.names[tail] is None:
            self.add_entity(tail, None if is_mid(tail) else tail)
        self.triples.add((head, relation, tail))

    def add_property(self, entity_id: str, key: str, value: Any) -> None:
        """Add a literal property; several values of one key become a list (no repeats)."""
        self.add_entity(entity_id, None if is_mid(entity_id) else entity_id)
        bag = self.props.setdefault(entity_id, {})
        if key not in bag:
            bag[key] = value
            return
        old = bag[key]
        values = old if isinstance(old, list) else [old]
        if value not in values:
            bag[key] = values + [value]

    def __len__(self) -> int:
        return len(self.triples)


@dataclass
class WriteStats:
    """What :func:`write_graph` did."""

    entities: int
    new_entities: int
    cvts: int
    triples: int
    relation_types: int
    seconds: float
    created_with: dict[str, str] = field(default_factory=dict)

    @property
    def triples_per_s(self) -> float:
        return self.triples / self.seconds if self.seconds else 0.0


# -- Cypher ----------------------------------------------------------------------------------
EXISTING_QUERY = "UNWIND $ids AS k MATCH (e:Entity {id: k}) RETURN collect(k) AS ks, collect(id(e)) AS ids"
CREATE_NAMED_QUERY = "UNWIND $rows AS row CREATE (e:Entity {id: row[0], name: row[1]}) RETURN collect(row[0]) AS ks, collect(id(e)) AS ids"
CREATE_CVT_QUERY = "UNWIND $rows AS row CREATE (e:Entity:CVT {id: row[0]}) RETURN collect(row[0]) AS ks, collect(id(e)) AS ids"
MERGE_NAMED_QUERY = ("UNWIND $rows AS row MERGE (e:Entity {id: row[0]}) "
                     "SET e.name = coalesce(e.name, row[1]) REMOVE e:CVT RETURN collect(row[0]) AS ks, collect(id(e)) AS ids")
MERGE_CVT_QUERY = ("UNWIND $rows AS row MERGE (e:Entity {id: row[0]}) "
                   "ON CREATE SET e:CVT RETURN collect(row[0]) AS ks, collect(id(e)) AS ids")
UPDATE_NAME_QUERY = ("UNWIND $rows AS row MATCH (e) WHERE id(e) = row[0] "
                     "SET e.name = coalesce(e.name, row[1]) REMOVE e:CVT")
PROPS_QUERY = "UNWIND $rows AS row MATCH (e) WHERE id(e) = row[0] SET e += row[1]"
RELATION_QUERY = "UNWIND $rows AS row MERGE (r:Relation {name: row.name}) SET r.text = row.text"
REL_CREATE_QUERY = ("UNWIND $rows AS row MATCH (h) WHERE id(h) = row[0] MATCH (t) WHERE id(t) = row[2] "
                    "CREATE (h)-[:$(row[1])]->(t)")
REL_MERGE_QUERY = ("UNWIND $rows AS row MATCH (h) WHERE id(h) = row[0] MATCH (t) WHERE id(t) = row[2] "
                   "MERGE (h)-[:$(row[1])]->(t)")


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """Consecutive slices of at most ``size`` items."""
    for i in range(0, len(items), size):
        yield items[i:i + size]


def iter_chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """Lists of at most ``size`` items from any iterable."""
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def existing_relationship_count(store: GraphStore, rel_type: str) -> int:
    """Relationships of one type (count store, no scan)."""
    return store.read(f"MATCH ()-[r:{quote_identifier(rel_type)}]->() RETURN count(r) AS n")[0]["n"]


def types_in_use(store: GraphStore) -> set[str]:
    """Relationship types that have at least one relationship now."""
    return {r["t"] for r in store.read("CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType AS t")}


def _clean_props(props: dict[str, Any]) -> dict[str, Any]:
    """Neo4j stores scalars or homogeneous lists; a mixed list becomes a list of strings."""
    out: dict[str, Any] = {}
    for key, value in props.items():
        if key in RESERVED_KEYS:
            key = key + "_"
        if isinstance(value, list) and len({type(v) for v in value}) > 1:
            value = [str(v) for v in value]
        out[key] = value
    return out


def _write_entities(store: GraphStore, batch: GraphBatch, batch_size: int) -> tuple[dict[str, int], int]:
    """Steps 1 and 2 of the module doc; returns (entity id -> internal id, entities created)."""
    ids = list(batch.names)
    internal: dict[str, int] = {}
    for part in chunks(ids, 50_000):
        res = store.read(EXISTING_QUERY, {"ids": list(part)})[0]
        internal.update(zip(res["ks"], res["ids"]))

    named_new: list[list[Any]] = []
    cvt_new: list[list[Any]] = []
    named_old: list[list[Any]] = []
    for eid, name in batch.names.items():
        if name is None and not is_mid(eid):
            name = eid
        if eid in internal:
            if name is not None:
                named_old.append([internal[eid], name])
        elif name is None:
            cvt_new.append([eid])
        else:
            named_new.append([eid, name])

    def create(rows: Sequence[list[Any]], create_q: str, merge_q: str) -> None:
        for part in chunks(rows, batch_size):
            try:
                res = store.write(create_q, {"rows": list(part)})
            except ConstraintError:  # another writer created some of them meanwhile
                res = store.write(merge_q, {"rows": list(part)})
            internal.update(zip(res[0]["ks"], res[0]["ids"]))

    create(named_new, CREATE_NAMED_QUERY, MERGE_NAMED_QUERY)
    create(cvt_new, CREATE_CVT_QUERY, MERGE_CVT_QUERY)
    for part in chunks(named_old, batch_size):
        store.write(UPDATE_NAME_QUERY, {"rows": list(part)})
    prop_rows = [[internal[eid], _clean_props(p)] for eid, p in batch.props.items() if p]
    for part in chunks(prop_rows, batch_size):
        store.write(PROPS_QUERY, {"rows": list(part)})
    return internal, len(named_new) + len(cvt_new)


def write_graph(store: GraphStore, batch: GraphBatch, batch_size: int = DEFAULT_BATCH_SIZE,
                progress: ProgressFn | None = None, workers: int = DEFAULT_WORKERS) -> WriteStats:
    """Write ``batch`` into Neo4j (schema ensured first). ``progress(n)`` is called per committed triples."""
    t0 = time.perf_counter()
    store.ensure_schema()
    bulk = len(batch.names) >= BULK_MIN_ENTITIES and entity_count(store) == 0
    if bulk:  # step 0: an empty store gets its full-text index built once, after the load
        store.write(f"DROP INDEX {FULLTEXT_INDEX} IF EXISTS")
    try:
        stats = _write_all(store, batch, batch_size, progress, workers)
    finally:
        if bulk:
            store.ensure_schema()  # re-creates the full-text index and waits until it is online
    stats.seconds = time.perf_counter() - t0
    return stats


def entity_count(store: GraphStore) -> int:
    """Number of ``:Entity`` nodes (count store, no scan)."""
    return store.read("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"]


def _write_all(store: GraphStore, batch: GraphBatch, batch_size: int, progress: ProgressFn | None,
               workers: int) -> WriteStats:
    in_use = types_in_use(store)
    internal, new_entities = _write_entities(store, batch, batch_size)

    by_type: dict[str, list[list[Any]]] = defaultdict(list)
    for h, r, t in batch.triples:
        by_type[r].append([internal[h], r, internal[t]])
    created_with = {r: ("MERGE" if r in in_use else "CREATE") for r in by_type}
    # one job = one transaction of rows of the same verb; big types are split, small ones packed
    jobs: list[tuple[str, list[list[Any]]]] = []
    for verb in ("CREATE", "MERGE"):
        rows: list[list[Any]] = []
        for r in sorted(by_type, key=lambda r: -len(by_type[r])):
            if created_with[r] == verb:
                rows.extend(sorted(by_type[r], key=itemgetter(0)))
        jobs.extend((verb, list(part)) for part in chunks(rows, batch_size))

    lock = threading.Lock()

    def run(job: tuple[str, list[list[Any]]]) -> None:
        verb, rows = job
        store.write(REL_CREATE_QUERY if verb == "CREATE" else REL_MERGE_QUERY, {"rows": rows})
        if progress:
            with lock:
                progress(len(rows))

    if workers > 1 and len(jobs) > 1:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sgr-load") as pool:
            for _ in pool.map(run, jobs):
                pass
    else:
        for job in jobs:
            run(job)

    if by_type:
        store.write(RELATION_QUERY, {"rows": [{"name": r, "text": relation_text(r)} for r in sorted(by_type)]})
    cvts = sum(1 for eid, name in batch.names.items() if name is None and is_mid(eid))
    return WriteStats(entities=len(batch.names), new_entities=new_entities, cvts=cvts,
                      triples=len(batch.triples), relation_types=len(by_type),
                      seconds=0.0, created_with=created_with)


def record_source(store: GraphStore, path: str, sha256: str, triples: int, **extra: Any) -> None:
    """Record that ``path`` (with this content hash) was loaded completely (``extra``: more properties)."""
    store.write("MERGE (s:Source {path: $path}) SET s.sha256 = $sha, s.triples = $n, "
                "s.loaded_at = datetime(), s += $extra",
                {"path": path, "sha": sha256, "n": triples, "extra": extra})
