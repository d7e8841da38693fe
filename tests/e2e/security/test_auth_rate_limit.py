"""After repeated failed logins Neo4j refuses every login for a few seconds, the right password included
(``Neo.ClientError.Security.AuthenticationRateLimit``): sgr says so in one line instead of "not reachable"."""

from __future__ import annotations

import time

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError

from sgr.core.errors import Neo4jUnavailable
from sgr.graph.store import GraphStore

pytestmark = pytest.mark.neo4j


def _fail_logins(uri: str, times: int = 3) -> None:
    for _ in range(times):
        with GraphDatabase.driver(uri, auth=("neo4j", "not-the-password")) as d:
            with pytest.raises(AuthError):
                d.verify_connectivity()


def test_auth_rate_limit_has_its_own_line(neo4j_uri):
    _fail_logins(neo4j_uri)
    try:
        with GraphStore(neo4j_uri) as store:  # the configured (right) password
            with pytest.raises(Neo4jUnavailable) as verify_err:
                store.verify()
            with pytest.raises(Neo4jUnavailable) as query_err:
                store.run_generated("RETURN 1")
        for err in (verify_err, query_err):
            text = str(err.value)
            assert "failed logins" in text and "not reachable" not in text and "\n" not in text
    finally:
        time.sleep(6)  # Neo4j's lock (dbms.security.auth_lock_time, 5 s) is over before the next test logs in
    with GraphStore(neo4j_uri) as store:
        assert store.read("RETURN 1 AS one") == [{"one": 1}]
