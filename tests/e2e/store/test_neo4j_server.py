"""`sgr neo4j start|status|stop` as a user runs them: a second embedded server in its own SGR_HOME."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

SGR = [sys.executable, "-m", "cli"]
ROOT = Path(__file__).resolve().parents[3]


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(SGR + args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_start_status_stop_and_data_persists(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env["SGR_HOME"] = str(tmp_path / "home")
    started = _run(["neo4j", "start"], env)
    assert started.returncode == 0, started.stderr
    assert "bolt://127.0.0.1:" in started.stdout
    try:
        status = _run(["neo4j", "status"], env)
        assert status.returncode == 0 and "running" in status.stdout
        again = _run(["neo4j", "start"], env)  # a second start finds the running server
        assert again.returncode == 0
        wrote = _run(["query", "MATCH (n) RETURN count(n) AS n"], env)
        assert wrote.returncode == 0 and "0" in wrote.stdout
        from sgr.graph.store import GraphStore
        import json

        uri = json.loads((tmp_path / "home" / "neo4j" / "server.json").read_text())["uri"]
        secret = tmp_path / "home" / "neo4j" / "password"
        assert secret.stat().st_mode & 0o777 == 0o600  # generated at first start, owner-only
        with GraphStore(uri, password=secret.read_text().strip()) as st:
            st.write("CREATE (:Entity {id: 'persisted', name: 'persisted'})")
        kb = tmp_path / "kb.txt"
        kb.write_text("Jamaica|location.country.languages_spoken|Jamaican English\n", encoding="utf-8")
        assert _run(["load", "triples", str(kb)], env).returncode == 0
    finally:
        stopped = _run(["neo4j", "stop"], env)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert _run(["neo4j", "status"], env).returncode == 1
    # the store persists: start again, the node is still there
    again = _run(["neo4j", "start"], env)
    assert again.returncode == 0 and "warming up" in again.stdout  # a graph is loaded: one question warms it
    try:
        out = _run(["query", "MATCH (e:Entity {id: 'persisted'}) RETURN e.name AS name"], env)
        assert "persisted" in out.stdout
        log = tmp_path / "home" / "neo4j" / "warmup.log"
        assert log.stat().st_mode & 0o777 == 0o600
        deadline = time.time() + 240
        while not log.read_text(encoding="utf-8").strip() and time.time() < deadline:
            time.sleep(1)
        answered = log.read_text(encoding="utf-8")
        assert answered.strip() and "Traceback" not in answered and not answered.startswith("error"), answered
    finally:
        _run(["neo4j", "stop"], env)


def test_unreachable_neo4j_is_one_line(tmp_path):
    env = dict(os.environ, NEO4J_URI="bolt://127.0.0.1:1", SGR_HOME=str(tmp_path))
    out = _run(["query", "RETURN 1"], env)
    assert out.returncode == 3
    assert "Traceback" not in out.stderr
    assert "not reachable" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_generated_write_is_refused_by_cli(neo4j_uri, tmp_path):
    from sgr.core.config import Neo4jSettings

    # another SGR_HOME holds no password for this server: NEO4J_PASSWORD brings it
    env = dict(os.environ, NEO4J_URI=neo4j_uri, SGR_HOME=str(tmp_path),
               NEO4J_PASSWORD=Neo4jSettings().resolved_password())
    out = _run(["query", "CREATE (:Entity {id: 'nope'})"], env)
    assert out.returncode == 6 and "read" in out.stderr.lower()
