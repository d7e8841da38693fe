"""sgr llm tune for real: a tiny tuning run of the packaged SmolLM2 on a MetaQA dev slice must beat the untuned
model on its own held-back questions; its export must load in the llama.cpp server and give a grammar-constrained
schema answer there (the same first path the tuned weights gave in transformers)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sgr.core.errors import LLMError
from sgr.core.text import gbnf_literal
from sgr.llm import finetune as ft
from sgr.methods.sgr import tuning
from sgr.methods.sgr.prompts import parse_schema_reply, schema_prompt

METAQA_RELATIONS = ("directed_by", "written_by", "starred_actors", "release_year", "in_language", "has_tags",
                    "has_genre", "has_imdb_votes", "has_imdb_rating")


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("SGR_REQUIRE_LLM") == "1":
        pytest.fail(f"SGR_REQUIRE_LLM=1 but tuning is unavailable: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory):
    """48 MetaQA dev questions (16 per hop): 36 to train on, 12 held back; top 2 layers, 3 epochs."""
    import importlib.util

    from sgr.llm.gguf_export import write_merged
    from sgr.llm.server import model_path

    if importlib.util.find_spec("gguf") is None:
        _skip_or_fail("the gguf package is not installed")
    try:
        base = model_path()
    except LLMError as exc:
        _skip_or_fail(str(exc))
    exs = tuning.metaqa_dev_examples(per_hop=16, seed=7)
    cfg = ft.TuneConfig(top_layers=2, epochs=3, batch_size=6, lr=1e-3, val_fraction=0.25, max_val=12, patience=1,
                        checkpoint_every=1000, seed=0)
    train, val = ft.split_examples(exs, cfg)
    model, tok = ft.load_base(base)
    before = ft.generate(model, tok, val, max_new_tokens=18)
    out = tmp_path_factory.mktemp("tune")
    result = ft.train(model, tok, train, val, cfg, out, log=lambda _: None, show_progress=False)
    after = ft.generate(model, tok, val, max_new_tokens=18)
    state = ft.top_state(model, len(model.model.layers) - cfg.top_layers)
    weights = write_merged(base, out / "model.gguf", state)
    yield {"val": val, "before": before, "after": after, "result": result, "weights": weights, "state": state,
           "base": base}
    shutil.rmtree(out, ignore_errors=True)


def test_tiny_tuning_beats_the_untuned_model_on_held_back_questions(tiny_run) -> None:
    result = tiny_run["result"]
    assert result.n_train == 36 and result.n_val == 12 and result.steps > 0
    assert result.best_val_loss < result.base_val_loss
    base = tuning.path_accuracy(tiny_run["val"], tiny_run["before"])
    tuned = tuning.path_accuracy(tiny_run["val"], tiny_run["after"])
    assert tuned["exact"] > base["exact"], (base, tuned, tiny_run["after"])
    assert tuned["parsed"] >= 0.75, tiny_run["after"]  # replies in the schema format


def schema_grammar(relations: tuple[str, ...], max_hops: int = 3) -> str:
    """One 'path: r1 > r2 …' line over the given relations (what SGR's per-question grammar allows)."""
    rel = " | ".join(gbnf_literal(r) for r in relations)
    tail = " ".join(f'(" > " rel' for _ in range(max_hops - 1)) + ")?" * (max_hops - 1)
    return f'root ::= "path: " rel {tail}\nrel ::= {rel}\n'


def _constrained_reply(weights: Path, question: str, topic: str, log: Path) -> str:
    from sgr.llm import server
    from sgr.llm.client import LLM

    proc, info = server.launch(log=log, model=str(weights), n_threads=1)
    try:
        assert info.kind == "path" and info.model != server.MODEL_ALIAS
        llm = LLM.from_endpoint(info.base_url, info.model, cache_dir=None, dialect="llamacpp")
        return llm.complete(schema_prompt(question, [topic]), stage="schema", grammar=schema_grammar(METAQA_RELATIONS),
                            max_tokens=30)
    finally:
        server.terminate(proc.pid)


@pytest.mark.llm
def test_exported_model_serves_a_constrained_schema_answer(tiny_run, tmp_path: Path) -> None:
    """F16 tuned layers (the CPU path's export) and Q8_0 ones (the export of a LoRA run, every layer tuned) give the
    tuned first path through the real server; Q8_0 tensors are within its rounding of the F16 ones."""
    import numpy as np

    from sgr.llm import server
    from sgr.llm.gguf_export import base_tensor, write_merged

    try:
        server.check_installed()
    except LLMError as exc:
        _skip_or_fail(str(exc))
    right = [(e, r) for e, r in zip(tiny_run["val"], tiny_run["after"])
             if parse_schema_reply(r)[0][:1] == parse_schema_reply(e.target)[0][:1]]
    assert right, "the tuned model answered no held-back question right"
    ex, _ = right[0]
    question, topic = tuning.question_of(ex), ex.user.split("Topic: ", 1)[1]
    q8 = write_merged(tiny_run["base"], tmp_path / "model-q8.gguf", tiny_run["state"], matrix_type="q8_0")
    name = "blk.29.ffn_down.weight"
    f16, q8w = base_tensor(tiny_run["weights"], name), base_tensor(q8, name)
    assert np.abs(q8w - f16).max() <= np.abs(f16).max() / 127 + 1e-6
    assert q8.stat().st_size < tiny_run["weights"].stat().st_size
    for weights in (tiny_run["weights"], q8):
        reply = _constrained_reply(weights, question, topic, tmp_path / f"{weights.stem}.log")
        paths, _ = parse_schema_reply(reply)
        assert paths and set(paths[0]) <= set(METAQA_RELATIONS), reply
        assert paths[0] == parse_schema_reply(ex.target)[0][0], (weights.name, question, reply)


def test_graph_paths_treat_cvt_nodes_as_pass_through(clean_store) -> None:
    from loaders.writer import GraphBatch, write_graph

    batch = GraphBatch()
    batch.add_triple("Alice", "people.person.spouse_s", "m.0cvt1")  # an unnamed MID: a CVT
    batch.add_triple("m.0cvt1", "people.marriage.spouse", "Bob")
    batch.add_triple("Alice", "people.person.sibling", "Carol")  # a named intermediate: a real hop
    batch.add_triple("Carol", "people.person.friend", "Bob")
    write_graph(clean_store, batch)
    one_hop = tuning.graph_paths(clean_store, "Alice", ["Bob"], max_hops=1)
    assert one_hop == [["people.person.spouse_s", "people.marriage.spouse"]]
    two_hops = tuning.graph_paths(clean_store, "Alice", ["Bob"], max_hops=2)
    assert sorted(map(tuple, two_hops)) == [("people.person.sibling", "people.person.friend"),
                                            ("people.person.spouse_s", "people.marriage.spouse")]
    assert tuning.graph_paths(clean_store, "Alice", ["Nobody"]) == []


# -- the trainer's pieces ---------------------------------------------------------------------------


def test_tune_cli_writes_a_bundle_with_its_options_and_refuses_a_foreign_one(tmp_path: Path, monkeypatch) -> None:
    """`sgr llm tune --bundle` through the real command line: the options reach the bundle's manifest (method,
    rank, epochs, the split), the base model travels in parts that join back to it, no training happens; and
    `--from-bundle` without `--bundle`, or an unknown `--method`, stops with a message."""
    import hashlib

    from typer.testing import CliRunner

    from cli import app
    from sgr.llm import bundle
    from sgr.llm.server import model_path

    try:
        base = model_path()
    except LLMError as exc:
        _skip_or_fail(str(exc))
    monkeypatch.setenv("SGR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:9")  # no store: the run is keyed no-graph
    runner = CliRunner()
    common = ["llm", "tune", "--no-webqsp", "--metaqa-per-hop", "4", "--val-fraction", "0.25", "--eval-n", "2"]
    res = runner.invoke(app, [*common, "--method", "lora", "--lora-rank", "8", "--epochs", "5",
                              "--bundle", str(tmp_path / "b")])
    assert res.exit_code == 0, res.output
    man = bundle.manifest(tmp_path / "b")
    assert man["config"]["method"] == "lora" and man["config"]["lora_rank"] == 8 and man["config"]["epochs"] == 5
    assert man["eval_n"] == 2 and man["data"]["sources"] == {"metaqa_dev": 12}
    train, val = bundle.read_examples(tmp_path / "b")
    assert (len(train), len(val)) == (9, 3)
    joined = b"".join((tmp_path / "b" / "parts" / n).read_bytes() for n in man["parts"])
    assert hashlib.sha256(joined).hexdigest() == man["base_sha256"] == hashlib.sha256(base.read_bytes()).hexdigest()
    assert not list((tmp_path / "home").rglob("model.gguf")), "a bundle is written, nothing is trained"

    res = runner.invoke(app, [*common, "--from-bundle", str(tmp_path / "out")])
    assert res.exit_code != 0 and "--from-bundle needs --bundle" in res.output
    res = runner.invoke(app, [*common, "--method", "full", "--bundle", str(tmp_path / "c")])
    assert res.exit_code != 0 and "--method must be one of top, lora" in res.output
