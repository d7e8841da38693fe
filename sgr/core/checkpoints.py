"""The one way sgr reads a PyTorch file (checkpoints, relation heads, encoder states, tuning states, bundle weights).

``torch.load`` unpickles: with ``weights_only=False`` a file can name any Python callable and have it run while it
loads (``os.system`` in a ``__reduce__``). :func:`load_checkpoint` loads with ``weights_only=True``: tensors, and
dicts / lists / tuples / numbers / strings around them, nothing else; every file sgr writes is of that form. A file
that asks for anything more, or is not a PyTorch file at all (``--scr-checkpoint /etc/passwd``), is a one-line
:class:`~sgr.core.errors.ConfigError` naming the file and what it should have been.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

from sgr.core.errors import ConfigError


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0][:200] if lines else type(exc).__name__


def _a(what: str) -> str:
    """``what`` with its article: "an SCR checkpoint", "a relation model"."""
    vowel = what[:1].lower() in "aeiou" or (what.split()[0].isupper() and what[:1] in "AEFHILMNORSX")
    return ("an " if vowel else "a ") + what


#: How a PyTorch file starts: a zip archive (``torch.save`` since 1.6) or a pickle (protocol 2 or later).
_MAGIC = (b"PK\x03\x04", b"\x80")


def load_checkpoint(source: Path | str | bytes | io.BytesIO, *, what: str, map_location: Any = "cpu") -> Any:
    """``torch.load(source, weights_only=True)``; ConfigError for a missing file, one that is not a PyTorch file, or
    one that holds Python objects other than tensors and plain data (refused: loading it could run code).

    ``what`` names the expected file in the message ("SCR checkpoint", "relation model" …); ``source`` is a path or
    the bytes of a file (bundle parts joined in memory).
    """
    import torch

    name = "the file" if isinstance(source, (bytes, io.BytesIO)) else str(source)
    if not isinstance(source, (bytes, io.BytesIO)):
        path = Path(source)
        if not path.exists():
            raise ConfigError(f"{path}: no {what} there")
        if not path.is_file():
            raise ConfigError(f"{path}: not {_a(what)} (a folder, not a file)")
    data = io.BytesIO(source) if isinstance(source, bytes) else source
    if isinstance(data, io.BytesIO):
        head = data.getvalue()[:4]
    else:
        with open(data, "rb") as fh:
            head = fh.read(4)
    if not head.startswith(_MAGIC):
        raise ConfigError(f"{name}: not {_a(what)} (not a PyTorch file)")
    try:
        return torch.load(data, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as exc:
        if "weights only" in str(exc).lower() or "weights_only" in str(exc):
            raise ConfigError(f"{name}: refused as {_a(what)}: it holds Python objects other than tensors and plain "
                              "data, and loading it could run code") from None
        raise ConfigError(f"{name}: not {_a(what)} (not a PyTorch file: {_first_line(exc)})") from None
    except Exception as exc:  # noqa: BLE001 - the unpickler fails in many ways on junk (struct.error, EOFError …)
        raise ConfigError(f"{name}: not {_a(what)} ({_first_line(exc)})") from None


def require_keys(blob: Any, keys: tuple[str, ...], *, source: Path | str, what: str) -> dict[str, Any]:
    """``blob`` when it is a dict holding ``keys``; else ConfigError saying the file is not a ``what``."""
    if not isinstance(blob, dict):
        raise ConfigError(f"{source}: not {_a(what)} (it holds a {type(blob).__name__}, not a dict)")
    missing = [k for k in keys if k not in blob]
    if missing:
        raise ConfigError(f"{source}: not {_a(what)} (no {', '.join(repr(k) for k in missing)} in it)")
    return blob
