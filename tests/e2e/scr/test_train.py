"""A short real training run on the MetaQA slice: the trained model must beat the untrained one.

Then the trained checkpoint answers through the method registry (``scr``, ``scr-greedy``) and every path it
returns is checked edge by edge against Neo4j. Small config for CPU (1-hop questions, top-2 encoder layers,
3 epochs): about a minute on 2 cores.
"""

from __future__ import annotations

import random

import pytest
import torch

from sgr.core.errors import ConfigError
from sgr.methods.registry import MethodContext, create_method
from sgr.methods.scr.beam import ANSWER_SCORES
from sgr.methods.scr.data import SubgraphConfig, SubgraphSource, build_examples
from sgr.methods.scr.model import SCRConfig, SCRModel
from sgr.methods.scr.train import ScrTrainConfig, choose_answer_score, evaluate_hits, seed_everything, train

from .conftest import slice_questions

pytestmark = pytest.mark.slow


def test_training_beats_untrained_and_answers_with_real_paths(metaqa_graph, shared_data, tmp_path) -> None:
    torch.set_num_threads(2)
    store = metaqa_graph
    qs = slice_questions(store, shared_data, hops=1)
    random.Random(0).shuffle(qs)
    assert len(qs) >= 100, f"only {len(qs)} 1-hop questions fall inside the 300-movie slice"
    cfg = SCRConfig(subgraph=SubgraphConfig(hops=1, max_nodes=500), max_steps=1, trainable_layers=2)
    source = SubgraphSource(store, cfg.subgraph, folder=tmp_path)
    train_ex = build_examples(source, qs[:64], max_depth=1)
    test_ex = build_examples(source, qs[64:104], max_depth=1)
    assert sum(bool(e.walks) for e in train_ex) >= 60

    seed_everything(0)
    model = SCRModel(cfg)
    hit0, hits1_0 = evaluate_hits(model, test_ex, beam=3)
    result = train(model, train_ex, test_ex[:8], ScrTrainConfig(epochs=3, batch_size=16, lr_encoder=1e-4, lr_graph=3e-3,
                                                            patience=3, val_beam=3, progress=False,
                                                            out_dir=tmp_path / "ckpt"))
    hit1, hits1_1 = evaluate_hits(model, test_ex, beam=3)
    print(f"untrained Hit {hit0:.3f} Hits@1 {hits1_0:.3f}; trained Hit {hit1:.3f} Hits@1 {hits1_1:.3f}")
    assert result.history[-1].loss < result.history[0].loss
    assert hits1_1 >= hits1_0 + 0.15, (hits1_0, hits1_1)
    assert hit1 >= hit0
    assert result.best_path is not None and result.best_path.exists()

    # the answer ranking is chosen on validation and recorded in the checkpoint; the methods follow it unless told
    choice = choose_answer_score(result.best_path, test_ex[:16], beam=3)
    figs = choice["answer_score_val_hits1"]
    assert set(figs) == set(ANSWER_SCORES) and figs[choice["answer_score"]] == max(figs.values())

    # the checkpoint reloads and answers as an Answerer; every returned path is a real walk in Neo4j
    ctx = MethodContext(store=store, options={"checkpoint": str(result.best_path), "device": "cpu"})
    scr = create_method("scr", ctx)
    assert scr.answer_score == choice["answer_score"]
    told = {"checkpoint": str(result.best_path), "device": "cpu"}
    assert create_method("scr", MethodContext(store=store, options={**told, "answer_score": "sum"})).answer_score == "sum"
    with pytest.raises(ConfigError, match="answer_score"):
        create_method("scr", MethodContext(store=store, options={**told, "answer_score": "mean"}))
    greedy = create_method("scr-greedy", ctx)
    for ex in test_ex[:5]:
        pred = scr.answer(ex.question)
        assert pred.method == "scr" and pred.answers and pred.paths
        assert len(pred.paths) <= 10 and all(p.score >= 0.02 for p in pred.paths)
        assert [a.score for a in pred.answers] == sorted((a.score for a in pred.answers), reverse=True)
        for path in pred.paths:
            assert path.nodes[0] in ex.question.topic_entities and path.source == "scr"
            for h, rel, t in path.triples():
                n = store.read("MATCH (h:Entity {id: $h})-[r]->(t:Entity {id: $t}) WHERE type(r) = $rel "
                               "RETURN count(r) AS n", {"h": h, "rel": rel, "t": t})[0]["n"]
                assert n > 0, (h, rel, t)
        g = greedy.answer(ex.question)
        assert len(g.paths) == 1

    # SCR as SGR's path proposer (`sgr ask --retriever scr`): with nothing valid from direct reasoning, only SCR's
    # paths vote (ρ = their probability), and each answer is supported by an SCR walk
    from tests.helpers import scripted_llm
    from sgr.methods.sgr.answerer import SGRAnswerer, config_from_options

    ex = next(e for e in test_ex if e.walks)
    nowhere = f'MATCH (e:Entity {{name: "{ex.question.topic_entities[0]}"}}) RETURN "Atlantis" AS answer'
    for retriever in ("scr", "schema+scr"):
        cfg = config_from_options("sgr", {"exemplars": False, "compiled_fallback": False, "max_verify_calls": 0,
                                          "max_repairs": 0, "hops": 1, "path_retriever": retriever,
                                          "scr_checkpoint": str(result.best_path)})
        llm = scripted_llm('{"relations": [1]}', nowhere)
        res = SGRAnswerer(store, llm, cfg, name="sgr").run(ex.question)
        assert res.scr_paths and all(p.source == "scr" and 0 < p.score <= 1 for p in res.scr_paths)
        assert res.prediction.route == "collaborative" and res.prediction.answers
        assert "scr" in res.prediction.usage.stage_seconds
        voted = {v.origin for v in res.inputs.votes}  # who voted (a walk G_q and SCR both found shows once)
        assert voted == {"scr"} if retriever == "scr" else "scr" in voted and len(voted) > 1, (retriever, voted)
        for a in res.prediction.answers:
            assert a.paths and a.paths[0].nodes[-1] == a.id
    with pytest.raises(Exception, match="path_retriever"):
        config_from_options("sgr", {"path_retriever": "gnn"})
