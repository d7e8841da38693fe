"""One way for every benchmark to write its results file with the run's provenance.

Each benchmark writes ``bench/results/NAME.json`` as ``{"summary": {metric: number, ...}, ...}``; one file holds one
run. :func:`write_result` adds ``provenance``: the commit (and whether the tree had uncommitted changes), the UTC date,
the exact command line, and the machine (CPUs, load average at the end of the run, Python). Use it instead of
``path.write_text(json.dumps(...))``::

    from bench.record import write_result   # or `from record import write_result` when run as bench/NAME.py
    write_result(args.out, {"summary": summary, "rows": rows})

A benchmark that adds to its results file across invocations (a second server's labels, a method added later) reads
it with :func:`previous_result`, which returns it only when it was written at the same commit — otherwise it is
another run, and the script stops and asks for ``--fresh`` or another ``--out`` — and passes it back as
``write_result(..., continues=previous)``, which keeps each earlier invocation's provenance under
``provenance.earlier``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Callable
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


def previous_result(path: Path | str, *, fresh: bool = False) -> dict[str, Any]:
    """The results file at ``path`` when this run may add to it, else ``{}``.

    ``{}`` when the file does not exist or ``fresh`` is set. A file written at the current commit (its
    ``provenance.commit``) is the same run, continued, and is returned. Any other file — another commit, or no
    provenance at all — holds another run: one file holds one run, so this exits with a message that names
    ``--fresh`` (start this file afresh) and ``--out`` (write somewhere else).
    """
    path = Path(path)
    if fresh or not path.exists():
        return {}
    previous = json.loads(path.read_text(encoding="utf-8"))
    written_at = (previous.get("provenance") or {}).get("commit")
    now = _git("rev-parse", "--short=12", "HEAD")
    if written_at and now and written_at == now:
        return previous
    when = f"at commit {written_at}" if written_at else "without provenance (before bench/record.py)"
    raise SystemExit(f"{path} holds a run written {when}; this is commit {now or '?'}. One file holds one run: pass "
                     "--fresh to start it afresh, or --out NEW.json to write this run elsewhere.")


def write_result(path: Path | str, result: dict[str, Any], *, command: list[str] | None = None,
                 indent: int = 2, continues: dict[str, Any] | None = None) -> Path:
    """Write ``result`` (which must hold a ``summary`` dict) to ``path`` with :func:`provenance` added.

    ``continues``: the earlier state of the same run (from :func:`previous_result`); its invocations' provenance is
    kept, oldest first, under ``provenance.earlier``.
    """
    if not isinstance(result.get("summary"), dict):
        raise ValueError(f"{path}: a results file needs a 'summary' dict")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    prov = provenance(command)
    before = (continues or {}).get("provenance")
    if before:
        prov["earlier"] = [*before.get("earlier", []), {k: v for k, v in before.items() if k != "earlier"}]
    out = {"summary": result["summary"], "provenance": prov,
           **{k: v for k, v in result.items() if k not in ("summary", "provenance")}}
    path.write_text(json.dumps(out, indent=indent, default=str, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def finished_config() -> dict[str, str]:
    """The ``finished_at`` and ``machine`` lines a benchmark's ``config`` carries (UTC time, architecture, CPUs,
    Python)."""
    return {"finished_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"}


def write_report(path: Path | str, result: dict[str, Any], markdown: Callable[[dict[str, Any]], str],
                 continues: dict[str, Any] | None = None) -> str:
    """:func:`write_result`, then ``markdown(result)`` written beside it (``NAME.md``) and printed; returns it."""
    write_result(path, result, continues=continues)
    text = markdown(result)
    Path(path).with_suffix(".md").write_text(text)
    print(text)
    return text


def served_weights() -> str:
    """Which weights the configured model is (the shipped path generator, a tuned model, the base one …)."""
    from sgr.core.errors import LLMError
    from sgr.llm.client import shared_llm
    from sgr.llm.server import describe_model

    try:
        return describe_model(shared_llm().name)
    except LLMError:
        return os.environ.get("SGR_LLM_MODEL", "local default (unreachable)")
