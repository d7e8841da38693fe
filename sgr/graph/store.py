"""Access to the Neo4j graph store: the one place that opens drivers and sessions.

Graph model (see README):

* ``(:Entity {id, name, types})`` — ``id`` is the Freebase MID when there is one, else the name;
  unique constraint on ``id``, full-text index ``entity_name`` and range index ``entity_name_exact``
  on ``name``; ``types``: the Freebase ``type.object.type`` / ``common.topic.notable_types`` objects.
  Compound-value nodes (MIDs without a name) also carry ``:CVT``.
* one relationship type per relation, named as in Freebase (``location.country.languages_spoken``).
* ``(:Relation {name, text})`` — the relation vocabulary, ``text`` a readable form of ``name``.
* ``(:Source {path, sha256, triples, loaded_at})`` — what was loaded from which file.

Every read (sgr's own and untrusted Cypher alike) passes :func:`~sgr.graph.readonly.check_read_query` first: no
``LOAD CSV``, no ``USE`` of another database, no administration command, and ``CALL`` only of the
read-only procedures in :data:`~sgr.graph.readonly.READ_PROCEDURES`. Untrusted Cypher (``sgr query``, generated
and compiled queries) runs through :meth:`GraphStore.run_generated`: only when Neo4j's own ``EXPLAIN`` plan is a read
(:func:`~sgr.graph.readonly.check_plan`), with READ access, a server-side timeout (which the embedded server's
launcher makes hold, see ``java/``) and a row cap.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import neo4j
from neo4j import GraphDatabase, READ_ACCESS, WRITE_ACCESS
from neo4j.exceptions import AuthError, ClientError, DriverError, Neo4jError, ServiceUnavailable, SessionExpired

from sgr.core.config import Neo4jSettings
from sgr.core.errors import ConfigError, CypherError, Neo4jUnavailable
from sgr.core.text import check_utf8
from sgr.graph.readonly import (MAX_QUERY_CHARS, READ_PROCEDURES, check_plan, check_read_query,  # noqa: F401 - API
                                cypher_code)

ENTITY = "Entity"
CVT = "CVT"
RELATION = "Relation"
SOURCE = "Source"
#: Labels that sgr itself writes next to the data; ``sgr stats`` leaves them out of data counts.
BOOKKEEPING_LABELS = ("Relation", "Source", "SgrQuestion", "SgrMeta")
#: The one relationship type sgr writes next to the data (saved evidence: ``(:SgrQuestion)-[:SGR_EVIDENCE]->(e)``).
EVIDENCE_REL = "SGR_EVIDENCE"

SCHEMA_STATEMENTS = (
    "CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (e:Entity) REQUIRE e.id IS UNIQUE",
    "CREATE CONSTRAINT relation_name IF NOT EXISTS FOR (r:Relation) REQUIRE r.name IS UNIQUE",
    "CREATE CONSTRAINT source_path IF NOT EXISTS FOR (s:Source) REQUIRE s.path IS UNIQUE",
    "CREATE FULLTEXT INDEX entity_name IF NOT EXISTS FOR (e:Entity) ON EACH [e.name]",
    # exact-name lookups (entity linking) seek instead of scanning every :Entity
    "CREATE INDEX entity_name_exact IF NOT EXISTS FOR (e:Entity) ON (e.name)",
)


def schema_name(statement: str) -> str:
    """The name a statement of :data:`SCHEMA_STATEMENTS` creates (the word before ``IF NOT EXISTS``)."""
    words = statement.split()
    return words[words.index("IF") - 1]


# EXPLAIN's notifications are returned to the caller; keep the driver from also logging them.
logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)
# Without a handler, Python prints the driver's connection errors to stderr (logging.lastResort) next to
# sgr's own one-line error; they still reach handlers an application installs.
logging.getLogger("neo4j").addHandler(logging.NullHandler())
#: Neo4j's answer to any login while a user is locked after repeated failures (the driver has no class for it).
AUTH_RATE_LIMIT = "Neo.ClientError.Security.AuthenticationRateLimit"

_MID = re.compile(r"^[mg]\.[0-9a-z_]+$")


def is_mid(value: str) -> bool:
    """True for a Freebase machine id such as ``m.03_r3`` or ``g.11b6…``."""
    return bool(_MID.match(value))


def relation_text(name: str) -> str:
    """Readable form of a relation name: ``location.country.languages_spoken`` → ``location country languages spoken``."""
    return re.sub(r"\s+", " ", re.sub(r"[._]+", " ", name)).strip()


def first_line(message: str) -> str:
    """Neo4j's error message without the query excerpt and caret lines that follow it."""
    lines = [ln.strip() for ln in str(message).splitlines() if ln.strip()]
    return lines[0] if lines else "unknown error"


