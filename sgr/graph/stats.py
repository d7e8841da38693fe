"""``sgr stats``: what is in the graph, and which file it came from.

Counts come from Neo4j's count store (``MATCH (n:Label) RETURN count(n)``, ``apoc.meta.stats``),
so they cost no scan. sgr's bookkeeping next to the data — nodes labelled
:data:`sgr.graph.store.BOOKKEEPING_LABELS` (``Relation``, ``Source``, ``SgrQuestion``, ``SgrMeta``) and
relationship types starting with ``SGR_`` — is left out of the data counts (a node is assumed to
carry at most one bookkeeping label, which holds for everything sgr writes).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from neo4j.exceptions import ClientError

from sgr.graph.store import BOOKKEEPING_LABELS, CVT, ENTITY, GraphStore, quote_identifier

BOOKKEEPING_REL_PREFIX = "SGR_"


@dataclass
class RelationCount:
    name: str
    count: int


@dataclass
class SourceInfo:
    path: str
    sha256: str
    triples: int
    loaded_at: str
    format: str | None = None


@dataclass
class GraphStats:
    """Data counts of the graph plus the loaded files."""

    nodes: int
    entities: int
    cvts: int
    relationships: int
    relation_types: int
    top_relations: list[RelationCount] = field(default_factory=list)
    sources: list[SourceInfo] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def relationship_counts(store: GraphStore) -> dict[str, int]:
    """Relationships per type in use (APOC's count-store read; one count query per type without APOC)."""
    try:
        rows = store.read("CALL apoc.meta.stats() YIELD relTypesCount RETURN relTypesCount AS c")
        return {t: n for t, n in rows[0]["c"].items() if n > 0}
    except ClientError:  # APOC not installed
        types = [r["t"] for r in store.read(
            "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType AS t")]
        out = {}
        for t in types:
            n = store.read(f"MATCH ()-[r:{quote_identifier(t)}]->() RETURN count(r) AS n")[0]["n"]
            if n:
                out[t] = n
        return out


def graph_stats(store: GraphStore, top: int = 10) -> GraphStats:
    """Counts of the data in ``store`` (bookkeeping left out) and its ``(:Source)`` records."""
    store.verify()
    total_nodes = store.read("MATCH (n) RETURN count(n) AS n")[0]["n"]
    bookkeeping = sum(store.read(f"MATCH (n:{quote_identifier(label)}) RETURN count(n) AS n")[0]["n"]
                      for label in BOOKKEEPING_LABELS)
    entities = store.read(f"MATCH (n:{ENTITY}) RETURN count(n) AS n")[0]["n"]
    cvts = store.read(f"MATCH (n:{CVT}) RETURN count(n) AS n")[0]["n"]
    per_type = {t: n for t, n in relationship_counts(store).items()
                if not t.startswith(BOOKKEEPING_REL_PREFIX)}
    ranked = sorted(per_type.items(), key=lambda kv: (-kv[1], kv[0]))
    sources = [SourceInfo(path=r["path"], sha256=r["sha256"] or "", triples=r["triples"] or 0,
                          loaded_at=str(r["loaded_at"]) if r["loaded_at"] is not None else "",
                          format=r["format"])
               for r in store.read("MATCH (s:Source) RETURN s.path AS path, s.sha256 AS sha256, "
                                   "s.triples AS triples, s.loaded_at AS loaded_at, s.format AS format "
                                   "ORDER BY s.loaded_at, s.path")]
    return GraphStats(nodes=total_nodes - bookkeeping, entities=entities, cvts=cvts,
                      relationships=sum(per_type.values()), relation_types=len(per_type),
                      top_relations=[RelationCount(t, n) for t, n in ranked[:top]], sources=sources)
