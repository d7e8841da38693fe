"""A query's timeout holds and one query cannot take the server's heap (issue 42 item 3); the store is private
(item 8). Against the embedded server that ``sgr neo4j start`` runs (its launcher's reaper, ``java/``).

Neo4j stops a transaction past its timeout only where the query reads the store; a long expression reads nothing
(``reduce`` over three billion numbers ran 1.5–2.5 minutes past ``--timeout 5``; string doubling filled the heap).
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from sgr.core.errors import CypherError

pytestmark = pytest.mark.neo4j

#: The worst a query may run past its timeout (the issue's goal).
OVERRUN_S = 2.0

BOMBS = {
    "reduce-sum": "RETURN reduce(s = 0, i IN range(1, 3000000000) | s + i) AS x",
    "string-doubling": "RETURN size(reduce(s = 'x', i IN range(1, 40) | s + s)) AS x",
    "string-append": "RETURN size(reduce(s = '', i IN range(1, 100000000) | s + 'xxxxxxxxxx')) AS x",
    "list-comprehension": "RETURN size([x IN range(1, 2000000000) | x]) AS x",
    "collect": "UNWIND range(1, 2000000000) AS i RETURN size(collect(i)) AS x",
    "cross-product": "UNWIND range(1, 100000) AS i UNWIND range(1, 100000) AS j RETURN count(*) AS x",
}


def _alive(store) -> bool:
    return store.run_generated("RETURN 1 AS ok", timeout_s=10).rows == [{"ok": 1}]


@pytest.mark.parametrize("query", list(BOMBS.values()), ids=list(BOMBS))
def test_timeout_holds_for_resource_bombs(store, query):
    timeout = 3.0
    t0 = time.perf_counter()
    with pytest.raises(CypherError) as err:
        store.run_generated(query, timeout_s=timeout)
    took = time.perf_counter() - t0
    assert took <= timeout + OVERRUN_S, f"stopped after {took:.1f} s ({err.value})"
    assert "\n" not in str(err.value)
    assert _alive(store)


def test_a_stopped_query_leaves_no_transaction_running(store):
    with pytest.raises(CypherError):
        store.run_generated(BOMBS["reduce-sum"], timeout_s=1.0)
    time.sleep(0.5)
    from neo4j import GraphDatabase

    from sgr.core.config import Neo4jSettings

    s = Neo4jSettings()
    with GraphDatabase.driver(store.uri, auth=(s.user, s.resolved_password())) as d, d.session() as ses:
        running = [r["q"] for r in ses.run("SHOW TRANSACTIONS YIELD currentQuery AS q RETURN q").data()]
    assert not [q for q in running if "range(1, 3000000000)" in (q or "")]


def world_readable(home: Path) -> list[Path]:
    """Files and folders under ``home`` another local user can read: read bit for others, and every folder from
    ``home`` down to it enterable by others."""
    out = []
    for p in [home, *home.rglob("*")]:
        chain = [home, *reversed([q for q in p.parents if home in q.parents])] if p != home else []
        if (not p.is_symlink() and p.stat().st_mode & stat.S_IROTH
                and all(d.stat().st_mode & stat.S_IXOTH for d in chain)):
            out.append(p)
    return out


def test_store_files_are_private(store):
    """Nothing under the embedded server's SGR_HOME is readable by another user; the store itself is 0700/0600."""
    from sgr.graph import server

    info = server.status()
    if info is None:
        pytest.skip("the server was not started from this session's SGR_HOME")
    home = Path(os.environ["SGR_HOME"])
    assert world_readable(home) == []
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    store_files = [p for p in [Path(info.home), *Path(info.home).rglob("*")] if not p.is_symlink()]
    assert len(store_files) > 10
    assert [p for p in store_files if p.stat().st_mode & 0o077] == []


def test_an_earlier_world_readable_store_is_made_private(tmp_path):
    from sgr.graph.server import make_private

    (tmp_path / "data" / "db").mkdir(parents=True)
    f = tmp_path / "data" / "db" / "neostore"
    f.write_text("x")
    os.chmod(tmp_path / "data", 0o755)
    os.chmod(f, 0o644)
    assert make_private(tmp_path) >= 2
    assert stat.S_IMODE(f.stat().st_mode) == 0o600 and stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700
