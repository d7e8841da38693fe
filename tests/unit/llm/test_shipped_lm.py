"""The path generator that ships with sgr (sgr/llm/shipped.py): exported with its manifest, materialised into the
packaged GGUF (the tuned tensors replaced, SHA-256s checked), and chosen by ``sgr llm serve``'s ``--model auto``
unless a model tuned for the graph takes precedence."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from sgr.core.errors import ConfigError, LLMError
from sgr.llm import server, shipped
from sgr.llm.gguf_export import base_tensor, base_tensors


@pytest.fixture()
def base() -> Path:
    try:
        return server.model_path()
    except LLMError as exc:
        pytest.skip(str(exc))


@pytest.fixture()
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SGR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SGR_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("SGR_SHIPPED_MODELS", "1")
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:9")  # no store: `auto` looks for a no-graph tuned model only
    return tmp_path


def _state(base: Path) -> dict[str, torch.Tensor]:
    down = base_tensor(base, "blk.29.ffn_down.weight")
    norm = base_tensor(base, "blk.29.ffn_norm.weight")
    g = torch.Generator().manual_seed(0)
    return {"model.layers.29.mlp.down_proj.weight": torch.from_numpy(down) + 0.01 * torch.randn(down.shape, generator=g),
            "model.layers.29.post_attention_layernorm.weight": torch.from_numpy(norm) * 1.5}


def test_export_then_materialise_folds_the_weights_into_the_packaged_gguf(base: Path, homes: Path) -> None:
    state = _state(base)
    prov = {"prompt_examples": 0, "decision": {"gamma_min": 0.3}, "validation": {}}
    folder = shipped.export(state, prov, {"validation": {"summary": {"path_accuracy_tuned": 0.5}}}, base=base)
    man = json.loads((folder / "manifest.json").read_text())
    assert set(man["files"]) == {shipped.WEIGHTS} and man["base"]["name"] == base.name and "Apache-2.0" in man["licence"]
    assert shipped.available() and shipped.folder() == homes / "models" / shipped.NAME

    out = shipped.materialise(base)
    assert out == shipped.target(man) and out.is_relative_to(homes / "home")
    got = base_tensor(out, "blk.29.ffn_down.weight")
    want = state["model.layers.29.mlp.down_proj.weight"].half().float().numpy()
    assert np.allclose(got, want, atol=1e-3)  # the shipped fp16 tensor, not the base's Q4_1 one
    assert np.array_equal(base_tensor(out, "blk.3.ffn_down.weight"), base_tensor(base, "blk.3.ffn_down.weight"))
    model_json = json.loads(out.with_suffix(".json").read_text())
    assert model_json["decision"] == {"gamma_min": 0.3} and model_json["prompt_examples"] == 0
    assert model_json["shipped"]["sha256"] == man["files"][shipped.WEIGHTS]["sha256"]
    mtime = out.stat().st_mtime_ns
    assert shipped.materialise(base) == out and out.stat().st_mtime_ns == mtime  # written once

    served = server.resolve_model("auto")
    assert served.kind == "shipped" and served.path == out and server.is_tuned(served.alias)
    assert served.alias.endswith(man["files"][shipped.WEIGHTS]["sha256"][:8]) and served.provenance is not None
    assert server.resolve_model("base").kind == "base"


def test_a_changed_file_or_another_base_model_is_refused(base: Path, homes: Path) -> None:
    folder = shipped.export(_state(base), {}, {}, base=base)
    other = homes / "other.gguf"
    other.write_bytes(base.read_bytes()[:-1] + b"\0")
    with pytest.raises(ConfigError, match="not the base model"):
        shipped.materialise(other)
    weights = folder / shipped.WEIGHTS
    weights.write_bytes(weights.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(ConfigError, match="SHA-256 or size differs"):
        shipped.materialise(base)


def test_a_model_tuned_for_the_graph_takes_precedence_and_the_switch_turns_shipped_off(
        base: Path, homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped.export(_state(base), {}, {}, base=base)
    tuned = homes / "home" / "tune" / "no-graph" / "model.gguf"
    tuned.parent.mkdir(parents=True)
    tuned.write_bytes(b"GGUF")  # resolve_model only locates it
    assert server.resolve_model("auto").kind == "tuned"
    tuned.unlink()
    monkeypatch.setenv("SGR_SHIPPED_MODELS", "0")
    assert server.resolve_model("auto").kind == "base"
    assert server.resolve_model("shipped").kind == "shipped"  # asked for by name, it is served anyway
    monkeypatch.setenv("SGR_MODELS_DIR", str(homes / "nothing"))
    with pytest.raises(LLMError, match="no .*schema-lm"):
        server.resolve_model("shipped")


def test_lora_adapters_are_merged_into_every_decoder_matrix(base: Path, homes: Path) -> None:
    rank, alpha = 2, 4
    g = torch.Generator().manual_seed(1)
    prefix = "model.layers.0.mlp.down_proj"
    names = ["blk.0.ffn_down.weight", "blk.5.ffn_up.weight"]
    down, up = (base_tensors(base, names)[n] for n in names)  # (out, in), transformers' layout
    a = 0.05 * torch.randn(rank, down.shape[1], generator=g)
    b = 0.05 * torch.randn(down.shape[0], rank, generator=g)
    adapters = {f"{prefix}.lora_A.default.weight": a, f"{prefix}.lora_B.default.weight": b}
    with pytest.raises(ConfigError, match="adapter tensors only"):
        shipped.export({**adapters, "model.norm.weight": torch.ones(3)}, {}, {}, base=base,
                       lora={"lora_rank": rank, "lora_alpha": alpha})
    assert not (shipped.folder() / shipped.WEIGHTS).exists()  # refused before anything is written
    man = json.loads((shipped.export(adapters, {}, {}, base=base, lora={"lora_rank": rank, "lora_alpha": alpha})
                      / "manifest.json").read_text())
    assert man["lora"] == {"lora_rank": rank, "lora_alpha": alpha} and "LoRA" in man["kind"]

    got = base_tensors(shipped.materialise(base), names)
    want = down + (alpha / rank) * (b.half().float() @ a.half().float()).numpy()
    assert np.abs(got[names[0]] - want).max() < 0.02 < np.abs(want - down).max()  # Q8_0 of W + (α/r)·B·A, not W
    assert np.abs(got[names[1]] - up).max() < 0.02  # no adapter: the base matrix, as Q8_0
