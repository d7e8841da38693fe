"""Batched, idempotent, resumable transactional writes of entities and triples into Neo4j.

The writers take streams, never a whole graph: :class:`~loaders.spill.EntityFacts` one per entity
(each entity once, with all its facts) and ``(head, relation, tail)`` rows without repeats, grouped
by relation. :mod:`loaders.spill` produces both from files of any size with bounded memory;
:func:`write_graph` produces them from an in-memory :class:`GraphBatch` (tests, small graphs).
The counts stay exact when a load is repeated or resumed after ``kill -9``:

0. **Deferred name indexes.** When the store holds no ``:Entity`` yet and the input is large
   (``DEFER_INDEX_MIN_TRIPLES``), the full-text index ``entity_name`` and the range index
   ``entity_name_exact`` are left out of the schema the load starts with (dropped if an earlier load left them) and
   built once after the load (``ensure_schema`` waits until it is online, inside the timed write): Lucene
   updates per transaction cost about as much server CPU as creating the nodes. When every entity of the
   load fits in :class:`NodeIds` (so no relationship needs the ``:Entity(id)`` index to find its ends), the
   ``entity_id`` uniqueness constraint is left out too and created after the load, which checks the ids once
   (about 40% of node-creation server CPU was its index updates; the spill already made the ids unique). A load
   killed then leaves them missing until the next ``ensure_schema`` (every load starts with one).
1. **Entities**, ``batch_size`` per transaction, ``workers`` transactions at a time (entities are
   distinct across chunks, so concurrent chunks never lock the same node): unless the store had no
   entity when the load began, one ``UNWIND $ids … MATCH (e:Entity {id})`` (index seeks) finds
   those already stored; new ones are
   created with ``CREATE`` (``:Entity`` or ``:Entity:CVT``, with name, ``types`` and literal
   properties in one ``SET e = row``). The ``entity_id`` uniqueness constraint still guards them:
   should another writer have created one meanwhile, the chunk fails as a whole and is re-run with
   the existing entities treated as existing. **Existing entities** get a name only if they had
   none (``coalesce``), the new types appended to their ``types``, the literal properties set, and
   lose ``:CVT`` once they have a name ("names that arrive later remove :CVT").
2. **Relationships** are written with Neo4j 5.26 dynamic types (``CREATE (h)-[:$(type)]->(t)``),
   the end nodes matched by internal node id (``NodeByIdSeek``) when step 1 remembered both
   (:class:`NodeIds`, bounded), else by the static ``:Entity(id)`` index (the label is never
   dynamic, so the planner seeks; only the relationship type is dynamic, resolved per row). A type
   that has no relationship yet when the file's load starts (``db.relationshipTypes()`` lists only
   types in use) is written with ``CREATE`` — the rows are de-duplicated, so this is exact; a type
   that already has some (a second load, or one resumed after a kill) with ``MERGE``, so nothing is
   ever duplicated. With ``workers > 1`` the rows are partitioned so that concurrent transactions
   never touch the same node (:mod:`loaders.schedule`), so they cannot deadlock on dense nodes.
3. The ``(:Relation {name, text})`` vocabulary is merged last. ``record_source`` writes the
   ``(:Source)`` record once a file is completely in, so a load that died half-way leaves none.

Each batch is its own transaction: a load killed mid-way keeps what it committed, and running it
again completes it with exact counts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from neo4j.exceptions import ConstraintError

from loaders.schedule import partition_rounds
from loaders.spill import EntityFacts
from sgr.graph.store import SCHEMA_STATEMENTS, GraphStore, is_mid, relation_text

ProgressFn = Callable[[int], None]

#: Rows per write transaction (nodes and relationships).
DEFAULT_BATCH_SIZE = 20_000
#: Transactions in flight at once. 1 by default: on a 2-core machine the server is the bottleneck.
DEFAULT_WORKERS = 1
#: A load of at least this many triples into a store without entities builds the full-text
#: index after the load instead of updating it per transaction (about 2x faster node writes).
DEFER_INDEX_MIN_TRIPLES = 5_000
#: Indexes on ``Entity.name`` built once after a large load into an empty store.
DEFERRED_INDEXES = ("entity_name", "entity_name_exact")
#: The uniqueness constraint on ``Entity.id``, also re-created after such a load when every entity's node id is remembered.
DEFERRED_CONSTRAINT = "entity_id"
#: Property keys a literal may not overwrite (they are the graph model's own).
RESERVED_KEYS = frozenset({"id", "name", "types"})


@dataclass
class GraphBatch:
    """A small graph held in memory, de-duplicated (tests and callers with a few thousand triples).

    ``names[id]`` is the entity's name (``None`` for a MID without a name so far: a CVT unless a
    name arrives later); ``props[id]`` its literal properties; ``types[id]`` its types;
    ``triples`` the distinct triples. Files are loaded through :mod:`loaders.spill` instead.
    """

    names: dict[str, str | None] = field(default_factory=dict)
    props: dict[str, dict[str, Any]] = field(default_factory=dict)
    types: dict[str, list[str]] = field(default_factory=dict)
    triples: set[tuple[str, str, str]] = field(default_factory=set)

    def add_entity(self, entity_id: str, name: str | None = None) -> None:
        """Add an entity; a name fills in a missing one, the first name seen is kept."""
        if self.names.get(entity_id) is None:
            self.names[entity_id] = name

    def add_triple(self, head: str, relation: str, tail: str) -> None:
        """Add ``(head, relation, tail)``; non-MID ids are their own names."""
        for eid in (head, tail):
            if self.names.get(eid) is None:
                self.add_entity(eid, None if is_mid(eid) else eid)
        self.triples.add((head, relation, tail))

    def add_property(self, entity_id: str, key: str, value: Any) -> None:
        """Add a literal property; several values of one key become a list (no repeats)."""
        self.add_entity(entity_id, None if is_mid(entity_id) else entity_id)
        facts = EntityFacts(entity_id, props=self.props.setdefault(entity_id, {}))
        facts.add_property(key, value)

    def add_type(self, entity_id: str, type_: str) -> None:
        self.add_entity(entity_id, None if is_mid(entity_id) else entity_id)
        bag = self.types.setdefault(entity_id, [])
        if type_ not in bag:
            bag.append(type_)

    def entities(self) -> Iterator[EntityFacts]:
        for eid, name in self.names.items():
            yield EntityFacts(eid, name, self.props.get(eid, {}), self.types.get(eid, []))

    def sorted_triples(self) -> list[tuple[str, str, str]]:
        """The triples grouped by relation, then head (the order the spill files give)."""
        return sorted(self.triples, key=lambda t: (t[1], t[0], t[2]))

    def __len__(self) -> int:
        return len(self.triples)


@dataclass
class WriteStats:
    """What a write did."""

    entities: int = 0
    new_entities: int = 0
    cvts: int = 0
    triples: int = 0
    relation_types: int = 0
    seconds: float = 0.0
    created_with: dict[str, str] = field(default_factory=dict)

    @property
    def triples_per_s(self) -> float:
        return self.triples / self.seconds if self.seconds else 0.0


# -- Cypher ----------------------------------------------------------------------------------
EXISTING_QUERY = "UNWIND $ids AS k MATCH (e:Entity {id: k}) RETURN collect(k) AS ks, collect(id(e)) AS ids"
CREATE_NAMED_QUERY = "UNWIND $rows AS row CREATE (e:Entity) SET e = row RETURN collect(row.id) AS ks, collect(id(e)) AS ids"
CREATE_CVT_QUERY = "UNWIND $rows AS row CREATE (e:Entity:CVT) SET e = row RETURN collect(row.id) AS ks, collect(id(e)) AS ids"
UPDATE_QUERY = ("UNWIND $rows AS row MATCH (e:Entity {id: row.id}) "
                "SET e.name = coalesce(e.name, row.name), e += row.props "
                "SET e.types = CASE WHEN row.types IS NULL THEN e.types "
                "ELSE coalesce(e.types, []) + [x IN row.types WHERE NOT x IN coalesce(e.types, [])] END "
                "WITH e WHERE e.name IS NOT NULL REMOVE e:CVT")
RELATION_QUERY = "UNWIND $rows AS row MERGE (r:Relation {name: row.name}) SET r.text = row.text"
_BY_KEY = "UNWIND $rows AS row MATCH (h:Entity {id: row[0]}) MATCH (t:Entity {id: row[2]}) "
_BY_NODE_ID = "UNWIND $rows AS row MATCH (h) WHERE id(h) = row[0] MATCH (t) WHERE id(t) = row[2] "
#: (verb, rows keyed by internal node id?) -> query
REL_QUERIES = {
    ("CREATE", False): _BY_KEY + "CREATE (h)-[:$(row[1])]->(t)",
    ("MERGE", False): _BY_KEY + "MERGE (h)-[:$(row[1])]->(t)",
    ("CREATE", True): _BY_NODE_ID + "CREATE (h)-[:$(row[1])]->(t)",
    ("MERGE", True): _BY_NODE_ID + "MERGE (h)-[:$(row[1])]->(t)",
}
#: Entities whose internal node id is remembered during a load (about 110 bytes each): a
#: relationship whose two ends are remembered is matched by node id (``NodeByIdSeek``, about 5×
#: cheaper than the two unique-index seeks), the others by the ``:Entity(id)`` index.
NODE_ID_CACHE = 4_000_000


class NodeIds(dict):
    """Entity id → internal node id of the entities written in this load, up to ``NODE_ID_CACHE``."""

    def remember(self, keys: Sequence[str], ids: Sequence[int]) -> None:
        room = NODE_ID_CACHE - len(self)
        if room > 0:
            self.update(zip(keys[:room], ids[:room]))


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


def run_bounded(fn: Callable[[Any], Any], jobs: Iterable[Any], workers: int) -> list[Any]:
    """``fn`` over ``jobs`` on ``workers`` threads with at most ``2 × workers`` jobs pulled ahead
    (so a streamed input is never read whole); results in order. One thread runs them inline."""
    if workers <= 1:
        return [fn(job) for job in jobs]
    results: list[Any] = []
    pending: list[Future[Any]] = []
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sgr-load") as pool:
        for job in jobs:
            pending.append(pool.submit(fn, job))
            if len(pending) >= 2 * workers:
                results.append(pending.pop(0).result())
        results.extend(f.result() for f in pending)
    return results


def types_in_use(store: GraphStore) -> set[str]:
    """Relationship types that have at least one relationship now."""
    return {r["t"] for r in store.read("CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType AS t")}


def entity_count(store: GraphStore) -> int:
    """Number of ``:Entity`` nodes (count store, no scan)."""
    return store.read("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"]


def clean_props(props: dict[str, Any]) -> dict[str, Any]:
    """Neo4j stores scalars or homogeneous lists; a mixed list becomes a list of strings; a literal
    named like one of the graph model's own keys gets a ``_`` suffix (``name`` → ``name_``)."""
    out: dict[str, Any] = {}
    for key, value in props.items():
        if key in RESERVED_KEYS:
            key = key + "_"
        if isinstance(value, list) and len({type(v) for v in value}) > 1:
            value = [str(v) for v in value]
        out[key] = value
    return out


