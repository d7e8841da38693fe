"""The one on-disk cache of sgr: a SQLite ``key -> bytes`` store, safe across threads and processes.

Used for LLM calls (JSON values), sentence embeddings (float32 vectors) and SCR's subgraphs (``np.savez``
arrays, read back without pickle): each user picks a file under ``cache_dir(...)`` and a table name; values are bytes, with
:meth:`KVCache.get_json`/:meth:`KVCache.put_json` for JSON. WAL mode lets parallel ``sgr eval`` workers
read while one writes.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

_TABLE_CHARS = set("abcdefghijklmnopqrstuvwxyz_0123456789")


def _as_bytes(value: bytes | str) -> bytes:
    """A stored value as bytes (files written before this cache existed hold JSON as TEXT)."""
    return value.encode() if isinstance(value, str) else bytes(value)


class KVCache:
    """``key -> bytes`` in table ``table`` of the SQLite file ``path`` (created on first use)."""

    def __init__(self, path: Path, table: str = "kv") -> None:
        if not table or set(table) - _TABLE_CHARS:
            raise ValueError(f"bad cache table name {table!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.table = table
        self._local = threading.local()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"CREATE TABLE IF NOT EXISTS {self.table} (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> bytes | None:
        row = self._conn().execute(f"SELECT value FROM {self.table} WHERE key = ?", (key,)).fetchone()
        return _as_bytes(row[0]) if row else None

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        conn = self._conn()
        for i in range(0, len(keys), 500):
            chunk = list(keys[i:i + 500])
            marks = ",".join("?" * len(chunk))
            for key, blob in conn.execute(f"SELECT key, value FROM {self.table} WHERE key IN ({marks})", chunk):
                out[key] = _as_bytes(blob)
        return out

    def put(self, key: str, value: bytes) -> None:
        self.put_many([(key, value)])

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        conn = self._conn()
        with conn:
            conn.executemany(f"INSERT OR REPLACE INTO {self.table} (key, value) VALUES (?, ?)", list(items))

    def get_json(self, key: str) -> Any | None:
        raw = self.get(key)
        return json.loads(raw) if raw is not None else None

    def put_json(self, key: str, value: Any) -> None:
        self.put(key, json.dumps(value).encode())

    def __len__(self) -> int:
        return self._conn().execute(f"SELECT count(*) FROM {self.table}").fetchone()[0]
