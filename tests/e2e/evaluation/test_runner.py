"""`sgr eval` end to end against the real Neo4j: run, report, resume, errors, workers, CLI, compare."""

from __future__ import annotations

import itertools
import json
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

from sgr.core.errors import ConfigError
from sgr.core.types import Answer, Prediction, Usage
from sgr.llm.client import LLM
from sgr.methods import registry
from sgr.methods.base import UsageMeter, parse_options
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
    assert (m["misses"]["n"], m["misses"]["misses"], m["misses"]["no_answer"]) == (n, 1, 1)  # the missing topic
    md = (out / "report.md").read_text()
    assert "Hits@1 (strict" in md and "Hit (lenient" in md and "Reachability ceiling" in md
    assert "## Misses" in md and "| no answer | 1 |" in md
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


# -- a method written the way methods are: typed options (parse_options), cost by its UsageMeter -------------
@dataclass
class ToyConfig:
    mu: float = 0.5
    max_answers: int = 3


class ToyLLMMethod:
    """Asks a scripted chat model once per question, then answers with the topic's directors from Neo4j."""

    name = "toy-llm"

    def __init__(self, store, options, llm: LLM) -> None:
        self.cfg = parse_options(ToyConfig, options, method=self.name)
        self.store, self.llm = store, llm
        self.meter = UsageMeter(store, llm)

    def answer(self, q):
        with self.meter.measure() as usage:
            with self.meter.stage("llm"):
                self.llm.complete([HumanMessage(content=q.text)], stage="toy", max_tokens=8)
            with self.meter.stage("walk"):
                rows = self.store.read("MATCH (m:Entity)-[:directed_by]->(d:Entity) WHERE m.name IN $t "
                                       "RETURN DISTINCT d.name AS name ORDER BY name LIMIT $k",
                                       {"t": q.topic_entities, "k": self.cfg.max_answers})
        return Prediction(question_id=q.id, answers=[Answer(text=r["name"]) for r in rows], usage=usage,
                          method=self.name)


def _scripted_chat(text: str, prompt_tokens: int = 30) -> GenericFakeChatModel:
    reply = AIMessage(content=text, usage_metadata={"input_tokens": prompt_tokens, "output_tokens": 4,
                                                    "total_tokens": prompt_tokens + 4})
    return GenericFakeChatModel(messages=itertools.repeat(reply))


@pytest.fixture()
def toy_method(monkeypatch, tmp_path):
    """Registers ``toy-llm`` (built from ``state["llm"]``) and ``no-meter`` (returns an empty Usage)."""
    state = {"llm": LLM(_scripted_chat("cold"), name="toy", cache_dir=tmp_path / "llm-cache")}
    module = types.ModuleType("_sgr_toy_methods")
    module.create_toy = lambda ctx: ToyLLMMethod(ctx.store, ctx.options, state["llm"])  # type: ignore[attr-defined]

    class NoMeter:
        name = "no-meter"

        def answer(self, q):
            return Prediction(question_id=q.id, answers=[Answer(text="x")], usage=Usage(), method=self.name)

    module.create_no_meter = lambda ctx: NoMeter()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "_sgr_toy_methods", module)
    monkeypatch.setitem(registry.METHODS, "toy-llm", "_sgr_toy_methods:create_toy")
    monkeypatch.setitem(registry.METHODS, "no-meter", "_sgr_toy_methods:create_no_meter")
    return state


def test_unknown_or_bad_option_fails_in_one_line_and_records_nothing(metaqa_graph, neo4j_uri, metaqa_file,
                                                                    tmp_path, toy_method):
    path, _ = metaqa_file
    for options, message in (({"muu": "0.9"}, "unknown option 'muu'; valid options: llm_cache, max_answers, mu"),
                             ({"mu": "high"}, "option mu='high' is not a valid float")):
        out = tmp_path / f"run-{len(message)}"
        with pytest.raises(ConfigError) as err:
            run_eval(RunConfig(dataset=str(path), method="toy-llm", out=out, options=options),
                     store_factory=_factory(neo4j_uri), progress=False)
        assert message in str(err.value) and "\n" not in str(err.value)
        assert not out.exists()  # nothing recorded: no run.json naming the typo, no predictions
    # a run folder that exists already is left as it was
    good = tmp_path / "good"
    run_eval(RunConfig(dataset=str(path), method="toy-llm", out=good, limit=2, ceiling=False, options={"mu": "0.9"}),
             store_factory=_factory(neo4j_uri), progress=False)
    before = {p.name: p.read_bytes() for p in good.iterdir() if p.suffix in (".json", ".jsonl")}
    with pytest.raises(ConfigError, match="muu"):
        run_eval(RunConfig(dataset=str(path), method="toy-llm", out=good, limit=2, options={"muu": "0.9"}),
                 store_factory=_factory(neo4j_uri), progress=False)
    assert {p.name: p.read_bytes() for p in good.iterdir() if p.suffix in (".json", ".jsonl")} == before