def node_row(facts: EntityFacts) -> dict[str, Any]:
    """All properties of a new entity node (what ``SET e = row`` writes)."""
    row = clean_props(facts.props)
    row["id"] = facts.id
    name = facts.display_name
    if name is not None:
        row["name"] = name
    if facts.types:
        row["types"] = list(facts.types)
    return row


def _existing(store: GraphStore, chunk: list[EntityFacts], node_ids: NodeIds) -> set[str]:
    res = store.read(EXISTING_QUERY, {"ids": [f.id for f in chunk]})[0]
    node_ids.remember(res["ks"], res["ids"])
    return set(res["ks"])


def _write_entity_chunk(store: GraphStore, chunk: list[EntityFacts], node_ids: NodeIds, fresh: bool) -> tuple[int, int]:
    """Step 1 of the module doc for one chunk; returns (entities created, of which CVTs).
    ``fresh``: the store had no entity when this load began, so none of these can exist yet
    (the uniqueness constraint still catches a concurrent writer)."""
    existing = set() if fresh else _existing(store, chunk, node_ids)
    while True:
        named = [node_row(f) for f in chunk if f.id not in existing and not f.is_cvt]
        cvts = [node_row(f) for f in chunk if f.id not in existing and f.is_cvt]
        try:
            for query, rows in ((CREATE_NAMED_QUERY, named), (CREATE_CVT_QUERY, cvts)):
                if rows:
                    res = store.write(query, {"rows": rows})[0]
                    node_ids.remember(res["ks"], res["ids"])
            break
        except ConstraintError:  # another writer created some of them meanwhile: they exist now
            existing = _existing(store, chunk, node_ids)
    old = [{"id": f.id, "name": f.display_name, "props": clean_props(f.props), "types": f.types or None}
           for f in chunk if f.id in existing]
    if old:
        store.write(UPDATE_QUERY, {"rows": old})
    return len(named) + len(cvts), len(cvts)


