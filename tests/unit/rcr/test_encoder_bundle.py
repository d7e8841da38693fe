"""RCR's encoder bundle (sgr/retrieval/encoder_bundle.py): the int8 trip of the weights, a real MiniLM trained from a
bundle here (LoRA and every weight), its weights folded back into the original encoder, and what is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from sgr.core.errors import ConfigError
from sgr.llm import encoders
from sgr.retrieval import encoder_bundle as eb
from sgr.retrieval.encoder_training import EncoderTrainConfig
from sgr.retrieval.supervision import RelationExample
from tests.unit.rcr.test_encoder_training import private_cache  # noqa: F401 - fixture
from tests.unit.rcr.test_relations import TRAIN, VOCAB


def _examples() -> list[RelationExample]:
    return [RelationExample(str(i), q, ((r,),)) for i, (q, r) in enumerate(TRAIN)]


def test_quantised_weights_are_within_half_a_step_of_the_original() -> None:
    torch.manual_seed(0)
    state = {"w": torch.randn(300, 256), "bias": torch.randn(256), "ids": torch.arange(5)}
    packed = eb.quantise(state)
    assert packed["w"]["q"].dtype == torch.int8 and "t" in packed["bias"] and "t" in packed["ids"]
    back = eb.dequantise(packed)
    step = state["w"].abs().amax(dim=1, keepdim=True) / 127
    assert bool(((back["w"] - state["w"]).abs() <= step / 2 + 1e-6).all())
    assert torch.allclose(back["bias"], state["bias"], atol=1e-2) and torch.equal(back["ids"], state["ids"])


@pytest.mark.parametrize("lora_rank", [4, 0])
def test_a_bundle_trained_elsewhere_folds_into_the_original_encoder(private_cache: Path, lora_rank: int) -> None:  # noqa: F811
    train = _examples()
    cfg = EncoderTrainConfig(epochs=2, lr=1e-3 if lora_rank else 1e-4, batch_size=4, hard_negatives=2,
                             random_negatives=4, seed=0, lora_rank=lora_rank, lora_alpha=8)
    bundle, there, here = private_cache / "bundle", private_cache / "there", private_cache / "here"
    eb.write(bundle, train, train[:4], VOCAB, VOCAB, cfg, data={"dataset": "unit"}, part_mib=8)
    man = json.loads((bundle / eb.MANIFEST).read_text())
    assert len(man["parts"]) >= 2 and man["config"]["lora_rank"] == lora_rank  # MiniLM's 23 MB int8 in 8 MiB parts
    moved = private_cache / "moved"  # the first part travels separately
    moved.mkdir()
    shutil.move(str(bundle / "parts" / man["parts"][0]), moved / man["parts"][0])
    with pytest.raises(ConfigError, match="in none of"):
        eb.run(bundle, there, device="cpu", workdir=private_cache / "work0")
    res = eb.run(bundle, there, part_folders=[moved], device="cpu", workdir=private_cache / "work")
    assert res["device"] == "cpu" and len(res["result"]["history"]) == 2
    assert (there / eb.ADAPTERS).is_file() if lora_rank else res["weights_parts"]

    folded = eb.fold(bundle, there, here)
    assert folded.result.best_epoch == res["result"]["best_epoch"] and folded.config.lora_rank == lora_rank
    text = ["what state is chicago in", "who directed the matrix"]
    plain = encoders.embed_texts(text, "minilm", cache=False)
    ours = encoders.embed_texts(text, str(here), cache=False)
    theirs = encoders.embed_texts(text, str(private_cache / "work" / "encoder"), cache=False)  # trained on int8 trip
    assert not np.allclose(ours, plain, atol=1e-3)  # the training moved it
    assert np.allclose(ours, theirs, atol=2e-2)  # and the folded encoder is the one trained there


def test_the_output_of_another_bundle_is_refused(private_cache: Path) -> None:  # noqa: F811
    train = _examples()
    cfg = EncoderTrainConfig(epochs=1, batch_size=6, hard_negatives=0, random_negatives=3, lora_rank=2)
    eb.write(private_cache / "a", train, train[:3], VOCAB, VOCAB, cfg, data={})
    eb.write(private_cache / "b", train, train[:4], VOCAB, VOCAB, cfg, data={})  # another split
    eb.run(private_cache / "a", private_cache / "out", device="cpu")
    with pytest.raises(ConfigError, match="another bundle"):
        eb.fold(private_cache / "b", private_cache / "out", private_cache / "folded")
    with pytest.raises(ConfigError, match="not an encoder bundle"):
        eb.manifest(private_cache / "out")


def test_mpnet_must_come_back_as_adapters(private_cache: Path) -> None:  # noqa: F811
    with pytest.raises(ConfigError, match="--lora-rank"):
        eb.write(private_cache / "m", _examples(), [], VOCAB, VOCAB, EncoderTrainConfig(encoder="mpnet"), data={})
