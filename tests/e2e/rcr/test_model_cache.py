"""Trained heads are saved with the graph version and found again only for that version (real Neo4j)."""

from __future__ import annotations

from loaders.writer import GraphBatch, write_graph
from sgr.retrieval.relations import load_retriever, trained_model_for
from sgr.retrieval.supervision import RelationExample
from sgr.retrieval.training import RelationTrainConfig, default_model_path, save_model, train_heads


def test_auto_finds_the_model_of_this_graph_version_only(clean_store, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SGR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SGR_RELATION_MODEL", raising=False)
    batch = GraphBatch()
    for h, r, t in [("Jamaica", "location.country.languages_spoken", "Jamaican English"),
                    ("Jamaica", "location.location.containedby", "Caribbean"),
                    ("Barack Obama", "people.person.place_of_birth", "Honolulu")]:
        batch.add_triple(h, r, t)
    write_graph(clean_store, batch)
    vocab = [v["name"] for v in clean_store.relation_vocabulary()]
    assert load_retriever(clean_store, "auto").trained is False  # nothing trained yet: plain cosine
    assert trained_model_for(clean_store) is None

    train = [RelationExample("1", "what language is spoken in peru", (("location.country.languages_spoken",),)),
             RelationExample("2", "where was john born", (("people.person.place_of_birth",),))]
    cfg = RelationTrainConfig(epochs=2, negatives=2, batch_size=2)
    result = train_heads(train, [], vocab, vocab, cfg)
    version = clean_store.graph_version()
    path = save_model(default_model_path("tiny", version), result, dataset="tiny", graph_version=version,
                      vocabulary_size=len(vocab), config=cfg)
    assert path.exists() and path.parent == tmp_path / "relations"

    r = load_retriever(clean_store, "auto")
    assert r.trained and r.info["graph_version"] == version and r.graph_version == version
    assert sorted(r.relations) == sorted(vocab)
    assert [x.name for x in r.retrieve("what language do they speak in jamaica", 3)] and len(r.retrieve("x", 99)) == 3
    assert trained_model_for(clean_store) is not None

    # new data → new graph version → the old heads are not picked automatically
    more = GraphBatch()
    more.add_triple("Peru", "location.country.currency_used", "Peruvian sol")
    write_graph(clean_store, more)
    assert clean_store.graph_version() != version
    assert load_retriever(clean_store, "auto").trained is False
    assert load_retriever(clean_store, path).trained is True  # an explicit model file still loads


def test_a_fine_tuned_encoder_trains_from_the_cli_and_auto_serves_it(webqsp_graph, neo4j_uri, tmp_path,
                                                                     monkeypatch) -> None:
    from typer.testing import CliRunner

    from cli import app
    from sgr.core.errors import ConfigError
    from sgr.llm import encoders
    from sgr.retrieval.relations import FineTunedRelationRetriever

    monkeypatch.setenv("NEO4J_URI", neo4j_uri)
    monkeypatch.setenv("SGR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SGR_RELATION_MODEL", raising=False)
    encoders._caches.clear()
    runner = CliRunner()
    bad = runner.invoke(app, ["relations", "train", "--dataset", "webqsp", "--method", "encoder", "--gamma", "0.3"])
    assert bad.exit_code == ConfigError.exit_code and "--gamma is a setting of --method heads" in bad.output
    bad = runner.invoke(app, ["relations", "train", "--dataset", "webqsp", "--method", "bert"])
    assert bad.exit_code == ConfigError.exit_code and "unknown --method 'bert'" in bad.output

    done = runner.invoke(app, ["relations", "train", "--dataset", "webqsp", "--method", "encoder", "--epochs", "1",
                               "--limit", "40", "--hard-negatives", "2", "--negatives", "8"])
    assert done.exit_code == 0, done.output
    version = webqsp_graph.graph_version()
    path = default_model_path("webqsp", version, "encoder")
    assert path.exists() and (path.with_suffix(".encoder") / encoders.WEIGHTS).exists() and "saved" in done.output

    r = load_retriever(webqsp_graph, "auto")
    assert isinstance(r, FineTunedRelationRetriever) and r.trained and r.info["kind"] == "encoder"
    assert r.info["train_questions"] == 36 and r.info["config"]["hard_negatives"] == 2
    assert trained_model_for(webqsp_graph) == str(path)
    assert len(r.retrieve("what language do they speak in jamaica", 5)) == 5
    shown = runner.invoke(app, ["relations", "eval", "--limit", "20"])
    assert shown.exit_code == 0 and "trained" in shown.output and "cosine" in shown.output, shown.output
    encoders._caches.clear()


def test_an_encoder_bundle_goes_out_from_the_cli_and_its_weights_come_back_as_the_graphs_model(
        webqsp_graph, neo4j_uri, tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from cli import app
    from sgr.core.errors import ConfigError
    from sgr.llm import encoders
    from sgr.retrieval import encoder_bundle
    from sgr.retrieval.relations import FineTunedRelationRetriever

    monkeypatch.setenv("NEO4J_URI", neo4j_uri)
    monkeypatch.setenv("SGR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SGR_RELATION_MODEL", raising=False)
    encoders._caches.clear()
    runner = CliRunner()
    base = ["relations", "train", "--dataset", "webqsp"]
    bad = runner.invoke(app, [*base, "--lora-rank", "4"])
    assert bad.exit_code == ConfigError.exit_code and "--lora-rank is a setting of --method encoder" in bad.output
    bad = runner.invoke(app, [*base, "--method", "encoder", "--from-bundle", str(tmp_path)])
    assert bad.exit_code == ConfigError.exit_code and "--from-bundle needs --bundle" in bad.output

    bundle, there = tmp_path / "bundle", tmp_path / "there"
    wrote = runner.invoke(app, [*base, "--method", "encoder", "--lora-rank", "4", "--epochs", "1", "--limit", "40",
                                "--hard-negatives", "2", "--negatives", "8", "--bundle", str(bundle)])
    assert wrote.exit_code == 0 and "encoder bundle" in wrote.output, wrote.output
    man = encoder_bundle.manifest(bundle)
    assert man["data"]["graph_version"] == webqsp_graph.graph_version() and len(man["train"]) == 36
    assert not default_model_path("webqsp", webqsp_graph.graph_version(), "encoder").exists()  # nothing trained yet

    assert encoder_bundle.main([str(bundle), str(there), "--device", "cpu"]) == 0  # what the GPU machine runs
    back = runner.invoke(app, [*base, "--method", "encoder", "--bundle", str(bundle), "--from-bundle", str(there)])
    assert back.exit_code == 0 and "saved" in back.output, back.output
    r = load_retriever(webqsp_graph, "auto")
    assert isinstance(r, FineTunedRelationRetriever) and r.info["config"]["lora_rank"] == 4
    assert len(r.retrieve("what language do they speak in jamaica", 5)) == 5
