"""One way for every benchmark to write its results file with the run's provenance.

Each benchmark writes ``bench/results/NAME.json`` as ``{"summary": {metric: number, ...}, ...}``; one file holds one
run. :func:`write_result` adds ``provenance``: the commit (and whether the tree had uncommitted changes), the UTC date,
the exact command line, and the machine (CPUs, load average at the end of the run, Python). Use it instead of
``path.write_text(json.dumps(...))``::

    from bench.record import write_result   # or `from record import write_result` when run as bench/NAME.py
    write_result(args.out, {"summary": summary, "rows": rows})
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def provenance(command: list[str] | None = None) -> dict[str, Any]:
    """Where a result comes from: commit, dirty tree, date, command, machine and its load."""
    argv = list(sys.argv if command is None else command)
    if argv and argv[0].endswith(".py"):
        try:
            argv[0] = str(Path(argv[0]).resolve().relative_to(ROOT))
        except ValueError:
            pass
    try:
        load = list(os.getloadavg())
    except OSError:
        load = []
    return {
        "commit": _git("rev-parse", "--short=12", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": shlex.join(["python", *argv]) if argv else "",
        "machine": {"cpus": os.cpu_count(), "loadavg": [round(x, 2) for x in load],
                    "python": platform.python_version(), "platform": platform.platform(terse=True)},
    }


def write_result(path: Path | str, result: dict[str, Any], *, command: list[str] | None = None,
                 indent: int = 2) -> Path:
    """Write ``result`` (which must hold a ``summary`` dict) to ``path`` with :func:`provenance` added."""
    if not isinstance(result.get("summary"), dict):
        raise ValueError(f"{path}: a results file needs a 'summary' dict")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = {"summary": result["summary"], "provenance": provenance(command),
           **{k: v for k, v in result.items() if k not in ("summary", "provenance")}}
    path.write_text(json.dumps(out, indent=indent, default=str, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
