"""The GPU path of ``sgr llm tune``: LoRA training on every layer, and the tuning bundle that carries the training
step to another machine and back (write here → run there → read and fold in here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sgr.core.errors import ConfigError
from sgr.llm import bundle
from sgr.llm import finetune as ft


class CharTok:
    def __call__(self, text, add_special_tokens=False):  # noqa: ANN001, ANN204
        return {"input_ids": [ord(c) % 120 + 3 for c in text.replace(ft.IM_END, "\x02")]}


def tiny_llama(seed: int = 0):  # noqa: ANN201
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=48, num_hidden_layers=3,
                                         num_attention_heads=4, num_key_value_heads=2)).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


EXAMPLES = [ft.ChatExample(str(i), "sys", f"q{i % 3}", "path: ab" if i % 3 else "path: cd") for i in range(24)]
LORA = ft.TuneConfig(method="lora", lora_rank=4, lora_alpha=8, lora_dropout=0.0, epochs=4, batch_size=6, lr=2e-2,
                     val_fraction=0.25, patience=5, seed=0)


def test_an_unknown_tuning_method_is_refused() -> None:
    with pytest.raises(ConfigError, match="--method must be one of top, lora"):
        ft.TuneConfig(method="full")


def test_lora_training_learns_and_folds_adapters_into_every_layer(tmp_path: Path) -> None:
    import torch

    model = tiny_llama()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    train, val = ft.split_examples(EXAMPLES, LORA)
    result = ft.train(model, CharTok(), train, val, LORA, tmp_path, log=lambda _: None, show_progress=False)
    assert result.steps == 12 and result.best_val_loss < result.base_val_loss
    assert (tmp_path / ft.BEST_FILE["lora"]).exists()
    after = model.state_dict()
    assert set(after) == set(before), "the adapters are merged away: the model has its own tensor names again"
    for i in range(3):
        for proj in ("self_attn.q_proj", "mlp.down_proj"):
            name = f"model.layers.{i}.{proj}.weight"
            assert not torch.equal(after[name], before[name]), name
    assert torch.equal(after["model.embed_tokens.weight"], before["model.embed_tokens.weight"])
    assert set(ft.top_state(model, 0)) == {k for k in after if k.startswith("model.layers.")}


def test_a_bundle_round_trip_gives_the_weights_trained_there(tmp_path: Path, monkeypatch) -> None:
    """write (base cut in parts, some carried separately) → run (another 'machine') → read → apply on a fresh base
    model: the same merged weights as the model trained there; a part that does not join back is refused."""
    import torch

    base = tmp_path / "base.gguf"
    base.write_bytes(bytes(range(256)) * 10_000)  # 2.56 MB, stands for the GGUF
    train, val = ft.split_examples(EXAMPLES, LORA)
    manifest = bundle.write(tmp_path / "b", base, train, val, LORA, eval_n=3, data={"sources": {"x": 24}}, part_mib=1)
    man = json.loads(manifest.read_text())
    assert man["parts"] == ["base.gguf.00", "base.gguf.01", "base.gguf.02"] and man["base_bytes"] == 2_560_000
    assert bundle.read_examples(tmp_path / "b") == (train, val)
    elsewhere = tmp_path / "carried"
    elsewhere.mkdir()
    (tmp_path / "b" / "parts" / "base.gguf.01").rename(elsewhere / "base.gguf.01")

    trained_there = {}

    def load_base(path: Path, device: str = "cpu", threads: int = 1):  # noqa: ANN202
        assert path.read_bytes() == base.read_bytes()
        trained_there["model"] = tiny_llama()
        return trained_there["model"], CharTok()

    monkeypatch.setattr(ft, "load_base", load_base)
    monkeypatch.setattr(ft, "generate", lambda model, tok, exs, max_new_tokens=48: ["path: ab"] * len(exs))
    with pytest.raises(ConfigError, match="base.gguf.01"):
        bundle.run(tmp_path / "b", tmp_path / "out0", device="cpu")
    res = bundle.run(tmp_path / "b", tmp_path / "out", part_folders=[elsewhere], device="cpu")
    assert res["device"] == "cpu" and res["probe_ids"] == [e.id for e in val[:3]] and len(res["replies"]) == 3

    back = bundle.read(tmp_path / "out")
    assert back.result["validation_ids"] == [e.id for e in val]
    merged = bundle.apply(tiny_llama(), bundle.config_of(man), back.state)
    there = trained_there["model"].state_dict()
    for name, tensor in merged.state_dict().items():
        assert torch.allclose(tensor, there[name], atol=2e-3), name  # fp16 on the way back

    bundle.check_base(tmp_path / "b", base)
    with pytest.raises(ConfigError, match="not the base model of the bundle"):
        bundle.check_base(tmp_path / "b", manifest)

    (elsewhere / "base.gguf.01").write_bytes(b"x" * 10)
    with pytest.raises(ConfigError, match="SHA-256"):
        bundle.run(tmp_path / "b", tmp_path / "out2", part_folders=[elsewhere], device="cpu")
