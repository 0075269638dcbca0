"""`SqliteStore`: the token store in one SQLite file, the embedded default."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread

from oauth.errors import StoreError, StoreUnavailableError
from oauth.sqlite_file import DatabaseGone, SqliteFile, outage, transaction
from oauth.store import Clock, RecordKind

__all__ = ["SqliteStore"]

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS oauth_records (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    expires_at REAL NOT NULL,
    claimed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS oauth_records_expiry ON oauth_records (expires_at);
"""
_REPLACE = "INSERT OR REPLACE INTO oauth_records (kind, key, value, expires_at, claimed) VALUES (?, ?, ?, ?, 0)"
_PURGE_EVERY = 60.0


class SqliteStore:
    """A `TokenStore` in a SQLite file (created on first use; `:memory:` for a private in-memory store).

    WAL journaling lets several processes on one host share the file; `claim` is one conditional UPDATE, so
    it is atomic across them. Calls run in a worker thread, one at a time per store, so the event loop never
    waits on the disk. Expired rows are purged at most once a minute, on writes. A new file is readable by
    its owner only (0600; SQLite gives its -wal and -shm files the same mode), in folders it creates 0700.
    """

    def __init__(self, path: str | Path, *, clock: Clock | None = None) -> None:
        self.path = str(path)
        self._clock = clock or time.time
        self._lock = threading.Lock()
        self._file = SqliteFile(self.path, _SCHEMA, what="SQLite token store")
        self._closed = False
        self._purged_at = 0.0

    async def _run(self, sql: str, *params: Any) -> int:
        """Run a statement that writes; the number of rows it changed."""
        return await self._in_thread(lambda db: db.execute(sql, params).rowcount)

    async def _first(self, sql: str, *params: Any) -> Any:
        """The first row of a query, or None."""
        return await self._in_thread(lambda db: db.execute(sql, params).fetchone())

    async def _one(self, sql: str, *params: Any) -> Any:
        """The first row of a statement that writes, read in the same step and its own immediate transaction.

        A statement with RETURNING holds the write lock until its rows are read, so they must not wait for the
        event loop; and one that reads before it writes (an upsert) must take the write lock first, or another
        process's commit in between makes it fail at once ("database is locked") instead of waiting its turn.
        """

        def work(db: sqlite3.Connection) -> Any:
            with transaction(db):
                return db.execute(sql, params).fetchone()

        return await self._in_thread(work)

    async def _in_thread(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        def run() -> _T:
            with self._lock:
                if self._closed:
                    raise StoreError(f"the SQLite token store {self.path!r} is closed; the server has stopped")
                try:
                    return work(self._file.connection())
                except DatabaseGone as error:
                    raise StoreUnavailableError(str(error), unreachable=True) from error
                except sqlite3.Error as error:
                    if outage(error):
                        raise StoreUnavailableError(
                            f"the SQLite token store {self.path} failed: {error}", unreachable=False
                        ) from error
                    raise StoreError(f"the SQLite token store {self.path!r} failed: {error}") from error

        return await anyio.to_thread.run_sync(run)

    async def _purge(self) -> None:
        """Delete the expired rows, at most once every `_PURGE_EVERY` seconds; every kind of write calls it."""
        now = self._clock()
        if now - self._purged_at > _PURGE_EVERY:
            self._purged_at = now
            await self._run("DELETE FROM oauth_records WHERE expires_at <= ?", now)

    async def put(self, kind: RecordKind, key: str, record: Mapping[str, Any], *, expires_at: float) -> None:
        """See `TokenStore.put`."""
        await self._purge()
        await self._run(
            _REPLACE,
            kind,
            key,
            json.dumps(record),
            expires_at,
        )

    async def get(self, kind: RecordKind, key: str) -> dict[str, Any] | None:
        """See `TokenStore.get`."""
        row = await self._first(
            "SELECT value FROM oauth_records WHERE kind = ? AND key = ? AND expires_at > ?", kind, key, self._clock()
        )
        return _load(row[0]) if row is not None else None

    async def claim(self, kind: RecordKind, key: str) -> tuple[dict[str, Any] | None, bool]:
        """See `TokenStore.claim`."""
        now = self._clock()
        updated = await self._run(
            "UPDATE oauth_records SET claimed = 1 WHERE kind = ? AND key = ? AND expires_at > ? AND claimed = 0",
            kind,
            key,
            now,
        )
        return await self.get(kind, key), updated == 1

    async def extend(self, kind: RecordKind, key: str, *, expires_at: float) -> bool:
        """See `TokenStore.extend`."""
        updated = await self._run(
            "UPDATE oauth_records SET expires_at = ? WHERE kind = ? AND key = ? AND expires_at > ?",
            expires_at,
            kind,
            key,
            self._clock(),
        )
        return updated == 1

    async def count(self, key: str, *, window: float) -> int:
        """See `TokenStore.count`: one upsert in a write transaction, so concurrent counts never see the same
        number."""
        await self._purge()
        now = self._clock()
        row = await self._one(
            "INSERT INTO oauth_records (kind, key, value, expires_at) VALUES ('attempts', ?, '1', ?) "
            "ON CONFLICT (kind, key) DO UPDATE SET "
            "value = CASE WHEN expires_at > ? THEN CAST(CAST(value AS INTEGER) + 1 AS TEXT) ELSE '1' END, "
            "expires_at = CASE WHEN expires_at > ? THEN expires_at ELSE excluded.expires_at END "
            "RETURNING value",
            key,
            now + window,
            now,
            now,
        )
        return int(row[0])

    async def put_capped(
        self, kind: RecordKind, key: str, record: Mapping[str, Any], *, expires_at: float, limit: int
    ) -> bool:
        """See `TokenStore.put_capped`: the count and the insert share one write transaction."""
        await self._purge()
        now, value = self._clock(), json.dumps(record)

        def work(db: sqlite3.Connection) -> bool:
            with transaction(db):
                (stored,) = db.execute(
                    "SELECT count(*) FROM oauth_records WHERE kind = ? AND expires_at > ? AND key != ?",
                    (kind, now, key),
                ).fetchone()
                if stored >= limit:
                    return False
                db.execute(_REPLACE, (kind, key, value, expires_at))
                return True

        return await self._in_thread(work)

    async def delete(self, kind: RecordKind, key: str) -> None:
        """See `TokenStore.delete`."""
        await self._run("DELETE FROM oauth_records WHERE kind = ? AND key = ?", kind, key)

    async def aclose(self) -> None:
        """See `TokenStore.aclose`: after the statement running in a worker thread, if any, never during it."""

        def close() -> None:
            with self._lock:
                self._closed = True
                self._file.close()

        await anyio.to_thread.run_sync(close)


def _load(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise StoreError(f"a stored record is not a JSON object: {text[:80]!r}")
    return value