def test_cli_unknown_option_is_one_line_with_exit_code_2(metaqa_graph, neo4j_uri, metaqa_file, tmp_path,
                                                         toy_method, monkeypatch, capsys):
    from cli import app

    monkeypatch.setenv("NEO4J_URI", neo4j_uri)
    path, _ = metaqa_file
    out = tmp_path / "cli-run"
    with pytest.raises(SystemExit) as exit_info:
        app(["eval", str(path), "--method", "toy-llm", "-o", "muu=0.9", "--out", str(out)], prog_name="sgr")
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert "unknown option 'muu'" in err and "valid options: llm_cache, max_answers, mu" in err
    assert not out.exists()


def test_usage_is_the_methods_own_and_cached_tokens_are_apart(metaqa_graph, neo4j_uri, metaqa_file, tmp_path,
                                                              toy_method):
    path, gold = metaqa_file
    n = len(gold)
    cold, warm = tmp_path / "cold", tmp_path / "warm"
    run_eval(RunConfig(dataset=str(path), method="toy-llm", out=cold, ceiling=False),
             store_factory=_factory(neo4j_uri), progress=False)
    # a rerun on the warm call cache: a new LLM object whose model would answer differently if it were called
    toy_method["llm"] = LLM(_scripted_chat("WRONG", prompt_tokens=999), name="toy", cache_dir=tmp_path / "llm-cache")
    run_eval(RunConfig(dataset=str(path), method="toy-llm", out=warm, ceiling=False),
             store_factory=_factory(neo4j_uri), progress=False)
    c_recs, w_recs = read_predictions(cold / "predictions.jsonl"), read_predictions(warm / "predictions.jsonl")
    for rec in c_recs.values():
        u = rec["usage"]
        assert (u["llm_calls"], u["llm_cached_calls"], u["prompt_tokens"], u["cached_prompt_tokens"]) == (1, 0, 30, 0)
        assert u["neo4j_queries"] >= 1 and u["total_seconds"] > 0 and set(u["stage_seconds"]) == {"llm", "walk"}
    for qid, rec in w_recs.items():
        u = rec["usage"]
        assert (u["llm_calls"], u["llm_cached_calls"], u["prompt_tokens"], u["cached_prompt_tokens"]) == (1, 1, 0, 30)
        assert (u["completion_tokens"], u["cached_completion_tokens"]) == (0, 4)
        assert rec["answers"] == c_recs[qid]["answers"]
    mc, mw = (json.loads((d / "metrics.json").read_text())["cost"] for d in (cold, warm))
    assert (mc["prompt_tokens_total"], mc["cached_prompt_tokens_total"]) == (30 * n, 0)
    assert (mw["prompt_tokens_total"], mw["cached_prompt_tokens_total"], mw["llm_cached_calls_total"]) == (0, 30 * n, n)
    assert "| prompt tokens cached: total / median | %d / 30.0 |" % (30 * n) in (warm / "report.md").read_text()


def test_the_harness_adds_no_measurement_of_its_own(metaqa_graph, neo4j_uri, metaqa_file, tmp_path, toy_method):
    path, _ = metaqa_file
    out = tmp_path / "run"
    run_eval(RunConfig(dataset=str(path), method="no-meter", out=out, limit=3, ceiling=False),
             store_factory=_factory(neo4j_uri), progress=False)
    for rec in read_predictions(out / "predictions.jsonl").values():
        assert rec["usage"]["total_seconds"] == 0.0 and rec["usage"]["neo4j_queries"] == 0
