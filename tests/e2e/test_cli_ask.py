"""``sgr ask`` through the real command line (Typer's CliRunner) against the real Neo4j, method ``sgr-compiled``
(no LLM): ``--json``, ``--save``, ``--html``, an unknown option, an unknown entity.

Expected answers come from the WebQSP record (its gold answers), never from the code under test.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app
from sgr.core.errors import ConfigError, EntityNotFound
from tests.helpers import node_ids

RECORD = "WebQTest-0"  # "what does jamaican people speak?" about Jamaica


@pytest.fixture()
def runner() -> CliRunner:
    return CliRunner()


def ask(runner: CliRunner, *args: str):
    return runner.invoke(app, ["ask", *args])


def question_args(rec: dict) -> list[str]:
    return [rec["question"], "--topic", rec["q_entity"][0], "--method", "sgr-compiled"]


def test_ask_json_is_the_whole_trace(webqsp_graph, record, runner) -> None:
    rec = record(RECORD)
    res = ask(runner, *question_args(rec), "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["question"] == rec["question"] and data["method"] == "sgr-compiled"
    assert {a["text"] for a in data["answers"]} == set(rec["answer"])
    for a in data["answers"]:  # every answer is grounded in a path from the topic entity
        assert a["paths"] and a["paths"][0]["nodes"][0] == rec["q_entity"][0]
    assert data["usage"]["llm_calls"] == 0 and data["usage"]["neo4j_queries"] > 0
    assert data["cypher"] and data["detail"]["route"] == data["route"]
    assert data["evidence"]["question_id"] is None and "UNWIND" in data["evidence"]["query"]
    # the evidence query draws the answers' edges in the real graph
    rows = webqsp_graph.read(data["evidence"]["query"])
    assert {a["id"] for a in data["answers"]} <= node_ids(rows)


def test_ask_prints_the_answer_first_and_the_trace_on_request(webqsp_graph, record, runner) -> None:
    rec = record(RECORD)
    res = ask(runner, *question_args(rec))
    assert res.exit_code == 0, res.output
    for answer in rec["answer"]:
        assert answer in res.stdout
    first = res.stdout.splitlines()[0]
    assert any(answer in first for answer in rec["answer"]) or first.startswith("Not found in the graph")
    assert "via " in res.stdout and "Cypher that answered" not in res.stdout and "--explain" in res.stdout
    res = ask(runner, *question_args(rec), "--explain")
    assert res.exit_code == 0, res.output
    assert "Cypher that answered" in res.stdout and "LLM: 0 calls" in res.stdout


def test_ask_save_records_evidence_that_evidence_show_reads(webqsp_graph, record, runner) -> None:
    rec = record(RECORD)
    before = webqsp_graph.read("MATCH (q:SgrQuestion) RETURN count(q) AS n")[0]["n"]
    res = ask(runner, *question_args(rec), "--save", "--json")
    assert res.exit_code == 0, res.output
    qid = json.loads(res.stdout)["evidence"]["question_id"]
    assert qid
    saved = webqsp_graph.read("MATCH (q:SgrQuestion {id: $id}) RETURN q.text AS text", {"id": qid})
    assert [r["text"] for r in saved] == [rec["question"]]
    assert webqsp_graph.read("MATCH (q:SgrQuestion) RETURN count(q) AS n")[0]["n"] == before + 1
    shown = runner.invoke(app, ["evidence", "show", qid])
    assert shown.exit_code == 0, shown.output
    assert all(answer in shown.stdout for answer in rec["answer"])
    assert runner.invoke(app, ["evidence", "clear", qid]).exit_code == 0


def test_ask_html_writes_one_offline_page(webqsp_graph, record, runner, tmp_path) -> None:
    rec = record(RECORD)
    page = tmp_path / "view" / "ask.html"
    res = ask(runner, *question_args(rec), "--html", str(page))
    assert res.exit_code == 0, res.output
    assert f"HTML view: {page}" in res.stdout
    html = page.read_text()
    assert rec["question"] in html and all(answer in html for answer in rec["answer"])
    assert "<script src=\"http" not in html  # self-contained: no remote script


def test_an_unknown_option_is_refused(webqsp_graph, record, runner) -> None:
    rec = record(RECORD)
    res = ask(runner, *question_args(rec), "--muu", "0.9")
    assert res.exit_code == 2 and "No such option: --muu" in res.output
    # a bad value of a method setting is refused too: one red line, ConfigError's exit code
    res = ask(runner, *question_args(rec), "--retriever", "oracle")
    assert res.exit_code == ConfigError.exit_code, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "retriever" in lines[0] and "oracle" in lines[0]


def test_method_options_reach_the_method_and_unknown_keys_are_refused(webqsp_graph, record, runner) -> None:
    rec = record(RECORD)
    res = ask(runner, *question_args(rec), "--json", "-o", "max_answers=1")
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.stdout)["answers"]) == 1  # the record has two gold answers; the option keeps one
    res = ask(runner, *question_args(rec), "-o", "inverse_relatons=false")
    assert res.exit_code == ConfigError.exit_code and "unknown option 'inverse_relatons'" in res.output
    res = ask(runner, *question_args(rec), "-o", "inverse_relations")
    assert res.exit_code == ConfigError.exit_code and "KEY=VALUE" in res.output


def test_an_unknown_entity_is_not_found_in_the_graph(webqsp_graph, runner) -> None:
    res = ask(runner, "what does zzyzx qwv speak?", "--method", "sgr-compiled")
    assert res.exit_code == 0, res.output  # abstaining is a normal outcome
    assert res.stdout.startswith("Not found in the graph") and "no entity of the question" in res.stdout
    assert "--topic" in res.stdout
    # --min-confidence 0: never abstain, the old behaviour — one red line with EntityNotFound's exit code
    res = ask(runner, "what does zzyzx qwv speak?", "--method", "sgr-compiled", "--min-confidence", "0")
    assert res.exit_code == EntityNotFound.exit_code
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "--topic" in lines[0]


FORGING = "\x1b[2J\x1b[1;31mFAKE ANSWER [link=https://evil.example]x[/link]"


def test_names_that_would_forge_the_terminal_print_as_text(clean_store, runner) -> None:
    """Issue 42 item 4: an entity name carrying ANSI escapes reached the terminal raw in ask and evidence show."""
    from tests.helpers import hand_graph

    hand_graph(clean_store, {"m.j": "Jamaica", "m.f": FORGING}, [("m.j", "location.location.contains", "m.f")])
    res = ask(runner, "what is in Jamaica?", "--topic", "Jamaica", "--method", "neighbors", "--save")
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.output and "\\x1b[2J\\x1b[1;31mFAKE ANSWER [link=https://evil.example]x[/link]" in res.output
    qid = next(ln.split()[3] for ln in res.output.splitlines() if ln.startswith("evidence saved as"))
    shown = runner.invoke(app, ["evidence", "show", qid])
    assert shown.exit_code == 0 and "\x1b" not in shown.output and "\\x1b[2J" in shown.output


def test_a_question_longer_than_the_context_is_one_line(webqsp_graph, local_llm_server, runner) -> None:
    """Issue 42 item 6: a question longer than the model's context (about 14 KB) was a langchain traceback."""
    base_url, model = local_llm_server
    question = "which of " + " ".join(str(n) for n in range(3000)) + "?"  # 14 KB, about 6,000 tokens
    res = runner.invoke(app, ["ask", question, "--topic", "Jamaica", "--method", "llm-only"],
                        env={"SGR_LLM_BASE_URL": base_url, "SGR_LLM_MODEL": model or "local", "SGR_LLM_CACHE": "0",
                             "COLUMNS": "200"})
    lines = res.output.strip().splitlines()
    assert res.exit_code == 5 and len(lines) == 1 and lines[0].startswith("error:"), res.output
    assert "context" in lines[0]


def test_an_empty_question_is_refused_before_any_work(webqsp_graph, runner) -> None:
    for text in ("", "   "):
        res = ask(runner, text, "--method", "sgr-compiled")
        assert res.exit_code == 2 and "empty" in res.output
