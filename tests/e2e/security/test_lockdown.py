"""The embedded Neo4j is locked down by default: a password, no file or network access from Cypher, an
allowlist of procedures; sgr's read path refuses what a read must never do. Against the real server that
the root conftest starts through ``sgr.graph.server.start`` (the same path as ``sgr neo4j start``)."""

from __future__ import annotations

import os
import stat
import subprocess
import time
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, ClientError

from sgr.core.config import Neo4jSettings, neo4j_password_file
from sgr.core.errors import CypherError
from sgr.graph.store import check_read_query

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.neo4j


def sgr_cmd() -> list[str]:
    if (ROOT / "sgr" / "cli" / "__main__.py").exists():
        return [sys.executable, "-m", "sgr.cli"]
    return [sys.executable, "-m", "cli"]


def run_sgr(args: list[str], **env: str) -> subprocess.CompletedProcess:
    full = dict(os.environ, COLUMNS="200", PYTHONPATH=str(ROOT), **env)
    return subprocess.run(sgr_cmd() + args, cwd=ROOT, env=full, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def raw_driver(neo4j_uri):
    """A driver with the configured credentials that bypasses sgr's own checks: what the server itself allows."""
    s = Neo4jSettings()
    with GraphDatabase.driver(neo4j_uri, auth=(s.user, s.resolved_password())) as d:
        yield d


def wait_out_the_auth_lock() -> None:
    """After failed logins Neo4j locks the user for ``dbms.security.auth_lock_time`` (5 s) once three fail in a row;
    the tests after these ones log in with the right password."""
    time.sleep(6)


def _raw(driver, query: str) -> list[dict]:
    with driver.session(default_access_mode="READ") as ses:
        return ses.run(query).data()


def test_server_requires_the_password(neo4j_uri):
    if os.environ.get("NEO4J_PASSWORD") is None:
        path = neo4j_password_file()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert len(path.read_text().strip()) >= 24
    for auth in (None, ("neo4j", "neo4j"), ("neo4j", "wrong-password")):
        with GraphDatabase.driver(neo4j_uri, auth=auth) as d:
            with pytest.raises(AuthError):
                d.verify_connectivity()
    wait_out_the_auth_lock()


def test_wrong_password_is_one_line_naming_the_fix(neo4j_uri):
    out = run_sgr(["query", "RETURN 1"], NEO4J_URI=neo4j_uri, NEO4J_PASSWORD="not-the-password")
    assert out.returncode == 3 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "NEO4J_PASSWORD" in out.stderr
    wait_out_the_auth_lock()


def test_sgr_query_cannot_read_etc_passwd(neo4j_uri):
    out = run_sgr(["query", 'LOAD CSV FROM "file:///etc/passwd" AS l RETURN l'], NEO4J_URI=neo4j_uri)
    assert out.returncode == 6 and "root:x:0:0" not in out.stdout + out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "LOAD CSV" in out.stderr


class _Canary(BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:  # noqa: N802
        type(self).hits += 1
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"a\n1\n")

    def log_message(self, *a: object) -> None:
        pass


def test_server_itself_refuses_file_and_network_urls(raw_driver, tmp_path):
    secret = tmp_path / "secret.csv"
    secret.write_text("canary-7f3a\n")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Canary)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        for url in (f"file://{secret}", "file:///etc/passwd", "file:///secret.csv",
                    f"http://127.0.0.1:{httpd.server_address[1]}/x.csv"):
            with pytest.raises(ClientError) as err:
                _raw(raw_driver, f'LOAD CSV FROM "{url}" AS l RETURN l')
            assert "canary-7f3a" not in str(err.value) and "root:x" not in str(err.value)
        assert _Canary.hits == 0
    finally:
        httpd.shutdown()


