"""Access to the Neo4j graph store: the one place that opens drivers and sessions.

Graph model (see README):

* ``(:Entity {id, name, types})`` — ``id`` is the Freebase MID when there is one, else the name;
  unique constraint on ``id``, full-text index ``entity_name`` and range index ``entity_name_exact``
  on ``name``; ``types``: the Freebase ``type.object.type`` / ``common.topic.notable_types`` objects.
  Compound-value nodes (MIDs without a name) also carry ``:CVT``.
* one relationship type per relation, named as in Freebase (``location.country.languages_spoken``).
* ``(:Relation {name, text})`` — the relation vocabulary, ``text`` a readable form of ``name``.
* ``(:Source {path, sha256, triples, loaded_at})`` — what was loaded from which file.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import neo4j
from neo4j import GraphDatabase, READ_ACCESS, WRITE_ACCESS
from neo4j.exceptions import AuthError, ClientError, Neo4jError, ServiceUnavailable

from sgr.core.config import Neo4jSettings
from sgr.core.errors import CypherError, Neo4jUnavailable

ENTITY = "Entity"
CVT = "CVT"
RELATION = "Relation"
SOURCE = "Source"
#: Labels that sgr itself writes next to the data; ``sgr stats`` leaves them out of data counts.
BOOKKEEPING_LABELS = ("Relation", "Source", "SgrQuestion", "SgrMeta")

SCHEMA_STATEMENTS = (
    "CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (e:Entity) REQUIRE e.id IS UNIQUE",
    "CREATE CONSTRAINT relation_name IF NOT EXISTS FOR (r:Relation) REQUIRE r.name IS UNIQUE",
    "CREATE CONSTRAINT source_path IF NOT EXISTS FOR (s:Source) REQUIRE s.path IS UNIQUE",
    "CREATE FULLTEXT INDEX entity_name IF NOT EXISTS FOR (e:Entity) ON EACH [e.name]",
    # exact-name lookups (entity linking) seek instead of scanning every :Entity
    "CREATE INDEX entity_name_exact IF NOT EXISTS FOR (e:Entity) ON (e.name)",
)

# EXPLAIN's notifications are returned to the caller; keep the driver from also logging them.
logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)

_MID = re.compile(r"^[mg]\.[0-9a-z_]+$")


def is_mid(value: str) -> bool:
    """True for a Freebase machine id such as ``m.03_r3`` or ``g.11b6…``."""
    return bool(_MID.match(value))


def relation_text(name: str) -> str:
    """Readable form of a relation name: ``location.country.languages_spoken`` → ``location country languages spoken``."""
    return re.sub(r"\s+", " ", re.sub(r"[._]+", " ", name)).strip()


def quote_identifier(name: str) -> str:
    """Backtick-quote a label or relationship type for Cypher."""
    return "`" + name.replace("`", "``") + "`"


@dataclass
class QueryResult:
    """Rows of a query plus what Neo4j said about it."""

    rows: list[dict[str, Any]]
    seconds: float
    truncated: bool = False
    notifications: list[dict[str, Any]] = field(default_factory=list)


class GraphStore:
    """A Neo4j database reached over Bolt. Use as a context manager or call :meth:`close`.

    ``query_seconds`` accumulates time spent in Neo4j, for per-question cost records.
    """

    def __init__(self, uri: str, user: str = "neo4j", password: str = "", database: str = "neo4j",
                 query_timeout_s: float = 30.0, row_cap: int = 1000) -> None:
        self.uri = uri
        self.database = database
        self.query_timeout_s = query_timeout_s
        self.row_cap = row_cap
        self.query_seconds = 0.0
        self.query_count = 0
        auth = (user, password) if password else None
        try:
            self._driver = GraphDatabase.driver(uri, auth=auth, connection_timeout=5.0,
                                                max_connection_lifetime=3600)
        except ValueError as exc:  # bad URI scheme
            raise Neo4jUnavailable(f"invalid NEO4J_URI {uri!r}: {exc}") from exc

    @classmethod
    def from_settings(cls, settings: Neo4jSettings | None = None) -> "GraphStore":
        s = settings or Neo4jSettings()
        return cls(s.resolved_uri(), s.user, s.password, s.database, s.query_timeout_s, s.row_cap)

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._driver.close()

    def verify(self) -> None:
        """Raise :class:`Neo4jUnavailable` with a one-line hint when the server cannot be reached."""
        try:
            self._driver.verify_connectivity()
        except AuthError as exc:
            raise Neo4jUnavailable(f"Neo4j at {self.uri} refused the credentials: set NEO4J_USER/NEO4J_PASSWORD") from exc
        except (ServiceUnavailable, OSError, Neo4jError) as exc:
            raise Neo4jUnavailable(
                f"Neo4j is not reachable at {self.uri}: start it with `sgr neo4j start` "
                f"(or set NEO4J_URI to a running server)") from exc

    # -- queries -----------------------------------------------------------------------------
    def _session(self, access: str) -> neo4j.Session:
        return self._driver.session(database=self.database, default_access_mode=access)

    def read(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a trusted read query (sgr's own Cypher) and return all rows as dicts."""
        return self._run(cypher, params, READ_ACCESS)

    def write(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a write query in its own transaction and return all rows as dicts."""
        return self._run(cypher, params, WRITE_ACCESS)

    def _run(self, cypher: str, params: Mapping[str, Any] | None, access: str) -> list[dict[str, Any]]:
        t0 = time.perf_counter()
        try:
            with self._session(access) as session:
                work = session.execute_read if access == READ_ACCESS else session.execute_write
                rows = work(lambda tx: [r.data() for r in tx.run(cypher, dict(params or {}))])
        except ServiceUnavailable as exc:
            raise Neo4jUnavailable(f"lost the connection to Neo4j at {self.uri}: {exc}") from exc
        finally:
            self.query_seconds += time.perf_counter() - t0
            self.query_count += 1
        return rows

    def run_generated(self, cypher: str, params: Mapping[str, Any] | None = None,
                      timeout_s: float | None = None, row_cap: int | None = None) -> QueryResult:
        """Run untrusted (generated) Cypher: READ access, a server-side timeout and a row cap.

        Raises :class:`CypherError` with Neo4j's message when the query fails.
        """
        cap = row_cap or self.row_cap
        timeout = timeout_s or self.query_timeout_s
        t0 = time.perf_counter()
        truncated = False
        rows: list[dict[str, Any]] = []
        try:
            with self._session(READ_ACCESS) as session:
                @neo4j.unit_of_work(timeout=timeout)
                def work(tx: neo4j.ManagedTransaction) -> list[dict[str, Any]]:
                    nonlocal truncated
                    result = tx.run(cypher, dict(params or {}))
                    out = []
                    for record in result:
                        if len(out) >= cap:
                            truncated = True
                            break
                        out.append(record.data())
                    result.consume()
                    return out
                rows = session.execute_read(work)
        except ServiceUnavailable as exc:
            raise Neo4jUnavailable(f"lost the connection to Neo4j at {self.uri}: {exc}") from exc
        except (ClientError, Neo4jError) as exc:
            raise CypherError(f"Neo4j rejected the query: {exc.message or exc}") from exc
        finally:
            dt = time.perf_counter() - t0
            self.query_seconds += dt
            self.query_count += 1
        return QueryResult(rows=rows, seconds=dt, truncated=truncated)

    def explain(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """``EXPLAIN`` a query; return Neo4j's notifications (unknown labels, types, properties …).

        Raises :class:`CypherError` on a syntax or semantic error.
        """
        t0 = time.perf_counter()
        try:
            with self._session(READ_ACCESS) as session:
                result = session.run("EXPLAIN " + cypher, dict(params or {}))
                summary = result.consume()
        except ServiceUnavailable as exc:
            raise Neo4jUnavailable(f"lost the connection to Neo4j at {self.uri}: {exc}") from exc
        except (ClientError, Neo4jError) as exc:
            raise CypherError(exc.message or str(exc)) from exc
        finally:
            self.query_seconds += time.perf_counter() - t0
            self.query_count += 1
        notes = []
        with warnings.catch_warnings():  # driver 6 deprecates it for gql_status_objects; codes are clearer
            warnings.simplefilter("ignore", DeprecationWarning)
            found = list(summary.summary_notifications)
        for n in found:
            notes.append({"code": n.code, "title": n.title, "description": n.description,
                          "severity": str(n.severity_level)})
        return notes

    def write_batches(self, cypher: str, rows: Iterable[Mapping[str, Any]], batch_size: int = 10_000) -> int:
        """``UNWIND $rows AS row …`` in batches, one transaction each; returns rows written."""
        n = 0
        batch: list[Mapping[str, Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= batch_size:
                self.write(cypher, {"rows": batch})
                n += len(batch)
                batch = []
        if batch:
            self.write(cypher, {"rows": batch})
            n += len(batch)
        return n

    # -- schema and metadata -----------------------------------------------------------------
    def ensure_schema(self) -> None:
        """Create the constraints and the full-text index (idempotent)."""
        for stmt in SCHEMA_STATEMENTS:
            self.write(stmt)
        self.write("CALL db.awaitIndexes(300)")

    def relation_types(self) -> list[str]:
        """Relationship types used by the data (sgr's own bookkeeping types excluded)."""
        rows = self.read("CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType AS t")
        return sorted(r["t"] for r in rows if not r["t"].startswith("SGR_"))

    def relation_vocabulary(self) -> list[dict[str, str]]:
        """The ``(:Relation {name, text})`` nodes, sorted by name."""
        return self.read("MATCH (r:Relation) RETURN r.name AS name, r.text AS text ORDER BY name")

    def graph_version(self) -> str:
        """A short fingerprint of the loaded data; caches keyed by it go stale when data changes."""
        rows = self.read(
            "OPTIONAL MATCH (s:Source) WITH s ORDER BY s.path "
            "RETURN collect(coalesce(s.sha256, '') + ':' + toString(coalesce(s.triples, 0))) AS sources")
        counts = self.read("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"]
        rels = self.read("CALL db.relationshipTypes() YIELD relationshipType "
                         "WHERE NOT relationshipType STARTS WITH 'SGR_' RETURN count(*) AS n")[0]["n"]
        blob = "|".join(rows[0]["sources"]) + f"|{counts}|{rels}"
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def clear(self) -> None:
        """Delete every node and relationship (tests and benchmarks only), in batches."""
        while True:
            n = self.write("MATCH (n) WITH n LIMIT 20000 DETACH DELETE n RETURN count(*) AS n")[0]["n"]
            if n == 0:
                break
