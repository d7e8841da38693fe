"""`sgr eval` end to end against the real Neo4j: run, report, resume, errors, workers, CLI, compare."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sgr.core.errors import ConfigError
from sgr.evaluation import runner as runner_mod
from sgr.evaluation.predictions import read_predictions
from sgr.evaluation.runner import RunConfig, run_eval
from sgr.evaluation.metrics.scores import score_answers
from sgr.graph.store import GraphStore

from .conftest import Adjacency, write_metaqa


@pytest.fixture()
def metaqa_file(tmp_path, metaqa_slice) -> tuple[Path, dict[str, set[str]]]:
    """A MetaQA-format 2-hop file over the slice (actor_to_movie_to_director and
    movie_to_director_to_movie); gold answers computed from the triples."""
    adj = Adjacency(metaqa_slice)
    rows = []
    for actor in sorted(adj.inc["starred_actors"])[:12]:
        gold = adj.walk(actor, ["starred_actors", "directed_by"], ["in", "out"]) - {actor}
        if gold:
            rows.append((f"which person directed the movies starred by [{actor}]", "actor_to_movie_to_director",
                         sorted(gold)))
    for movie in sorted(adj.out["directed_by"])[:12]:
        gold = adj.walk(movie, ["directed_by", "directed_by"], ["out", "in"]) - {movie}
        if gold:
            rows.append((f"the director of [{movie}] also directed which movies", "movie_to_director_to_movie",
                         sorted(gold)))
    rows.append(("which person directed the movies starred by [Nobody Anybody]", "actor_to_movie_to_director",
                 ["Somebody"]))
    return write_metaqa(tmp_path / "2hop_test.tsv", rows), {r[0]: set(r[2]) for r in rows}


def _factory(uri: str):
    return lambda: GraphStore(uri)


def test_run_writes_predictions_and_report(metaqa_graph, neo4j_uri, metaqa_file, tmp_path):
    path, gold = metaqa_file
    out = tmp_path / "run"
    res = run_eval(RunConfig(dataset=str(path), method="oracle-paths", out=out), store_factory=_factory(neo4j_uri),
                   progress=False)
    n = len(gold)
    assert res.total == n and res.done == n and res.answered_now == n and not res.interrupted
    recs = read_predictions(out / "predictions.jsonl")
    assert len(recs) == n and len((out / "predictions.jsonl").read_text().splitlines()) == n
    for rec in recs.values():
        assert set(rec) >= {"id", "answers", "paths", "usage", "error", "gold", "scores"}
        assert rec["usage"]["total_seconds"] > 0 and rec["usage"]["neo4j_queries"] >= 1
    # the oracle's answer sets are exactly the gold sets, except for the topic missing from the graph
    m = json.loads((out / "metrics.json").read_text())
    assert m["n_done"] == n and m["complete"] and m["n_errors"] == 0
    assert m["overall"]["f1"] == pytest.approx((n - 1) / n)
    assert m["overall"]["exact_set"] == pytest.approx((n - 1) / n)
    assert m["overall"]["ceiling"] == pytest.approx((n - 1) / n)  # k = 2 = the hop count
    assert m["overall"]["ceiling_k"] == 2
    assert set(m["by_type"]) == {"actor_to_movie_to_director", "movie_to_director_to_movie"}
    assert m["by_hops"]["2"]["n"] == n
    assert m["cost"]["n"] == n and m["cost"]["latency_ms_p50"] > 0 and m["cost"]["questions_per_s"] > 0
    assert m["cost"]["llm_calls_total"] == 0
    md = (out / "report.md").read_text()
    assert "Hits@1 (strict" in md and "Hit (lenient" in md and "Reachability ceiling" in md
    assert (out / "per_hop.png").stat().st_size > 1000 and (out / "latency.png").stat().st_size > 1000


def test_interrupt_then_resume_and_partial_line(metaqa_graph, neo4j_uri, metaqa_file, tmp_path):
    path, gold = metaqa_file
    out = tmp_path / "run"
    cfg = RunConfig(dataset=str(path), method="neighbors", out=out, workers=2)
    seen = []

    def ctrl_c_after_5(rec):
        seen.append(rec["id"])
        if len(seen) == 5:
            raise KeyboardInterrupt

    res = run_eval(cfg, store_factory=_factory(neo4j_uri), progress=False, on_record=ctrl_c_after_5)
    assert res.interrupted and res.done == 5
    first = read_predictions(out / "predictions.jsonl")
    assert set(first) == set(seen)
    m = json.loads((out / "metrics.json").read_text())
    assert not m["complete"] and m["n_done"] == 5
    # a kill in the middle of a write leaves half a line: it is ignored and cut
    with open(out / "predictions.jsonl", "a") as fh:
        fh.write('{"id": "2hop_test:1", "answers": [')
    res2 = run_eval(cfg, store_factory=_factory(neo4j_uri), progress=False)
    assert not res2.interrupted and res2.answered_now == len(gold) - 5 and res2.done == len(gold)
    lines = (out / "predictions.jsonl").read_text().splitlines()
    ids = [json.loads(line)["id"] for line in lines]  # every line parses
    assert len(ids) == len(set(ids)) == len(gold)
    again = run_eval(cfg, store_factory=_factory(neo4j_uri), progress=False)
    assert again.answered_now == 0
    info = json.loads((out / "run.json").read_text())
    assert [s["interrupted"] for s in info["sessions"]] == [True, False, False]


def test_failing_questions_are_recorded_and_the_run_goes_on(metaqa_graph, neo4j_uri, metaqa_file, tmp_path,
                                                             monkeypatch):
    path, gold = metaqa_file
    real_create = runner_mod.create_method
    state = {"fail": True}

    class Flaky:
        def __init__(self, inner):
            self.inner, self.name = inner, inner.name

        def answer(self, q):
            if state["fail"] and q.id.endswith((":2", ":4")):
                raise ValueError(f"cannot answer {q.id}")
            return self.inner.answer(q)

    monkeypatch.setattr(runner_mod, "create_method", lambda name, ctx: Flaky(real_create(name, ctx)))
    out = tmp_path / "run"
    cfg = RunConfig(dataset=str(path), method="oracle-paths", out=out, ceiling=False)
    res = run_eval(cfg, store_factory=_factory(neo4j_uri), progress=False)
    assert res.done == len(gold) and res.errors == 2
    recs = read_predictions(out / "predictions.jsonl")
    bad = {k: v for k, v in recs.items() if v["error"]}
    assert set(bad) == {"2hop_test:2", "2hop_test:4"}
    assert bad["2hop_test:2"]["error"] == "ValueError: cannot answer 2hop_test:2" and bad["2hop_test:2"]["answers"] == []
    assert bad["2hop_test:2"]["scores"]["hits1_strict"] == 0.0
    m = json.loads((out / "metrics.json").read_text())
    assert m["n_errors"] == 2 and "ceiling" not in m["overall"]
    # a plain rerun keeps the errors; --retry-errors answers them again
    assert run_eval(cfg, store_factory=_factory(neo4j_uri), progress=False).errors == 2
    state["fail"] = False
    cfg.retry_errors = True
    res3 = run_eval(cfg, store_factory=_factory(neo4j_uri), progress=False)
    assert res3.answered_now == 2 and res3.errors == 0


def test_workers_give_the_same_predictions(metaqa_graph, neo4j_uri, metaqa_file, tmp_path):
    path, _ = metaqa_file
    outs = {}
    for w in (1, 3):
        out = tmp_path / f"w{w}"
        run_eval(RunConfig(dataset=str(path), method="oracle-paths", out=out, workers=w, ceiling=False),
                 store_factory=_factory(neo4j_uri), progress=False)
        outs[w] = {k: [a["text"] for a in v["answers"]] for k, v in read_predictions(out / "predictions.jsonl").items()}
        recs = read_predictions(out / "predictions.jsonl")
        # per-thread stores: each question's Neo4j count is its own (resolve + one walk per topic)
        assert all(r["usage"]["neo4j_queries"] in (1, 2) for r in recs.values())
    assert outs[1] == outs[3]


def test_rerun_into_a_folder_of_another_run_is_refused(metaqa_graph, neo4j_uri, metaqa_file, tmp_path):
    path, _ = metaqa_file
    out = tmp_path / "run"
    run_eval(RunConfig(dataset=str(path), method="neighbors", out=out, limit=3, ceiling=False),
             store_factory=_factory(neo4j_uri), progress=False)
    with pytest.raises(ConfigError, match="method"):
        run_eval(RunConfig(dataset=str(path), method="oracle-paths", out=out, limit=3),
                 store_factory=_factory(neo4j_uri), progress=False)
    with pytest.raises(ConfigError, match="selection"):
        run_eval(RunConfig(dataset=str(path), method="neighbors", out=out, limit=4),
                 store_factory=_factory(neo4j_uri), progress=False)
    with pytest.raises(ConfigError, match="unknown method"):
        run_eval(RunConfig(dataset=str(path), method="nope", out=tmp_path / "other"),
                 store_factory=_factory(neo4j_uri), progress=False)


def test_cli_eval_and_compare(metaqa_graph, neo4j_uri, metaqa_file, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from cli import app

    monkeypatch.setenv("NEO4J_URI", neo4j_uri)
    path, gold = metaqa_file
    runner = CliRunner()
    a, b = tmp_path / "a", tmp_path / "b"
    r1 = runner.invoke(app, ["eval", str(path), "--method", "oracle-paths", "--out", str(a)])
    assert r1.exit_code == 0, r1.output
    assert "Hits@1 (strict)" in r1.output and "ceiling" in r1.output
    r2 = runner.invoke(app, ["eval", "run", str(path), "-m", "neighbors", "--out", str(b), "--workers", "2",
                             "--no-ceiling"])
    assert r2.exit_code == 0, r2.output
    r3 = runner.invoke(app, ["eval", "compare", str(a), str(b), "--markdown"])
    assert r3.exit_code == 0, r3.output
    ma = json.loads((a / "metrics.json").read_text())
    mb = json.loads((b / "metrics.json").read_text())
    delta = mb["overall"]["hits1_strict"] - ma["overall"]["hits1_strict"]
    assert f"{delta:+.3f}" in r3.output and "Paired over" in r3.output
    r4 = runner.invoke(app, ["eval", "report", str(a)])
    assert r4.exit_code == 0 and "Hits@1" in r4.output
    r5 = runner.invoke(app, ["eval", str(path), "--method", "neighbors", "--option", "novalue"])
    assert r5.exit_code == ConfigError.exit_code and r5.output.startswith("error: --option expects KEY=VALUE")
    # the scores in the file agree with the metric functions applied to the stored answers
    for rec in read_predictions(b / "predictions.jsonl").values():
        assert rec["scores"] == score_answers([x["text"] for x in rec["answers"]], rec["gold"]).as_dict()


def test_save_evidence_records_each_answered_question(metaqa_graph, neo4j_uri, metaqa_file, tmp_path):
    path, gold = metaqa_file
    before = metaqa_graph.graph_version()
    res = run_eval(RunConfig(dataset=str(path), method="oracle-paths", out=tmp_path / "run", limit=3,
                             save_evidence=True), store_factory=_factory(neo4j_uri), progress=False)
    recs = read_predictions(tmp_path / "run" / "predictions.jsonl")
    ids = [r["extra"]["evidence_id"] for r in recs.values() if not r["error"]]
    assert res.done == 3 and len(ids) == 3
    rows = metaqa_graph.read("MATCH (q:SgrQuestion) WHERE q.id IN $ids "
                             "OPTIONAL MATCH (q)-[e:SGR_EVIDENCE]->(x:Entity) "
                             "RETURN q.id AS id, q.text AS text, count(e) AS n", {"ids": ids})
    assert {r["id"] for r in rows} == set(ids)
    texts = {r["question"] for r in recs.values()}
    assert all(r["text"] in texts for r in rows)
    answered = {r["id"] for r in rows if r["n"] > 0}
    with_answers = {r["extra"]["evidence_id"] for r in recs.values() if r["answers"]}
    assert with_answers <= answered
    assert metaqa_graph.graph_version() == before  # evidence leaves the data untouched
