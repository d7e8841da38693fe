"""RCR's fine-tuned encoder (sgr/retrieval/encoder_training.py): the loss by hand, a real MiniLM fine-tune that ranks
its questions' gold relations higher, the saved folder served by the retriever and the embedding helper, resume."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from sgr.core.errors import ConfigError
from sgr.llm import encoders
from sgr.retrieval.encoder_training import CHECKPOINT, EncoderTrainConfig, info_nce_loss, train_encoder
from sgr.retrieval.relations import CosineRelationRetriever, FineTunedRelationRetriever
from sgr.retrieval.supervision import RelationExample
from sgr.retrieval.training import gold_ranks
from tests.unit.rcr.test_relations import TRAIN, VOCAB


@pytest.fixture()
def private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("SGR_CACHE_DIR", str(tmp_path / "cache"))
    encoders._caches.clear()
    yield tmp_path
    encoders._caches.clear()


def test_info_nce_matches_the_equation_by_hand() -> None:
    sim = torch.tensor([[0.9, 0.2, 0.5, 0.1],
                        [0.3, 0.8, 0.7, 0.0],
                        [0.4, 0.4, 0.4, 0.4]])
    gold = torch.tensor([[True, False, False, False],
                         [False, True, True, False],
                         [False, False, False, False]])  # no gold: skipped
    tau = 0.1

    def term(row: int, p: int) -> float:
        negatives = [sim[row, n].item() for n in range(4) if not gold[row, n]]
        num = math.exp(sim[row, p].item() / tau)
        return -math.log(num / (num + sum(math.exp(s / tau) for s in negatives)))

    expected = (term(0, 0) + term(1, 1) + term(1, 2)) / 3  # the second row's two golds are not each other's negatives
    assert info_nce_loss(sim, gold, tau).item() == pytest.approx(expected, rel=1e-5)
    assert info_nce_loss(sim, torch.zeros_like(gold), tau).item() == 0.0


def test_fine_tuning_ranks_the_gold_relations_higher_and_the_folder_serves_them(private_cache: Path) -> None:
    train = [RelationExample(str(i), q, ((r,),)) for i, (q, r) in enumerate(TRAIN)]
    gold = [e.relations for e in train]
    before = gold_ranks(CosineRelationRetriever(VOCAB).scores([e.question for e in train]), VOCAB, gold)
    assert sum(before) > 0, "precondition: plain cosine must miss some gold relation at top-1"

    cfg = EncoderTrainConfig(epochs=3, lr=1e-4, batch_size=4, hard_negatives=3, random_negatives=4, seed=0)
    out = private_cache / "model.encoder"
    seen: list[int] = []
    result = train_encoder(train, train[:4], VOCAB, VOCAB, cfg, out=out, state_dir=private_cache / "state",
                           progress=lambda log: seen.append(log.epoch))
    assert seen == [1, 2, 3] and result.folder == out and (out / encoders.WEIGHTS).is_file()
    assert result.history[-1].loss < result.history[0].loss
    assert result.best_epoch in (1, 2, 3) and result.best_val[50] == 1.0

    tuned = FineTunedRelationRetriever(VOCAB, encoder=str(out))
    after = gold_ranks(tuned.scores([e.question for e in train]), VOCAB, gold)
    assert sum(after) < sum(before)  # the training questions' gold relations moved up
    assert encoders.encoder_key(str(out)).startswith("ft-")  # its vectors are cached under its own weights' hash
    vecs = encoders.embed_texts(["what state is chicago in"], str(out))
    plain = encoders.embed_texts(["what state is chicago in"], "minilm")
    assert vecs.shape == plain.shape and not np.allclose(vecs, plain, atol=1e-3)
    # the shared MiniLM that every other retriever embeds with was not trained along
    assert np.allclose(encoders.sentence_encoder("minilm").encode(["what state is chicago in"],
                                                                  normalize_embeddings=True), plain, atol=1e-5)


def test_training_resumes_from_its_state_and_refuses_other_settings(private_cache: Path) -> None:
    train = [RelationExample(str(i), q, ((r,),)) for i, (q, r) in enumerate(TRAIN)]
    state = private_cache / "state"
    cfg = EncoderTrainConfig(epochs=1, batch_size=6, hard_negatives=0, random_negatives=3, select_k=2)
    first = train_encoder(train, train[:3], VOCAB, VOCAB, cfg, out=private_cache / "a", state_dir=state)
    assert (state / CHECKPOINT).exists() and first.resumed_after == 0 and 2 in first.best_val
    again = train_encoder(train, train[:3], VOCAB, VOCAB, EncoderTrainConfig(**{**cfg.__dict__, "epochs": 2}),
                          out=private_cache / "b", state_dir=state)
    assert again.resumed_after == 1 and [h.epoch for h in again.history] == [1, 2]
    assert again.history[0].loss == first.history[0].loss  # epoch 1 was read back, not trained again
    with pytest.raises(ConfigError, match="other settings"):
        train_encoder(train, train[:3], VOCAB, VOCAB, EncoderTrainConfig(**{**cfg.__dict__, "lr": 1e-3}),
                      out=private_cache / "c", state_dir=state)
    with pytest.raises(ConfigError, match="tau"):
        EncoderTrainConfig(tau=0)