def write_entities(store: GraphStore, entities: Iterable[EntityFacts], batch_size: int = DEFAULT_BATCH_SIZE,
                   workers: int = DEFAULT_WORKERS, node_ids: NodeIds | None = None,
                   fresh: bool = False) -> WriteStats:
    """Write a stream of entities (each id once); their node ids go to ``node_ids``."""
    stats = WriteStats()
    lock = threading.Lock()
    ids = node_ids if node_ids is not None else NodeIds()

    def run(chunk: list[EntityFacts]) -> None:
        created, _ = _write_entity_chunk(store, chunk, ids, fresh)
        with lock:
            stats.entities += len(chunk)
            stats.cvts += sum(1 for f in chunk if f.is_cvt)
            stats.new_entities += created

    run_bounded(run, iter_chunks(entities, batch_size), workers)
    return stats


def write_relationships(store: GraphStore, rows: Iterable[tuple[str, str, str]], in_use: set[str],
                        batch_size: int = DEFAULT_BATCH_SIZE, workers: int = DEFAULT_WORKERS,
                        progress: ProgressFn | None = None, node_ids: NodeIds | None = None) -> WriteStats:
    """Write distinct ``(head, relation, tail)`` rows (step 2 of the module doc)."""
    stats = WriteStats()
    lock = threading.Lock()
    ids = node_ids or {}

    def commit(part: Sequence[tuple[str, str, str]]) -> None:
        groups: dict[tuple[str, bool], list[list[Any]]] = {}
        for h, r, t in part:
            verb = "MERGE" if r in in_use else "CREATE"
            hi, ti = ids.get(h), ids.get(t)
            if hi is not None and ti is not None:
                groups.setdefault((verb, True), []).append([hi, r, ti])
            else:
                groups.setdefault((verb, False), []).append([h, r, t])
        for key, sel in groups.items():
            store.write(REL_QUERIES[key], {"rows": sel})
        with lock:
            for _, r, _ in part:
                if r not in stats.created_with:
                    stats.created_with[r] = "MERGE" if r in in_use else "CREATE"
            stats.triples += len(part)
        if progress:
            progress(len(part))

    if workers <= 1:
        for part in iter_chunks(rows, batch_size):
            commit(part)
    else:
        # a window of rows at a time, split into rounds of jobs that share no node
        for window in iter_chunks(rows, batch_size * workers * 4):
            for round_jobs in partition_rounds(window, workers):
                run_bounded(lambda job: [commit(p) for p in iter_chunks(job, batch_size)], round_jobs, workers)
    stats.relation_types = len(stats.created_with)
    return stats


