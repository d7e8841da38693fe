"""sgr.llm.encoders: packaged MiniLM / MPNet folders and the cached sentence-embedding helper."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sgr.llm import encoders
from sgr.core.errors import ConfigError


@pytest.fixture()
def private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("SGR_CACHE_DIR", str(tmp_path))
    encoders._caches.clear()
    yield tmp_path
    encoders._caches.clear()


def test_minilm_embeddings_are_normalised_384d_and_cached(private_cache: Path) -> None:
    texts = ["location country languages spoken", "what does jamaican people speak?", "film film directed by"]
    vecs = encoders.embed_texts(texts, "minilm")
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    sims = vecs[1] @ vecs.T
    assert sims[0] > sims[2]  # the language relation is closer to the language question than the film relation
    assert (private_cache / "embeddings" / "minilm.sqlite").exists()

    calls: list[int] = []
    model = encoders.sentence_encoder("minilm")
    original = model.encode

    def counting_encode(batch, **kw):  # noqa: ANN001, ANN003
        calls.append(len(batch))
        return original(batch, **kw)

    model.encode = counting_encode  # type: ignore[method-assign]
    try:
        again = encoders.embed_texts(texts + ["a new text"], "minilm")
    finally:
        model.encode = original  # type: ignore[method-assign]
    assert calls == [1]  # only the new text was encoded
    assert np.allclose(again[:3], vecs, atol=1e-6)


def test_empty_and_unknown() -> None:
    assert encoders.embed_texts([], "minilm").shape == (0, 384)
    with pytest.raises(ConfigError, match="unknown encoder"):
        encoders.encoder_path("bert-base-uncased")


@pytest.mark.slow
def test_mpnet_is_assembled_once_and_loads_as_768d_mpnet() -> None:
    from transformers import AutoConfig

    path = encoders.encoder_path("mpnet")
    assert (path / "model.safetensors").stat().st_size > 400_000_000
    assert encoders.encoder_path("mpnet") == path  # second call: no re-assembly
    cfg = AutoConfig.from_pretrained(str(path))
    assert cfg.model_type == "mpnet" and cfg.hidden_size == 768
    vecs = encoders.embed_texts(["who directed the godfather?", "film film directed by"], "mpnet", cache=False)
    assert vecs.shape == (2, 768)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_the_embedding_cache_follows_the_configured_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A cache folder configured after a first embedding is the one written (not the first one's, which may be gone)."""
    for sub in ("a", "b"):
        monkeypatch.setenv("SGR_CACHE_DIR", str(tmp_path / sub))
        encoders.embed_texts(["where was the composer born"], "minilm")
        assert (tmp_path / sub / "embeddings" / "minilm.sqlite").is_file()
