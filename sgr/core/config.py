"""Settings, read from flags first, then environment variables, then defaults (pydantic-settings).

``SGR_HOME`` (default ``~/.sgr``) holds everything sgr writes outside a run folder: the embedded
Neo4j store and its pid/log files, the local LLM server's state, caches of embeddings and LLM calls.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def sgr_home() -> Path:
    """The folder for sgr's state and caches (``SGR_HOME``, default ``~/.sgr``)."""
    home = Path(os.environ.get("SGR_HOME", Path.home() / ".sgr")).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    return home


def cache_dir(name: str) -> Path:
    """A named cache folder under ``SGR_CACHE_DIR`` (default ``SGR_HOME/cache``)."""
    root = os.environ.get("SGR_CACHE_DIR")
    path = (Path(root).expanduser() if root else sgr_home() / "cache") / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def repo_root() -> Path:
    """The source checkout (sgr is installed editable: ``pip install -e .``)."""
    return Path(__file__).resolve().parents[2]


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
    """The chat model: ``SGR_LLM_BASE_URL``, ``SGR_LLM_MODEL``, ``OPENAI_API_KEY``.

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