#: Edges read per node where sgr samples the relationship types around a node: a Freebase hub has
#: hundreds of thousands, and expanding them all takes seconds. Far above any node of the MetaQA KB
#: (largest degree 4,016) or the WebQSP slice (2,555), whose answers therefore do not depend on it.
HUB_EDGE_SAMPLE = 5000
#: ``types``: the relationship types at the node bound to ``e`` (either direction, sgr's own ``SGR_*`` excluded),
#: read from its first ``$cap`` (:data:`HUB_EDGE_SAMPLE`) edges — the one sampling query, inside a ``CALL``.
TYPES_AT = ("CALL (e) { MATCH (e)-[r]-() WHERE NOT type(r) STARTS WITH 'SGR_' WITH r LIMIT $cap "
            "RETURN collect(DISTINCT type(r)) AS types }")


def quote_identifier(name: str) -> str:
    """Backtick-quote a label or relationship type for Cypher."""
    return "`" + name.replace("`", "``") + "`"


#: Neo4j's codes for a transaction it stopped (its deadline passed) and for one over its memory limits.
STOPPED_CODES = frozenset({"Neo.ClientError.Transaction.TransactionTimedOut",
                           "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
                           "Neo.ClientError.Transaction.Terminated", "Neo.TransientError.Transaction.Terminated"})
MEMORY_CODES = frozenset({"Neo.TransientError.General.MemoryPoolOutOfMemoryError",
                          "Neo.TransientError.General.TransactionMemoryLimit",
                          "Neo.TransientError.General.TransactionOutOfMemoryError",
                          "Neo.DatabaseError.General.OutOfMemoryError"})

#: URI schemes of a Bolt server (sgr needs Bolt: READ sessions, transaction timeouts; not Neo4j's HTTP Query API).
BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def check_uri(uri: Any) -> str:
    """``uri`` when it names a Bolt server (``bolt://host:port``, ``neo4j://…``), else a one-line ConfigError."""
    from urllib.parse import urlsplit

    hint = "expected bolt://HOST:PORT or neo4j://HOST:PORT, e.g. bolt://127.0.0.1:7687"
    if not isinstance(uri, str) or not uri.strip():
        raise ConfigError(f"the Neo4j URI (NEO4J_URI) is empty: {hint}")
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"invalid Neo4j URI {uri!r} (NEO4J_URI): {exc}; {hint}") from None
    if parts.scheme.lower() not in BOLT_SCHEMES:
        raise ConfigError(f"invalid Neo4j URI {uri!r} (NEO4J_URI): scheme {parts.scheme or '(none)'!r} is not Bolt; "
                          f"{hint}")
    if not parts.hostname:
        raise ConfigError(f"invalid Neo4j URI {uri!r} (NEO4J_URI): no host; {hint}")
    if port is not None and not 0 < port < 65536:
        raise ConfigError(f"invalid Neo4j URI {uri!r} (NEO4J_URI): port {port} is out of range; {hint}")
    if parts.query and parts.scheme.lower().startswith("bolt"):
        raise ConfigError(f"invalid Neo4j URI {uri!r} (NEO4J_URI): bolt:// takes no ?parameters (routing context "
                          "is for neo4j://); remove them")
    return uri


#: Longest timeout a query may be given (one day): the driver sends it to the server in milliseconds.
MAX_TIMEOUT_S = 86_400.0
#: Query texts (or the callers' plan keys) remembered as planned reads per store (their EXPLAIN is not repeated).
PLAN_CACHE_SIZE = 512


