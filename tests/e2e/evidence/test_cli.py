"""`sgr evidence list|show|clear` as a user runs them (a subprocess), against the real Neo4j."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import sgr.evidence as evidence
from sgr.core.config import repo_root


class _Result:
    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.exit_code = proc.returncode
        self.stdout = proc.stdout
        self.output = proc.stdout + proc.stderr


@pytest.fixture()
def cli(neo4j_uri):
    env = dict(os.environ, NEO4J_URI=neo4j_uri, COLUMNS="200")

    def run(*args: str) -> _Result:
        proc = subprocess.run([sys.executable, "-c", "from cli import app; app()", *args], cwd=repo_root(),
                              env=env, capture_output=True, text=True, timeout=120)
        return _Result(proc)

    return run


def test_evidence_commands(webqsp_graph, gold, record, cli, tmp_path):
    rec = record("WebQTest-1")
    pred = gold.gold_prediction(webqsp_graph, rec)
    assert cli("evidence", "list").stdout.startswith("no saved evidence")
    qid = evidence.save_evidence(webqsp_graph, rec["question"], pred, "gold-walk")

    res = cli("evidence", "list")
    assert res.exit_code == 0 and qid in res.stdout

    out = tmp_path / "view.html"
    res = cli("evidence", "show", qid, "--html", str(out))
    assert res.exit_code == 0, res.output
    assert rec["question"] in res.stdout and evidence.redraw_query(question_id=qid) in res.stdout
    for a in pred.answers:
        assert a.text in res.stdout
    for p in pred.paths:
        assert p.render() in res.stdout
    page = out.read_text()
    assert rec["question"] in page and "vis.Network" in page

    res = cli("evidence", "show", "nosuchid")
    assert res.exit_code == 2 and "nosuchid" in res.output

    res = cli("evidence", "clear", qid)
    assert res.exit_code == 0 and "deleted 1" in res.stdout
    assert cli("evidence", "clear", qid).exit_code == 2
    evidence.save_evidence(webqsp_graph, rec["question"], pred, "gold-walk")
    evidence.save_evidence(webqsp_graph, rec["question"], pred, "gold-walk")
    assert "deleted 2" in cli("evidence", "clear").stdout
