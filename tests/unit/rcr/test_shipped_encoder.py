"""The relation encoder that ships with sgr (sgr/retrieval/shipped.py): LoRA adapters exported with their manifest,
folded into the packaged MiniLM on materialisation (SHA-256s checked), and the default of ``load_retriever("auto")``
when nothing was trained for the graph."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from sgr.core.errors import ConfigError
from sgr.llm import encoders
from sgr.retrieval import relations, shipped
from sgr.retrieval.encoder_training import EncoderTrainConfig, adapter_state, with_lora
from sgr.retrieval.training import encoder_folder, read_meta
from tests.unit.rcr.test_encoder_training import private_cache  # noqa: F401 - fixture

CFG = EncoderTrainConfig(lora_rank=4, lora_alpha=8, epochs=1)


def _adapters() -> dict[str, torch.Tensor]:
    """Rank-4 adapters on every linear layer of MiniLM, B non-zero (a trained update, not peft's zero start)."""
    st = encoders.fresh_sentence_encoder("minilm")
    peft = with_lora(st[0].auto_model, CFG.lora_rank, CFG.lora_alpha)
    g = torch.Generator().manual_seed(0)
    return {k: (0.05 * torch.randn(v.shape, generator=g)) for k, v in adapter_state(peft).items()}


@pytest.fixture()
def homes(private_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: F811
    monkeypatch.setenv("SGR_HOME", str(private_cache / "home"))
    monkeypatch.setenv("SGR_MODELS_DIR", str(private_cache / "models"))
    monkeypatch.setenv("SGR_SHIPPED_MODELS", "1")
    monkeypatch.delenv("SGR_RELATION_MODEL", raising=False)
    return private_cache


def test_exported_adapters_materialise_into_an_encoder_that_differs_from_the_packaged_one(homes: Path) -> None:
    folder = shipped.export(_adapters(), CFG, {"validation": {"summary": {"rra@50": 0.9}}})
    man = json.loads((folder / "manifest.json").read_text())
    assert set(man["files"]) == {shipped.ADAPTERS} and man["config"]["lora_rank"] == 4
    assert man["files"][shipped.ADAPTERS]["bytes"] < 1_000_000  # adapters, not the encoder
    model = shipped.materialise()
    assert model == shipped.target(man) and read_meta(model)["kind"] == "encoder"
    assert read_meta(model)["shipped"]["sha256"] == man["files"][shipped.ADAPTERS]["sha256"]
    text = ["what state is chicago in", "location location containedby"]
    plain = encoders.embed_texts(text, "minilm", cache=False)
    ours = encoders.embed_texts(text, str(encoder_folder(model)), cache=False)
    assert not np.allclose(plain, ours, atol=1e-3)
    assert relations.default_relation_model("some-graph") == model  # nothing trained for the graph: the shipped one


def test_what_takes_precedence_over_the_shipped_encoder(homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped.export(_adapters(), CFG, {})
    from sgr.retrieval.training import models_dir

    trained = models_dir() / "webqsp-encoder-v1.pt"
    trained.write_bytes(b"")
    assert relations.default_relation_model("v1") == trained  # trained for this graph version
    monkeypatch.setenv("SGR_RELATION_MODEL", "cosine")
    assert relations.default_relation_model("v2") == "cosine"
    monkeypatch.delenv("SGR_RELATION_MODEL")
    monkeypatch.setenv("SGR_SHIPPED_MODELS", "0")
    assert relations.default_relation_model("v2") is None


def test_a_changed_adapter_file_is_refused(homes: Path) -> None:
    folder = shipped.export(_adapters(), CFG, {})
    f = folder / shipped.ADAPTERS
    f.write_bytes(f.read_bytes()[:-4] + b"\1\2\3\4")
    with pytest.raises(ConfigError, match="SHA-256 or size differs"):
        shipped.materialise()
    with pytest.raises(ConfigError, match="LoRA adapters"):
        shipped.export(_adapters(), EncoderTrainConfig(lora_rank=0), {})