def check_timeout(seconds: Any) -> float:
    """``seconds`` as a timeout: a finite number above 0 and at most :data:`MAX_TIMEOUT_S`, else ConfigError."""
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(seconds, bool) or not (0 < value <= MAX_TIMEOUT_S):  # nan fails every comparison
        raise ConfigError(f"the timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:,.0f} "
                          f"(got {seconds!r})")
    return value


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

    def __init__(self, uri: str, user: str = "neo4j", password: str | None = None, database: str = "neo4j",
                 query_timeout_s: float = 30.0, row_cap: int = 1000) -> None:
        """``password=None`` means the configured one (:meth:`Neo4jSettings.resolved_password`)."""
        if password is None:
            password = Neo4jSettings().resolved_password()
        self.uri = uri
        self._user = user
        self.database = database
        self.query_timeout_s = query_timeout_s
        self.row_cap = row_cap
        self.query_seconds = 0.0
        self.query_count = 0
        self._plans_read: OrderedDict[str | tuple[str, str], None] = OrderedDict()
        self._plans_lock = threading.Lock()
        auth = (user, password) if password else None
        check_uri(uri)
        try:
            self._driver = GraphDatabase.driver(uri, auth=auth, connection_timeout=5.0,
                                                max_connection_lifetime=3600)
        except (ValueError, DriverError) as exc:  # what check_uri did not foresee
            raise ConfigError(f"invalid Neo4j URI {uri!r} (NEO4J_URI): {first_line(str(exc))}") from exc

    @classmethod
    def from_settings(cls, settings: Neo4jSettings | None = None) -> "GraphStore":
        s = settings or Neo4jSettings()
        return cls(s.resolved_uri(), s.user, s.resolved_password(), s.database, s.query_timeout_s, s.row_cap)

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
            raise self._auth_error(exc) from exc
        except (ServiceUnavailable, OSError, Neo4jError) as exc:
            if isinstance(exc, Neo4jError) and exc.code == AUTH_RATE_LIMIT:
                raise self._rate_limited() from exc
            raise Neo4jUnavailable(
                f"Neo4j is not reachable at {self.uri}: start it with `sgr neo4j start` "
                f"(or set NEO4J_URI to a running server)") from exc

    def _lost(self, exc: Exception) -> Neo4jUnavailable:
        return Neo4jUnavailable(f"lost the connection to Neo4j at {self.uri} ({first_line(str(exc))}): start it "
                                "again (`sgr neo4j start`) and rerun the command; runs resume where they stopped")

    def _dropped(self, exc: Exception, seconds: float, timeout: float | None) -> Exception:
        """An untrusted query lost its connection: a Cypher error if the server still answers, else the server is gone.

        The embedded server closes the connection of a query it had to stop (past its timeout, or filling the heap)."""
        try:
            self._driver.verify_connectivity()
        except Exception:  # noqa: BLE001 - the server is gone: say that
            return self._lost(exc)
        why = (f"it ran past its timeout of {timeout:g} s" if timeout is not None and seconds >= timeout
               else "it failed on the server, e.g. filled its memory")
        return CypherError(f"Neo4j stopped the query and closed its connection ({why}): simplify the query")

    def _auth_error(self, exc: Exception) -> Neo4jUnavailable:
        """One line for a refused login: which server, and where the right password comes from."""
        return Neo4jUnavailable(
            f"Neo4j at {self.uri} refused the login for user {self._user!r}: unset NEO4J_PASSWORD to use the embedded "
            f"server's password (SGR_HOME/neo4j/password), or set NEO4J_USER/NEO4J_PASSWORD to this server's")

    def _rate_limited(self) -> Neo4jUnavailable:
        """One line for Neo4j's lock after repeated failed logins (it refuses even the right password meanwhile)."""
        return Neo4jUnavailable(
            f"Neo4j at {self.uri} is locking user {self._user!r} out for a few seconds after repeated failed logins "
            f"(authentication rate limit): wait and run the command again; if it keeps failing, check NEO4J_PASSWORD")

    # -- queries -----------------------------------------------------------------------------
    def _session(self, access: str) -> neo4j.Session:
        return self._driver.session(database=self.database, default_access_mode=access)

    def read(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a trusted read query (sgr's own Cypher) and return all rows as dicts."""
        return self._run(cypher, params, READ_ACCESS)

    def write(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a write query in its own transaction and return all rows as dicts."""
        return self._run(cypher, params, WRITE_ACCESS)

    @contextmanager
    def _query(self, *, untrusted: bool, rejected: str = "", timeout: float | None = None) -> Iterator[None]:
        """Count and time one query, and turn driver errors into sgr's: a refused login, the rate limit, a lost
        server; for ``untrusted`` (generated) Cypher also a dropped connection and a rejected query
        (:class:`CypherError`, its message after ``rejected``)."""
        t0 = time.perf_counter()
        try:
            yield
        except AuthError as exc:
            raise self._auth_error(exc) from exc
        except (ServiceUnavailable, SessionExpired) as exc:
            lost = self._dropped(exc, time.perf_counter() - t0, timeout) if untrusted else self._lost(exc)
            raise lost from exc
        except (ClientError, Neo4jError) as exc:
            if exc.code == AUTH_RATE_LIMIT:
                raise self._rate_limited() from exc
            if not untrusted:
                raise
            if exc.code in STOPPED_CODES:
                raise CypherError(f"Neo4j stopped the query: it ran past its timeout of {timeout:g} s: simplify the "
                                  "query" if timeout is not None else "Neo4j stopped the query") from exc
            if exc.code in MEMORY_CODES or "heap space" in str(exc.message or ""):
                raise CypherError("Neo4j stopped the query: it needs more memory than the server gives one query "
                                  f"({first_line(exc.message or str(exc))}): simplify the query") from exc
            raise CypherError(rejected + first_line(exc.message or str(exc))) from exc
        except DriverError as exc:  # the driver's own (a transaction already failed, a result consumed …)
            if not untrusted:
                raise
            raise CypherError(rejected + first_line(str(exc))) from exc
        finally:
            self.query_seconds += time.perf_counter() - t0
            self.query_count += 1

    def _run(self, cypher: str, params: Mapping[str, Any] | None, access: str) -> list[dict[str, Any]]:
        if access == READ_ACCESS:
            check_read_query(cypher)
        with self._query(untrusted=False), self._session(access) as session:
            work = session.execute_read if access == READ_ACCESS else session.execute_write
            return work(lambda tx: [r.data() for r in tx.run(cypher, dict(params or {}))])

    def _plan_is_read(self, tx: neo4j.Transaction, cypher: str, params: Mapping[str, Any] | None,
                      key: str | tuple[str, str]) -> None:
        """Raise :class:`CypherError` unless Neo4j's EXPLAIN plan of ``cypher`` is a read (:func:`check_plan`);
        a query whose ``key`` (its text, or the caller's ``plan_key`` apart from every text) was once found to be a
        read is not explained again."""
        with self._plans_lock:  # workers share one store
            if key in self._plans_read:
                self._plans_read.move_to_end(key)
                return
        summary = tx.run("EXPLAIN " + cypher, dict(params or {})).consume()
        check_plan(summary.query_type, summary.plan, self.database)
        with self._plans_lock:
            self._plans_read[key] = None
            while len(self._plans_read) > PLAN_CACHE_SIZE:
                self._plans_read.popitem(last=False)

    def run_generated(self, cypher: str, params: Mapping[str, Any] | None = None,
                      timeout_s: float | None = None, row_cap: int | None = None,
                      plan_key: str | None = None) -> QueryResult:
        """Run untrusted (generated) Cypher: only if Neo4j plans it as a read, with READ access, a server-side
        timeout and a row cap.

        Raises :class:`CypherError` with the reason when the query is refused or fails, :class:`ConfigError` for a
        timeout that is not a positive finite number of seconds (at most :data:`MAX_TIMEOUT_S`) or a row cap below 1.
        ``plan_key``: the plan check is remembered under it instead of the text, for a caller whose queries of one
        key plan alike (sgr's compiler: :func:`~sgr.graph.readonly.plan_shape`); Neo4j plans each new text anyway
        when it runs it, and explaining it first doubled that.
        """
        check_read_query(check_utf8(cypher, "the query"))
        cap = self.row_cap if row_cap is None else row_cap
        timeout = check_timeout(self.query_timeout_s if timeout_s is None else timeout_s)
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ConfigError(f"the row cap must be a whole number of rows, at least 1 (got {cap!r})")
        t0 = time.perf_counter()
        truncated = False
        # one explicit transaction, not a retried unit of work: a query the server stops is not run again
        with (self._query(untrusted=True, rejected="Neo4j rejected the query: ", timeout=timeout),
              self._session(READ_ACCESS) as session):
            with session.begin_transaction(timeout=timeout) as tx:
                self._plan_is_read(tx, cypher, params, cypher if plan_key is None else ("plan_key", plan_key))
                result = tx.run(cypher, dict(params or {}))
                rows = []
                for record in result:
                    if len(rows) >= cap:
                        truncated = True
                        break
                    rows.append(record.data())
                result.consume()
        return QueryResult(rows=rows, seconds=time.perf_counter() - t0, truncated=truncated)

    def explain(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """``EXPLAIN`` a query; return Neo4j's notifications (unknown labels, types, properties …).

        Raises :class:`CypherError` on a syntax or semantic error, or when the plan is not a read (:func:`check_plan`).
        """
        check_read_query(check_utf8(cypher, "the query"))
        with self._query(untrusted=True), self._session(READ_ACCESS) as session:
            with session.begin_transaction(timeout=check_timeout(self.query_timeout_s)) as tx:
                summary = tx.run("EXPLAIN " + cypher, dict(params or {})).consume()
        check_plan(summary.query_type, summary.plan, self.database)
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
    def ensure_schema(self, skip: Collection[str] = ()) -> None:
        """Create the constraints and indexes of :data:`SCHEMA_STATEMENTS` (idempotent) but those named in ``skip``,
        and wait until they are online."""
        for stmt in SCHEMA_STATEMENTS:
            if schema_name(stmt) not in skip:
                self.write(stmt)
        self.write("CALL db.awaitIndexes(300)")

    def relation_types(self) -> list[str]:
        """Relationship types used by the data (sgr's own bookkeeping types excluded)."""
        rows = self.read("CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType AS t")
        return sorted(r["t"] for r in rows if not r["t"].startswith("SGR_"))

    def relation_types_at(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """The relationship types at each entity of ``ids`` (:data:`TYPES_AT`: a hub costs no more than
        :data:`HUB_EDGE_SAMPLE` edges)."""
        rows = self.read(f"UNWIND $ids AS i MATCH (e:Entity {{id: i}}) {TYPES_AT} RETURN e.id AS id, types",
                         {"ids": list(ids), "cap": HUB_EDGE_SAMPLE})
        return {r["id"]: r["types"] for r in rows}

    def topic_links(self, topics: Sequence[str], ids: Sequence[str]) -> dict[str, int]:
        """How many distinct relations link each entity of ``ids`` to the entities ``topics``: the types of the edges
        between them, and the (r1, r2) pairs through a CVT among the entity's first :data:`HUB_EDGE_SAMPLE` edges
        (Japan – currency_used – yen; Turkey – official_language and languages_spoken – Turkish). Entities linked by
        none are left out."""
        return {i: links for i, (links, _met) in self.topic_meetings(topics, ids).items()}

    def topic_meetings(self, topics: Sequence[str], ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        """``(links, met)`` of each entity of ``ids`` that the entities ``topics`` link to: ``links`` as
        :meth:`topic_links` counts them, ``met`` the number of distinct entities of ``topics`` among them — by an edge
        or through a CVT, as a conjunction's answer meets each entity the question names."""
        if not ids or not topics:
            return {}
        rows = self.read(
            "UNWIND $ids AS i MATCH (e:Entity {id: i}) "
            "CALL (e) { MATCH (t:Entity)-[r]-(e) WHERE t.id IN $topics "
            "RETURN count(DISTINCT type(r)) AS direct, collect(DISTINCT t.id) AS near } "
            f"CALL (e) {{ MATCH (e)-[r2]-(c:{CVT}) WITH r2, c LIMIT $cap MATCH (c)-[r1]-(t:Entity) "
            "WHERE t.id IN $topics RETURN count(DISTINCT [type(r1), type(r2)]) AS via, collect(DISTINCT t.id) AS far } "
            "WITH e, direct + via AS links, size(near + [t IN far WHERE NOT t IN near]) AS met WHERE links > 0 "
            "RETURN e.id AS id, links, met",
            {"ids": list(ids), "topics": list(topics), "cap": HUB_EDGE_SAMPLE})
        return {r["id"]: (int(r["links"]), int(r["met"])) for r in rows}

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
