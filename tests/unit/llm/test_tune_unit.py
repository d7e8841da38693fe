"""sgr llm tune without training the real model: training data, the test-overlap check, graph paths in Neo4j,
the shared-prefix layer runner (against a full forward pass of a small random llama), the GGUF export layout
(against the packaged file) and which weights ``--model base|tuned|PATH`` serves."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sgr.core.errors import ConfigError, InputError, LLMError
from sgr.datasets import metaqa_relation_path
from sgr.llm import finetune as ft
from sgr.llm import gguf_export as gx
from sgr.methods.sgr import tuning
from sgr.methods.sgr.prompts import SCHEMA_SYSTEM, parse_schema_reply, schema_user


# -- training data ------------------------------------------------------------------------------
def test_clean_paths_drops_noise_and_duplicates() -> None:
    paths = [["people.person.gender", "people.person.gender"], ["a.b.c"], ["a.b.c"], ["d.e.f", "g.h.i"], ["x.y.z"]]
    assert tuning.clean_paths(paths, 2) == [["a.b.c"], ["d.e.f", "g.h.i"]]


def test_webqsp_examples_are_schema_prompts_and_targets(tmp_path: Path) -> None:
    f = tmp_path / "train.jsonl"
    f.write_text(json.dumps({"id": "q1", "question": "what currency does jamaica use",
                             "ground_paths": [["people.person.gender"], ["location.country.currency_used"],
                                              ["location.location.containedby", "location.country.currency_used"]]})
                 + "\n" + json.dumps({"id": "q2", "question": "who?", "ground_paths": [["people.person.gender"]]}) + "\n")
    (ex,) = tuning.webqsp_train_examples(f)  # q2 has only a noise path: skipped
    assert ex.system == SCHEMA_SYSTEM and ex.user == schema_user("what currency does jamaica use", [])
    paths, constraints = parse_schema_reply(ex.target)
    assert paths[0] == ("location.country.currency_used",) and len(paths) == 2 and constraints == []
    f.write_text('{"id": "q3"}\n')
    with pytest.raises(InputError, match=r"train.jsonl:1"):
        tuning.webqsp_train_examples(f)


def test_webqsp_targets_put_the_path_that_says_what_is_asked_first(tmp_path: Path) -> None:
    detour = ["people.person.nationality", "location.location.containedby"]  # frequent in RoG's shortest paths
    asked = ["education.education.student", "education.education.institution"]
    f = tmp_path / "train.jsonl"
    f.write_text(json.dumps({"id": "q1", "question": "what university did gordon brown attend",
                             "ground_paths": [detour, asked]}) + "\n")
    (ex,) = tuning.webqsp_train_examples(f)
    assert parse_schema_reply(ex.target)[0] == [tuple(asked), tuple(detour)]
    assert tuning.rank_paths([["a"], ["b"], ["c"]], [0.1, 0.3, 0.1]) == [["b"], ["a"], ["c"]]  # ties: file order


def test_metaqa_examples_follow_the_qtype_paths() -> None:
    exs = tuning.metaqa_dev_examples(per_hop=4, seed=1)
    assert len(exs) == 12 and len({e.id for e in exs}) == 12
    for e in exs:
        hop = int(e.id[0])
        (path,), _ = parse_schema_reply(e.target)
        assert len(path) == hop and "[" not in e.user and "Topic: (none)" not in e.user
    again = tuning.metaqa_dev_examples(per_hop=4, seed=1)
    assert [e.id for e in again] == [e.id for e in exs]
    assert [r for r, _ in metaqa_relation_path("actor_to_movie_to_director")] == ["starred_actors", "directed_by"]


def test_worked_examples_are_the_nearest_other_training_questions_in_sgrs_prompt_form() -> None:
    exs = tuning.metaqa_dev_examples(per_hop=3, seed=2)
    shown = tuning.add_worked_examples(exs, 1)
    assert [e.id for e in shown] == [e.id for e in exs] and all(len(e.shots) == 1 for e in shown)
    same = 0
    for e in shown:
        ((user, reply),) = e.shots
        assert user.startswith("Question: ") and user.splitlines()[0] != e.user.splitlines()[0]  # never itself
        (path,), _ = parse_schema_reply(reply)
        same += path == parse_schema_reply(e.target)[0][0]
    assert same >= len(shown) - 1  # templated MetaQA: the nearest other question asks along the same path
    text = ft.user_text(shown[0].user, shown[0].shots)
    assert text.count("<|im_start|>user") == 2 and text.index(shown[0].shots[0][1]) < text.index(shown[0].user)
    assert text.endswith("<|im_start|>assistant\n") and ft.user_text("u") == "<|im_start|>user\nu<|im_end|>\n<|im_start|>assistant\n"
    assert tuning.add_worked_examples(exs, 0) == exs


def test_a_test_question_never_reaches_training(tmp_path: Path) -> None:
    train = tuning.webqsp_train_examples()
    victim = tuning.question_of(train[10])
    test_file = tmp_path / "my_test.jsonl"
    test_file.write_text(json.dumps({"id": "t1", "question": victim.upper() + " ?", "answers": ["x"],
                                     "topic_entities": ["y"]}) + "\n")
    data = tuning.build(metaqa_per_hop=0, test_files=[test_file])
    assert data.overlap_removed == {"webqsp_train": 1} and data.test_questions == 1
    assert victim not in {tuning.question_of(e) for e in data.examples}
    real = tuning.build(metaqa_per_hop=50)  # the real test sets: WebQSP slice + MetaQA test
    tests = {tuning.question_key(q.text) for q in tuning.read_test_questions(tuning.default_test_files())}
    assert real.test_questions == len(tuning.read_test_questions(tuning.default_test_files())) > 40_000
    assert not [e for e in real.examples if tuning.question_key(tuning.question_of(e)) in tests]
    assert real.overlap_removed["webqsp_train"] > 0  # WebQSP train repeats a few test questions verbatim


def test_path_accuracy_counts_first_paths() -> None:
    exs = [tuning.example(str(i), "q", ["t"], [["a", "b"], ["c"]]) for i in range(4)]
    replies = ["path: a > b", "path: c\npath: a > b", "path: x", "nothing"]
    acc = tuning.path_accuracy(exs, replies)
    assert acc == {"exact": 0.25, "any": 0.5, "parsed": 0.75, "n": 4}


@pytest.mark.neo4j
def test_split_is_seeded_disjoint_and_bounded() -> None:
    exs = [ft.ChatExample(str(i), "s", f"u{i}", "t") for i in range(50)]
    cfg = ft.TuneConfig(val_fraction=0.2, max_val=7, seed=3)
    train, val = ft.split_examples(exs, cfg)
    assert len(val) == 7 and len(train) == 43 and not {e.id for e in train} & {e.id for e in val}
    assert ft.split_examples(exs, cfg) == (train, val)
    assert ft.split_examples(exs, ft.TuneConfig(seed=4))[1] != val
    with pytest.raises(ConfigError):
        ft.split_examples(exs[:1], cfg)
    with pytest.raises(ConfigError, match="auto, cpu or cuda"):
        ft.resolve_device("tpu")


def test_repeated_examples_are_trained_on_that_often_and_never_validated() -> None:
    exs = [ft.ChatExample(str(i), "s", f"u{i}", "t") for i in range(50)]
    data = tuning.TuneData(examples=exs, repeats={str(i): 3 for i in range(10)})
    cfg = ft.TuneConfig(val_fraction=0.2, max_val=7, seed=3)
    train, val = tuning.split_data(data, cfg)
    once, _ = ft.split_examples(exs, cfg)
    repeated = [e for e in once if int(e.id) < 10]
    assert repeated and len(train) == len(once) + 2 * len(repeated)
    assert all(sum(t.id == e.id for t in train) == 3 for e in repeated)
    assert not {e.id for e in train} & {e.id for e in val}
    with pytest.raises(ConfigError, match="cwq_repeat"):
        tuning.build(webqsp=False, metaqa_per_hop=0, test_files=[], cwq_repeat=0)


def test_cached_lower_layers_plus_top_layers_equal_a_full_forward_pass() -> None:
    """The shared-prefix cache and target-only loss are exact: same loss as the whole model on whole sequences."""
    import torch
    import torch.nn.functional as F
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=96, num_hidden_layers=5,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    model = LlamaForCausalLM(cfg).eval()
    prefix = [5, 6, 7, 8, 9, 10]
    enc = [ft.Encoded("a", [11, 12, 13], [20, 21, 22, 2]), ft.Encoded("b", [14, 15, 16, 17, 18], [23, 2])]
    total, n = 0.0, 0
    with torch.no_grad():
        for e in enc:
            logits = model(torch.tensor([prefix + e.prompt + e.target])).logits[0]
            start = len(prefix) + len(e.prompt) - 1
            total += float(F.cross_entropy(logits[start:start + len(e.target)], torch.tensor(e.target), reduction="sum"))
            n += len(e.target)
        for split in (0, 3, 5):
            ph, states = ft.cache_lower(model, prefix, enc, split)
            loss, count = ft.batch_loss(model, model.model.layers[split:], ph, list(zip(states, enc)), len(prefix))
            assert count == n
            assert float(loss) == pytest.approx(total / n, rel=2e-3)


def test_examples_must_share_one_system_prompt() -> None:
    class Tok:
        def __call__(self, text, add_special_tokens=False):  # noqa: ANN001, ANN204
            return {"input_ids": [ord(c) for c in text]}

    with pytest.raises(ConfigError, match="one system prompt"):
        ft.encode(Tok(), [ft.ChatExample("1", "a", "u", "t"), ft.ChatExample("2", "b", "u", "t")], 10)


# -- export ---------------------------------------------------------------------------------------
def _reverse_permute(w: np.ndarray, n_head: int) -> np.ndarray:  # what transformers' GGUF loader does
    dim = w.shape[0] // n_head // 2
    return w.reshape(n_head, dim, 2, *w.shape[1:]).swapaxes(2, 1).reshape(w.shape)


def test_permute_inverts_the_loaders_reverse_permute() -> None:
    w = np.arange(24 * 5, dtype=np.float32).reshape(24, 5)
    assert np.array_equal(gx.permute(_reverse_permute(w, 3), 3), w)
    assert np.array_equal(gx.permute(_reverse_permute(w, 2), 6, 2), w)
    assert gx.gguf_name("model.layers.7.mlp.down_proj.weight") == "blk.7.ffn_down.weight"
    with pytest.raises(LLMError, match="cannot map"):
        gx.gguf_name("lm_head.weight")


def test_merged_gguf_replaces_only_the_tuned_tensors(tmp_path: Path) -> None:
    import gguf
    import torch

    from sgr.llm.server import model_path

    base = model_path()
    q = gx.base_tensor(base, "blk.29.attn_q.weight")
    norm = gx.base_tensor(base, "blk.29.ffn_norm.weight")
    state = {"model.layers.29.self_attn.q_proj.weight": torch.tensor(_reverse_permute(q, 9) + 0.5),
             "model.layers.29.post_attention_layernorm.weight": torch.tensor(norm * 2)}
    out = gx.write_merged(base, tmp_path / "m.gguf", state, metadata={"sgr.graph_version": "v1"})
    reader = gguf.GGUFReader(out)
    assert str(reader.fields["sgr.graph_version"].contents()) == "v1"
    got = {t.name: t for t in reader.tensors}
    assert got["blk.29.attn_q.weight"].tensor_type == gguf.GGMLQuantizationType.F16
    assert np.allclose(gx.base_tensor(out, "blk.29.attn_q.weight"), q + 0.5, atol=2e-3)
    assert np.allclose(gx.base_tensor(out, "blk.29.ffn_norm.weight"), norm * 2)
    orig = {t.name: t for t in gguf.GGUFReader(base).tensors}
    assert np.array_equal(np.asarray(got["blk.28.attn_q.weight"].data), np.asarray(orig["blk.28.attn_q.weight"].data))
    assert len(got) == len(orig)
    with pytest.raises(LLMError, match="no tensor"):
        gx.write_merged(base, tmp_path / "x.gguf", {"model.layers.99.mlp.up_proj.weight": torch.zeros(2, 2)})


# -- which weights are served ---------------------------------------------------------------------------
def test_model_option_resolves_base_tuned_and_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from sgr.llm import server

    monkeypatch.setenv("SGR_HOME", str(tmp_path))
    assert server.resolve_model("base").path == server.model_path()
    with pytest.raises(LLMError, match="sgr llm tune"):
        server.tuned_model_path("v1")
    with pytest.raises(LLMError, match="no such file"):
        server.resolve_model(str(tmp_path / "none.gguf"))
    (tmp_path / "w.bin").write_text("x")
    with pytest.raises(LLMError, match="not a .gguf"):
        server.resolve_model(str(tmp_path / "w.bin"))
    folder = tmp_path / "tune" / "no-graph"
    folder.mkdir(parents=True)
    (folder / "model.gguf").write_bytes(b"GGUF")
    assert server.tuned_model_path("v1") == folder / "model.gguf"  # file-data model: valid for any graph
    (tmp_path / "tune" / "v1").mkdir()
    (tmp_path / "tune" / "v1" / "model.gguf").write_bytes(b"GGUF")
    (tmp_path / "tune" / "v1" / "model.json").write_text(json.dumps({"graph_version": "v1", "steps": 3}))
    assert server.tuned_model_path("v1") == tmp_path / "tune" / "v1" / "model.gguf"
    monkeypatch.setattr(server, "_store_version", lambda: "v1")
    served = server.resolve_model("tuned")
    assert served.kind == "tuned" and served.provenance == tmp_path / "tune" / "v1" / "model.json"
    assert served.alias != server.MODEL_ALIAS and served.alias.startswith(server.MODEL_ALIAS + "-tuned-")
    info = server.LLMServerInfo(pid=1, port=1, base_url="u", model=served.alias, model_path=str(served.path),
                                log="l", started_at=0.0, kind="tuned", provenance=str(served.provenance))
    assert "graph version v1, 3 steps" in server.describe(info)


def test_start_refuses_to_swap_the_weights_of_a_running_server(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    import os

    from sgr.llm import server

    monkeypatch.setenv("SGR_HOME", str(tmp_path))
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF")
    running = {"pid": os.getpid(), "port": 1, "base_url": "http://127.0.0.1:1/v1", "model": "m",
               "model_path": str(other), "log": "l", "started_at": 0.0, "kind": "path"}
    server.state_file().write_text(json.dumps(running))
    with pytest.raises(LLMError, match="already serves .*sgr llm stop"):
        server.start(model="base")
    assert server.start(model=str(other)).model_path == str(other)


def test_train_learns_checkpoints_and_resumes_with_more_epochs(tmp_path: Path) -> None:
    """The trainer on a small random llama with a character tokenizer: validation loss falls, the run resumes
    from its checkpoint (frozen-layer cache reused) when asked for more epochs, and only the top layers change."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    class CharTok:
        def __call__(self, text, add_special_tokens=False):  # noqa: ANN001, ANN204
            return {"input_ids": [ord(c) % 120 + 3 for c in text.replace(ft.IM_END, "\x02")]}

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=48, num_hidden_layers=4,
                                         num_attention_heads=4, num_key_value_heads=2)).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    lower_before = model.model.layers[0].mlp.up_proj.weight.clone()
    exs = [ft.ChatExample(str(i), "sys", f"q{i % 3}", "path: ab" if i % 3 else "path: cd") for i in range(24)]
    cfg = ft.TuneConfig(top_layers=1, epochs=2, batch_size=6, lr=1e-2, val_fraction=0.25, patience=5, seed=0)
    train, val = ft.split_examples(exs, cfg)
    logs: list[str] = []
    first = ft.train(model, CharTok(), train, val, cfg, tmp_path, log=logs.append, show_progress=False)
    assert first.epochs_run == 2 and first.steps == 6 and first.best_val_loss < first.base_val_loss
    assert (tmp_path / "checkpoint.pt").exists() and (tmp_path / "top_layers.pt").exists()
    assert torch.equal(model.model.layers[0].mlp.up_proj.weight, lower_before)
    more = ft.train(model, CharTok(), train, val, ft.TuneConfig(**{**cfg.__dict__, "epochs": 3}), tmp_path,
                    log=logs.append, show_progress=False)
    assert any("resumed at epoch 3" in m for m in logs) and any("cache reused" in m for m in logs)
    assert more.steps == 9 and more.epochs_run == 3 and more.best_val_loss <= first.best_val_loss
