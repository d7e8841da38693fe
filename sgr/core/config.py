"""Settings, read from flags first, then environment variables, then defaults (pydantic-settings).

Every environment variable sgr reads is read here (the settings classes below, or the small functions that
wrap them); other modules call these and never read ``os.environ`` themselves:

- ``SGR_HOME`` → :func:`sgr_home` (state and caches, default ``~/.sgr``)
- ``SGR_CACHE_DIR`` → :func:`cache_dir` (caches, default ``SGR_HOME/cache``)
- ``SGR_JAVA_DIR`` → :func:`java_dir` (the Java launcher, default ``<repo>/java``)
- ``SGR_SHARED_DATA`` → :func:`shared_data_dir` (benchmark data, default ``<repo>/../shared/data``)
- ``SGR_RELATION_MODEL`` → :func:`relation_model` (trained relation heads that ``model="auto"`` uses)
- ``SGR_MODELS_DIR``, ``SGR_SHIPPED_MODELS`` → :func:`models_dir`, :func:`use_shipped_models` (the trained models
  that ship with sgr under ``<repo>/models``, and whether sgr uses them by default)
- ``SGR_PROFILE`` → :func:`profile_file` (a graph profile file to use instead of the derived one)
- ``SGR_SCR_CHECKPOINT``, ``SGR_SCR_SINGLE_CHECKPOINT`` → :func:`scr_checkpoint`
- ``NEO4J_*`` → :class:`Neo4jSettings`; ``SGR_LLM_*`` and ``OPENAI_API_KEY`` → :class:`LLMSettings`

A value that does not parse is a :class:`~sgr.core.errors.ConfigError` naming the variable (:func:`read_settings`).
Settings are read at each call (not cached), so a changed environment (tests, ``bench/``) takes effect.
``SGR_HOME`` (default ``~/.sgr``) holds everything sgr writes outside a run folder: the embedded
Neo4j store and its pid/log files, the local LLM server's state, caches of embeddings and LLM calls.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TypeVar

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from sgr.core.errors import ConfigError

S = TypeVar("S", bound=BaseSettings)


def read_settings(cls: type[S]) -> S:
    """``cls()`` read from the environment; a bad value is a one-line :class:`ConfigError` naming the variable."""
    try:
        return cls()
    except ValidationError as exc:
        prefix = str(cls.model_config.get("env_prefix") or "")
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err.get("loc") else "?"
        raise ConfigError(f"environment variable {(prefix + field).upper()}: {err.get('msg', 'invalid value')} "
                          f"(got {err.get('input')!r})") from None


class PathSettings(BaseSettings):
    """Where sgr keeps its state and finds its inputs: ``SGR_HOME``, ``SGR_CACHE_DIR``, ``SGR_JAVA_DIR``,
    ``SGR_SHARED_DATA`` (each optional)."""

    model_config = SettingsConfigDict(env_prefix="SGR_", extra="ignore")

    home: Path | None = None
    cache_dir: Path | None = None
    java_dir: Path | None = None
    shared_data: Path | None = None
    models_dir: Path | None = None


class LoadSettings(BaseSettings):
    """Large loads: ``SGR_SORT_MEMORY`` (GNU sort's buffer for the on-disk de-duplication, default 256M),
    ``SGR_IMPORT_HEAP`` / ``SGR_IMPORT_OFF_HEAP`` (neo4j-admin importer heap 1g, off-heap cache 1500m),
    ``SGR_IMPORT_KEEP`` (a folder where the bulk path leaves its import CSV and ``import.json``, to rerun or
    inspect the importer; by default they go to a temporary folder that is removed)."""

    model_config = SettingsConfigDict(env_prefix="SGR_", extra="ignore")

    sort_memory: str = "256M"
    import_heap: str = "1g"
    import_off_heap: str = "1500m"
    import_keep: Path | None = None


class ModelFileSettings(BaseSettings):
    """Trained model files chosen by environment instead of by the newest one on disk:
    ``SGR_RELATION_MODEL``, ``SGR_SCR_CHECKPOINT``, ``SGR_SCR_SINGLE_CHECKPOINT``, and ``SGR_PROFILE`` (the graph
    profile file, :mod:`sgr.graph.profile`)."""

    model_config = SettingsConfigDict(env_prefix="SGR_", extra="ignore")

    relation_model: str | None = None
    profile: Path | None = None
    scr_checkpoint: Path | None = None
    scr_single_checkpoint: Path | None = None
    shipped_models: bool = True


def repo_root() -> Path:
    """The source checkout (sgr is installed editable: ``pip install -e .``)."""
    return Path(__file__).resolve().parents[2]


def private_dir(path: Path) -> Path:
    """``path`` as a folder only its owner can enter (mode 0700), created if missing: the embedded Neo4j's store,
    its password hash and the caches of model calls under it are no other local user's to read."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        st = path.stat()
        if st.st_mode & 0o077 and st.st_uid == os.getuid():
            os.chmod(path, 0o700)
    except OSError:
        pass
    return path


def sgr_home() -> Path:
    """The folder for sgr's state and caches (``SGR_HOME``, default ``~/.sgr``), created if missing, private (0700)."""
    return private_dir((read_settings(PathSettings).home or Path.home() / ".sgr").expanduser())


def cache_dir(name: str) -> Path:
    """A named cache folder under ``SGR_CACHE_DIR`` (default ``SGR_HOME/cache``), created if missing, private."""
    root = read_settings(PathSettings).cache_dir
    return private_dir((root.expanduser() if root else sgr_home() / "cache") / name)


def java_dir() -> Path:
    """The Java launcher's Maven project (``SGR_JAVA_DIR``, default ``<repo>/java``)."""
    path = read_settings(PathSettings).java_dir
    return path.expanduser() if path else repo_root() / "java"


def shared_data_dir() -> Path:
    """The benchmark data folder (``SGR_SHARED_DATA``, default ``<repo>/../shared/data``); it may not exist."""
    path = read_settings(PathSettings).shared_data
    return path.expanduser() if path else repo_root().parent / "shared" / "data"


def models_dir() -> Path:
    """The trained models that ship with sgr (``SGR_MODELS_DIR``, default ``<repo>/models``): one folder per model
    with its weights and ``manifest.json``; set-up materialises them under ``SGR_HOME/models``."""
    path = read_settings(PathSettings).models_dir
    return path.expanduser() if path else repo_root() / "models"


def use_shipped_models() -> bool:
    """``SGR_SHIPPED_MODELS`` (default on): whether the shipped models are the default — the path generator
    ``sgr llm serve`` serves and the relation encoder of ``sgr ask`` / ``sgr eval`` — when nothing trained for the
    loaded graph takes precedence. ``0``: the packaged base model and plain cosine, as before they shipped."""
    return read_settings(ModelFileSettings).shipped_models


def relation_model() -> str | None:
    """``SGR_RELATION_MODEL``: saved relation heads (a path, or ``cosine``) that ``model="auto"`` uses; None when unset."""
    return read_settings(ModelFileSettings).relation_model or None


def profile_file() -> Path | None:
    """``SGR_PROFILE``: a graph profile (JSON, :mod:`sgr.graph.profile`) to use instead of deriving one; None when unset."""
    path = read_settings(ModelFileSettings).profile
    return path.expanduser() if path else None


def scr_checkpoint(single_step: bool = False) -> Path | None:
    """``SGR_SCR_CHECKPOINT`` (or ``SGR_SCR_SINGLE_CHECKPOINT`` when ``single_step``); None when unset."""
    s = read_settings(ModelFileSettings)
    path = s.scr_single_checkpoint if single_step else s.scr_checkpoint
    return path.expanduser() if path else None


def neo4j_password_file() -> Path:
    """Where the embedded Neo4j's password is kept: ``SGR_HOME/neo4j/password`` (mode 0600)."""
    return sgr_home() / "neo4j" / "password"


def read_neo4j_password() -> str | None:
    """The embedded server's stored password, or None when it has not been started with auth yet."""
    path = neo4j_password_file()
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        return None
    return text or None


class Neo4jSettings(BaseSettings):
    """Connection to Neo4j: ``NEO4J_URI``, ``NEO4J_USER``, ``NEO4J_PASSWORD``, ``NEO4J_DATABASE``.

    When ``NEO4J_URI`` is unset, the URI of the embedded server started by ``sgr neo4j start``
    (recorded in ``SGR_HOME/neo4j/server.json``) is used, else ``bolt://127.0.0.1:7687``.
    When ``NEO4J_PASSWORD`` is unset, the password that ``sgr neo4j start`` generated at first start
    (``SGR_HOME/neo4j/password``, mode 0600) is used; see :meth:`resolved_password`.
    """

    model_config = SettingsConfigDict(env_prefix="NEO4J_", extra="ignore")

    uri: str | None = None
    user: str = "neo4j"
    password: str | None = Field(default=None, repr=False)
    database: str = "neo4j"
    query_timeout_s: float = Field(default=30.0, description="timeout of generated (read) queries")
    row_cap: int = Field(default=1000, description="rows kept from a generated query")

    def resolved_uri(self) -> str:
        if self.uri:
            return self.uri
        state = sgr_home() / "neo4j" / "server.json"
        if state.exists():
            try:
                return json.loads(state.read_text())["uri"]
            except (ValueError, KeyError):
                pass
        return "bolt://127.0.0.1:7687"

    def resolved_password(self) -> str:
        """``NEO4J_PASSWORD`` when set, else the embedded server's stored password, else ``""`` (no auth)."""
        if self.password is not None:
            return self.password
        return read_neo4j_password() or ""


class LLMSettings(BaseSettings):
    """The chat model: ``SGR_LLM_BASE_URL``, ``SGR_LLM_MODEL``, ``OPENAI_API_KEY``, ``SGR_LLM_CONSTRAINT``
    (``llamacpp`` | ``openai`` | ``none``; default ``llamacpp`` for the local server, ``none`` for another endpoint),
    ``SGR_LLM_LOGPROBS`` (``0`` when the endpoint gives no token log-probabilities), ``SGR_LLM_CACHE`` (``0``: no
    call cache), ``SGR_LLM_TEMPERATURE``, ``SGR_LLM_TIMEOUT_S``, ``SGR_LLM_MAX_RETRIES``.

    With no base URL, sgr talks to the local llama.cpp server started by ``sgr llm serve``
    (its URL is recorded in ``SGR_HOME/llm/server.json``).
    """

    model_config = SettingsConfigDict(env_prefix="SGR_LLM_", extra="ignore")

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    temperature: float = 0.0
    timeout_s: float = 120.0
    max_retries: int = 2
    cache: bool = True
    constraint: str | None = None
    logprobs: bool = True

    def constraint_dialect(self, local: bool) -> str:
        """How constraints are sent: ``SGR_LLM_CONSTRAINT``, else ``llamacpp`` for the local server, ``none`` otherwise."""
        return (self.constraint or ("llamacpp" if local else "none")).strip().lower()
