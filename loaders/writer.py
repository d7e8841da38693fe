"""Batched, idempotent, resumable writes of entities and triples into Neo4j.

Every format parser in ``loaders/`` produces a :class:`GraphBatch` (entities with names and
literal properties, plus ``(head, relation, tail)`` triples); :func:`write_graph` puts it into the
graph model described in :mod:`sgr.store`:

* nodes: ``UNWIND $rows MERGE (e:Entity {id})`` — the uniqueness constraint makes this an index
  lookup; nodes with a MID and no name get ``:CVT``;
* relationships: grouped by type, one ``UNWIND`` query per batch. A type that has no relationship
  yet when the load starts is written with ``CREATE`` (triples are de-duplicated beforehand, so
  this is exact and much faster); a type that already has some — a second load, or a load resumed
  after a kill — is written with ``MERGE``, so nothing is ever duplicated;
* the ``(:Relation {name, text})`` vocabulary and a ``(:Source {path, sha256, triples, loaded_at})``
  record, written last, so a load that died half-way leaves no Source behind.

Each batch is its own transaction: a load killed mid-way keeps what it committed, and running it
again completes it.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sgr.store import GraphStore, is_mid, quote_identifier, relation_text

ProgressFn = Callable[[int], None]


@dataclass
class GraphBatch:
    """Entities and triples parsed from one or more files, de-duplicated."""

    names: dict[str, str | None] = field(default_factory=dict)
    props: dict[str, dict[str, Any]] = field(default_factory=dict)
    triples: set[tuple[str, str, str]] = field(default_factory=set)

    def add_entity(self, entity_id: str, name: str | None = None) -> None:
        current = self.names.get(entity_id)
        if current is None:
            self.names[entity_id] = name
        # else: keep the first name seen

    def add_triple(self, head: str, relation: str, tail: str) -> None:
        self.add_entity(head, None if is_mid(head) else head)
        self.add_entity(tail, None if is_mid(tail) else tail)
        self.triples.add((head, relation, tail))

    def add_property(self, entity_id: str, key: str, value: Any) -> None:
        self.add_entity(entity_id)
        bag = self.props.setdefault(entity_id, {})
        if key in bag:  # several values: keep a list
            old = bag[key]
            bag[key] = (old if isinstance(old, list) else [old]) + [value]
        else:
            bag[key] = value


@dataclass
class WriteStats:
    entities: int
    cvts: int
    triples: int
    relation_types: int
    seconds: float
    created_with: dict[str, str] = field(default_factory=dict)

    @property
    def triples_per_s(self) -> float:
        return self.triples / self.seconds if self.seconds else 0.0


NODE_QUERY = (
    "UNWIND $rows AS row "
    "MERGE (e:Entity {id: row.id}) "
    "ON CREATE SET e.name = row.name "
    "ON MATCH SET e.name = coalesce(e.name, row.name) "
    "SET e += row.props"
)
CVT_QUERY = "UNWIND $rows AS row MATCH (e:Entity {id: row.id}) WHERE e.name IS NULL SET e:CVT"
UNCVT_QUERY = "UNWIND $rows AS row MATCH (e:CVT {id: row.id}) WHERE e.name IS NOT NULL REMOVE e:CVT"
RELATION_QUERY = "UNWIND $rows AS row MERGE (r:Relation {name: row.name}) SET r.text = row.text"


def _rel_query(rel_type: str, create: bool) -> str:
    verb = "CREATE" if create else "MERGE"
    return ("UNWIND $rows AS row "
            "MATCH (h:Entity {id: row[0]}) MATCH (t:Entity {id: row[1]}) "
            f"{verb} (h)-[:{quote_identifier(rel_type)}]->(t)")


def existing_relationship_count(store: GraphStore, rel_type: str) -> int:
    return store.read(f"MATCH ()-[r:{quote_identifier(rel_type)}]->() RETURN count(r) AS n")[0]["n"]


def write_graph(store: GraphStore, batch: GraphBatch, batch_size: int = 10_000,
                progress: ProgressFn | None = None) -> WriteStats:
    """Write ``batch`` into Neo4j (schema ensured first). ``progress(n)`` is called per committed triples."""
    t0 = time.perf_counter()
    store.ensure_schema()

    node_rows = [{"id": eid, "name": name, "props": batch.props.get(eid, {})}
                 for eid, name in batch.names.items()]
    for i in range(0, len(node_rows), batch_size):
        store.write(NODE_QUERY, {"rows": node_rows[i:i + batch_size]})
    cvt_rows = [{"id": eid} for eid, name in batch.names.items() if name is None and is_mid(eid)]
    for i in range(0, len(cvt_rows), batch_size):
        store.write(CVT_QUERY, {"rows": cvt_rows[i:i + batch_size]})
    named_mids = [{"id": eid} for eid, name in batch.names.items() if name is not None and is_mid(eid)]
    for i in range(0, len(named_mids), batch_size):
        store.write(UNCVT_QUERY, {"rows": named_mids[i:i + batch_size]})

    by_type: dict[str, list[list[str]]] = defaultdict(list)
    for h, r, t in batch.triples:
        by_type[r].append([h, t])
    created_with: dict[str, str] = {}
    for rel_type in sorted(by_type):
        pairs = by_type[rel_type]
        pairs.sort()
        create = existing_relationship_count(store, rel_type) == 0
        created_with[rel_type] = "CREATE" if create else "MERGE"
        query = _rel_query(rel_type, create)
        for i in range(0, len(pairs), batch_size):
            chunk = pairs[i:i + batch_size]
            store.write(query, {"rows": chunk})
            if progress:
                progress(len(chunk))

    store.write(RELATION_QUERY, {"rows": [{"name": r, "text": relation_text(r)} for r in sorted(by_type)]})
    return WriteStats(entities=len(node_rows), cvts=len(cvt_rows), triples=len(batch.triples),
                      relation_types=len(by_type), seconds=time.perf_counter() - t0,
                      created_with=created_with)


def record_source(store: GraphStore, path: str, sha256: str, triples: int) -> None:
    """Record that ``path`` (with this content hash) was loaded completely."""
    store.write("MERGE (s:Source {path: $path}) SET s.sha256 = $sha, s.triples = $n, s.loaded_at = datetime()",
                {"path": path, "sha": sha256, "n": triples})


def iter_chunks(items: Iterable[Any], size: int) -> Iterable[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