def test_only_allowlisted_plugin_procedures_are_loaded(raw_driver):
    names = {r["name"] for r in _raw(raw_driver, "SHOW PROCEDURES YIELD name WHERE name STARTS WITH 'apoc.' "
                                                 "RETURN name")}
    assert names == {"apoc.meta.stats"}
    with pytest.raises(ClientError):
        _raw(raw_driver, "CALL apoc.load.json('file:///etc/passwd')")
    assert _raw(raw_driver, "CALL apoc.meta.stats() YIELD nodeCount RETURN nodeCount")  # sgr stats needs it


@pytest.mark.parametrize("query", [
    'LOAD CSV FROM "file:///etc/passwd" AS l RETURN l', "load /* x */ csv from 'http://x' as l return l",
    "ＬＯＡＤ ＣＳＶ FROM 'file:///etc/passwd' AS l RETURN l", "MATCH (n) CALL { LOAD CSV FROM 'x' AS l RETURN l } RETURN l",
    "USE system SHOW USERS", "MATCH (n) CALL { USE system MATCH (m) RETURN m } RETURN m", "SHOW SETTINGS",
    "SHOW TRANSACTIONS", "ALTER USER neo4j SET PASSWORD 'password123'", "CALL dbms.listConfig()",
    "CALL apoc.export.csv.all('/tmp/x.csv', {})", "CALL `apoc`.`load`.json('x')", "CALL apoc . load . json('x')",
    "RETURN '" + "x" * 200_000 + "'"])
def test_read_path_refuses(query):
    with pytest.raises(CypherError) as err:
        check_read_query(query)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("query", [
    "MATCH (n:Entity) WHERE n.name = 'LOAD CSV FROM x' RETURN n", "MATCH (n) // LOAD CSV\nRETURN n",
    "CALL { MATCH (n) RETURN n LIMIT 1 } RETURN n", "SHOW CONSTRAINTS YIELD name RETURN name",
    "CALL db.index.fulltext.queryNodes('entity_name', 'x') YIELD node RETURN node",
    "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType",
    "CALL apoc.meta.stats() YIELD relTypesCount RETURN relTypesCount"])
def test_read_path_admits_what_sgr_uses(query):
    check_read_query(query)


def test_browser_url_asks_for_the_password_and_never_carries_it():
    from urllib.parse import parse_qs, urlsplit

    from sgr.graph.browser import BrowserServer

    url = BrowserServer(pid=1, port=7474, bolt_uri="bolt://127.0.0.1:7687", root="", log="").url
    params = parse_qs(urlsplit(url).query)
    assert params["dbms"] == ["bolt://neo4j@127.0.0.1:7687"] and params["preselectAuthMethod"] == ["NATIVE"]
    secret = Neo4jSettings().resolved_password()
    assert not secret or secret not in url
    off = BrowserServer(pid=1, port=7474, bolt_uri="bolt://127.0.0.1:7687", root="", log="", auth=False).url
    assert parse_qs(urlsplit(off).query)["preselectAuthMethod"] == ["NO_AUTH"]


def test_docker_compose_requires_a_password():
    import yaml

    env = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["neo4j"]["environment"]
    assert env["NEO4J_AUTH"].startswith("neo4j/${NEO4J_PASSWORD:?")
    assert "none" not in env["NEO4J_AUTH"]
    assert env["NEO4J_dbms_security_allow__csv__import__from__file__urls"] == "false"
    assert env["NEO4J_dbms_security_procedures_allowlist"] == "apoc.meta.stats"
    assert "apoc.*" not in env.values()


def test_neo4j_log_holds_no_password():
    from sgr.graph import server

    info = server.status()
    if info is None or os.environ.get("NEO4J_PASSWORD") is not None:
        pytest.skip("the server was not started by this session's SGR_HOME")
    secret = neo4j_password_file().read_text().strip()
    assert secret not in Path(info.log).read_text(errors="replace")
    assert secret not in " ".join(Path(f"/proc/{info.pid}/cmdline").read_text().split("\0"))
