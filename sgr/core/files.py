"""File helpers shared by every layer: a file's SHA-256, a file cut into parts and joined again, and the command
line of a training bundle's runner.

Parts exist for the machines that take a bounded amount of files per transfer (the GPU machines of the tuning
bundles, :mod:`sgr.llm.bundle` and :mod:`sgr.retrieval.encoder_bundle`): a large file travels as ``NAME.00``,
``NAME.01`` … and is joined on the other side, where the SHA-256 says it arrived whole.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sgr.core.errors import ConfigError

#: what comes back from a GPU machine: files of at most 16 MiB (parts of 15 MiB), 64 MiB in all (60 MiB of weights)
RETURN_PART_BYTES = 15 * 2**20
RETURN_BYTES = 60 * 2**20


def sha256_file(path: Path) -> str:
    """The hex SHA-256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


#: the name of a shipped model's manifest (``models/<name>/manifest.json``)
MANIFEST = "manifest.json"


def file_entry(path: Path) -> dict[str, Any]:
    """What a manifest records of one file: its SHA-256 and size."""
    return {"sha256": sha256_file(path), "bytes": path.stat().st_size}


def read_manifest(folder: Path, *, check: bool = True) -> dict[str, Any]:
    """``folder/manifest.json``; with ``check`` every file it lists must be there with its SHA-256 and size
    (ConfigError naming the first that is not)."""
    path = folder / MANIFEST
    try:
        man = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no manifest (not a shipped model folder)") from None
    except ValueError as exc:
        raise ConfigError(f"{path}: not JSON ({exc})") from None
    if check:
        for name, want in (man.get("files") or {}).items():
            f = folder / name
            if not f.is_file():
                raise ConfigError(f"{f}: listed in {path.name} but missing (a partial checkout? `git lfs` is not "
                                  "used: the file is in git)")
            got = file_entry(f)
            if got != {"sha256": want.get("sha256"), "bytes": want.get("bytes")}:
                raise ConfigError(f"{f}: SHA-256 or size differs from {path.name} (changed or truncated); "
                                  "restore it with `git checkout -- models/`")
    return man


def cut_parts(data: bytes | Path, out: Path, part_bytes: int) -> list[str]:
    """Write ``data`` (bytes or a file) as ``out.00``, ``out.01`` … of at most ``part_bytes``; returns the names."""
    names = []
    src = data.open("rb") if isinstance(data, Path) else None
    try:
        i, pos = 0, 0
        while True:
            chunk = src.read(part_bytes) if src else data[pos:pos + part_bytes]
            pos += len(chunk)
            if not chunk and i:
                break
            name = f"{out.name}.{i:02d}"
            (out.parent / name).write_bytes(chunk)
            names.append(name)
            i += 1
            if len(chunk) < part_bytes:
                break
    finally:
        if src:
            src.close()
    return names


def _part(folders: Sequence[Path], name: str) -> Path:
    """The part ``name`` in the first of ``folders`` that holds it; ConfigError when none does."""
    src = next((d / name for d in folders if (d / name).is_file()), None)
    if src is None:
        raise ConfigError(f"part {name} is in none of {', '.join(map(str, folders))}")
    return src


def join_parts(folders: Sequence[Path], names: Sequence[str], out: Path) -> Path:
    """Concatenate the parts ``names``, each found in the first of ``folders`` that holds it, into ``out``."""
    with out.open("wb") as dst:
        for name in names:
            dst.write(_part(folders, name).read_bytes())
    return out


def read_parts(folders: Sequence[Path], names: Sequence[str]) -> bytes:
    """The parts ``names`` concatenated in memory (weights that came back small: under :data:`RETURN_BYTES`)."""
    return b"".join(_part(folders, name).read_bytes() for name in names)


def bundle_parser(prog: str, description: str, weights: str) -> argparse.ArgumentParser:
    """The command line of a training bundle's runner (``python -m sgr.llm.bundle``, ``python -m
    sgr.retrieval.encoder_bundle``): ``BUNDLE OUT [--parts-from DIR …] [--device …] [--workdir DIR]``;
    ``weights`` names what the parts hold."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("bundle", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--parts-from", type=Path, action="append", default=[],
                   help=f"another folder holding parts of the {weights} (parts that travelled separately)")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--workdir", type=Path, default=None, help=f"joined {weights} and checkpoints (default: OUT)")
    return p


def bundle_result(returned: Path, bundle_id: str | None, runner: str) -> dict[str, Any]:
    """``returned/result.json`` of a bundle run (``python -m RUNNER``), refused unless it was trained from the bundle
    whose id is ``bundle_id`` (``None``: the bundle has no id — a tuning bundle checks its base model instead)."""
    path = returned / "result.json"
    if not path.is_file():
        raise ConfigError(f"{returned}: no result.json (not the output of `python -m {runner}`)")
    res = json.loads(path.read_text())
    if bundle_id is not None and res.get("bundle") != bundle_id:
        raise ConfigError(f"{returned}: trained from another bundle ({res.get('bundle')}, this one is {bundle_id})")
    return res