def build_schema(store: GraphStore) -> None:
    """``store.ensure_schema()`` over a graph loaded without its indexes, with the populations overlapped: the
    indexes are created first (Neo4j populates them in the background), then the constraints, whose creation
    waits for its own index; then everything is awaited. In the order of ``SCHEMA_STATEMENTS`` (constraints
    first) each constraint's population ran alone before the indexes started (2M lines: 8 s, then 13 s)."""
    for stmt in SCHEMA_STATEMENTS:
        if stmt.startswith(("CREATE INDEX", "CREATE FULLTEXT INDEX")):
            store.write(stmt)
    store.ensure_schema()


def write_relation_vocabulary(store: GraphStore, relations: Iterable[str]) -> None:
    """Merge ``(:Relation {name, text})`` for each relation name."""
    rows = [{"name": r, "text": relation_text(r)} for r in sorted(set(relations))]
    for part in iter_chunks(rows, DEFAULT_BATCH_SIZE):
        store.write(RELATION_QUERY, {"rows": part})


def write_stream(store: GraphStore, entities: Iterable[EntityFacts], rows: Iterable[tuple[str, str, str]],
                 triples_hint: int, batch_size: int = DEFAULT_BATCH_SIZE, workers: int = DEFAULT_WORKERS,
                 progress: ProgressFn | None = None, entities_hint: int | None = None) -> WriteStats:
    """Steps 0–3 of the module doc: entities, then relationships, then the vocabulary. ``entities_hint``: at
    least the number of entities (with it, a fresh load may defer the ``entity_id`` constraint too)."""
    t0 = time.perf_counter()
    deferred: set[str] = set()  # what the schema starts without
    # left out now (dropped if an earlier load left them), built once after the load
    if triples_hint >= DEFER_INDEX_MIN_TRIPLES and entity_count(store) == 0:
        deferred = set(DEFERRED_INDEXES)
        for index in DEFERRED_INDEXES:
            store.write(f"DROP INDEX {index} IF EXISTS")
        if entities_hint is not None and entities_hint <= NODE_ID_CACHE:
            deferred.add(DEFERRED_CONSTRAINT)
            store.write(f"DROP CONSTRAINT {DEFERRED_CONSTRAINT} IF EXISTS")
    store.ensure_schema(skip=deferred)
    try:
        in_use = types_in_use(store)
        node_ids = NodeIds()
        ent = write_entities(store, entities, batch_size, workers, node_ids, fresh=entity_count(store) == 0)
        rel = write_relationships(store, rows, in_use, batch_size, workers, progress, node_ids)
        node_ids.clear()
        write_relation_vocabulary(store, rel.created_with)
    finally:
        if deferred:
            build_schema(store)  # re-creates what was dropped and waits until it is online
    return WriteStats(entities=ent.entities, new_entities=ent.new_entities, cvts=ent.cvts, triples=rel.triples,
                      relation_types=rel.relation_types, seconds=time.perf_counter() - t0,
                      created_with=rel.created_with)


def write_graph(store: GraphStore, batch: GraphBatch, batch_size: int = DEFAULT_BATCH_SIZE,
                progress: ProgressFn | None = None, workers: int = DEFAULT_WORKERS) -> WriteStats:
    """Write an in-memory :class:`GraphBatch` (schema ensured first)."""
    return write_stream(store, batch.entities(), batch.sorted_triples(), len(batch.triples),
                        batch_size, workers, progress)


def record_source(store: GraphStore, path: str, sha256: str, triples: int, **extra: Any) -> None:
    """Record that ``path`` (with this content hash) was loaded completely (``extra``: more properties)."""
    store.write("MERGE (s:Source {path: $path}) SET s.sha256 = $sha, s.triples = $n, "
                "s.loaded_at = datetime(), s += $extra",
                {"path": path, "sha": sha256, "n": triples, "extra": extra})
