"""SCR's bundle (sgr/methods/scr/bundle.py): a real MiniLM-based SCR model trained from a bundle "there" (the same
process, on the CPU), its trained weights folded into a model built here, what is refused, and the time budget that
keeps a run inside one command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from sgr.core.errors import ConfigError
from sgr.core.types import Question
from sgr.methods.scr import bundle as sb
from sgr.methods.scr.data import Example, shortest_paths
from sgr.methods.scr.model import SCRConfig, SCRModel
from sgr.methods.scr.train import ScrTrainConfig, train
from tests.unit.rcr.test_encoder_training import private_cache  # noqa: F401 - fixture
from tests.unit.scr.test_beam import NAMES, hand_graph

QUESTIONS = [("what does Topic lead to after A", "C"), ("where does Topic go through B", "D"),
             ("which node follows Topic", "A"), ("what is two steps from Topic via B", "D")]


def _examples(n: int = 4) -> list[Example]:
    out = []
    for i, (text, answer) in enumerate(QUESTIONS[:n]):
        sg = hand_graph()
        answers = [NAMES.index(answer)]
        out.append(Example(Question(str(i), text, ["Topic"], [answer]), sg, answers, shortest_paths(sg, answers, 3)))
    return out


def _configs(epochs: int = 2) -> tuple[SCRConfig, ScrTrainConfig]:
    return (SCRConfig(encoder="minilm", trainable_layers=1, max_steps=3),
            ScrTrainConfig(epochs=epochs, batch_size=2, lr_encoder=1e-3, lr_graph=1e-2, patience=5, val_beam=3,
                           progress=False))


def test_a_bundle_trained_elsewhere_folds_into_a_model_here(private_cache: Path) -> None:  # noqa: F811
    mcfg, tcfg = _configs()
    bundle, there, here = private_cache / "bundle", private_cache / "there", private_cache / "here"
    sb.write(bundle, _examples(), _examples(2), mcfg, tcfg, data={"dataset": "unit", "graph_version": "g1"},
             part_mib=8)
    man = sb.manifest(bundle)
    assert len(man["parts"]) >= 2 and len(man["subgraph_sizes"]) == 1  # one G_q shared by six examples
    moved = private_cache / "moved"  # the first weights part travels separately
    moved.mkdir()
    shutil.move(str(bundle / "parts" / man["parts"][0]), moved / man["parts"][0])
    with pytest.raises(ConfigError, match="in none of"):
        sb.run(bundle, there, device="cpu", workdir=private_cache / "work0")
    res = sb.run(bundle, there, part_folders=[moved], device="cpu", workdir=private_cache / "work")
    assert res["device"] == "cpu" and res["train_questions"] == 4 and res["val_questions"] == 2
    assert len(res["result"]["history"]) == 2 and res["result"]["answer_score"]["answer_score"]

    result, returned = sb.fold(bundle, there, here)
    assert returned["bundle"] == man["id"] and result.best_epoch == res["result"]["best_epoch"]
    folded, meta = SCRModel.load(here / "best.pt")
    trained_there, _ = SCRModel.load(private_cache / "work" / "state" / "best.pt")
    untrained = SCRModel(SCRConfig.from_dict(man["model"]))
    mine, theirs, fresh = (dict(m.named_parameters()) for m in (folded, trained_there, untrained))
    for name, p in mine.items():
        if p.requires_grad:  # trained there: the chosen epoch's weights, through fp16
            assert torch.allclose(p, theirs[name], atol=2e-3, rtol=1e-3), name
        else:  # frozen: this machine's original encoder, not the int8 trip the run started from
            assert torch.equal(p, fresh[name]), name
    assert not torch.allclose(mine["w_c.weight"], fresh["w_c.weight"])  # training moved the candidate layer
    assert meta["graph_version"] == "g1" and meta["answer_score"] == res["result"]["answer_score"]["answer_score"]
    assert json.loads((here / "history.json").read_text())["best_epoch"] == result.best_epoch


def test_the_output_of_another_bundle_is_refused(private_cache: Path) -> None:  # noqa: F811
    mcfg, tcfg = _configs(epochs=1)
    sb.write(private_cache / "a", _examples(), _examples(2), mcfg, tcfg, data={})
    sb.write(private_cache / "b", _examples(3), _examples(2), mcfg, tcfg, data={})  # other examples
    sb.run(private_cache / "a", private_cache / "out", device="cpu")
    with pytest.raises(ConfigError, match="another bundle"):
        sb.fold(private_cache / "b", private_cache / "out", private_cache / "folded")
    with pytest.raises(ConfigError, match="not an SCR bundle"):
        sb.manifest(private_cache / "out")


def test_mpnet_trained_whole_is_refused_naming_what_would_come_back(private_cache: Path) -> None:  # noqa: F811
    _, tcfg = _configs()
    with pytest.raises(ConfigError, match="--trainable-layers 3"):
        sb.write(private_cache / "m", _examples(), [], SCRConfig(encoder="mpnet"), tcfg, data={})


def test_a_spent_time_budget_ends_the_epoch_and_the_run() -> None:
    mcfg, tcfg = _configs(epochs=3)
    tcfg.time_budget = 1e-9
    res = train(SCRModel(mcfg), _examples(), _examples(2), tcfg)
    assert len(res.history) == 1 and res.stopped_early
    assert not res.history[0].complete and res.history[0].steps == 0
