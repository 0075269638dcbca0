"""`SqliteFile`: a SQLite database that several processes on one host share, readable by its owner alone, and
watched: a file replaced under a running server (restored from a backup) is reopened, a file removed is not
written to again."""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["BUSY_SECONDS", "DatabaseGone", "SqliteFile", "connect", "outage", "transaction"]

logger = logging.getLogger("gateway.stores")

#: How long a statement waits for another process's lock before failing.
BUSY_SECONDS = 10.0


class DatabaseGone(Exception):
    """The database file was removed (or its folder was) after the server opened it; the message says what
    to do."""


class SqliteFile:
    """One connection to the database at `path` (`:memory:` for this process alone), opened on first use with
    `schema` applied, and checked before each use: the file must still be the one opened.

    Not thread-safe: the owner serializes its use (the stores run statements one at a time in a worker thread).
    A file that is gone raises `DatabaseGone` (and the connection is closed, so nothing is written to a deleted
    file); when a file is back at the path, restored or replaced, the next use opens it. Only the first open
    creates the file: a store that was removed is not silently begun again empty.
    """

    def __init__(self, path: str, schema: str, *, what: str) -> None:
        self.path = path
        self.schema = schema
        self.what = what
        self._db: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None
        self._created = False

    def connection(self) -> sqlite3.Connection:
        """The open connection to the file now at `path`; DatabaseGone when there is none."""
        if self.path == ":memory:":
            if self._db is None:
                self._db = _open(self.path, self.schema)
            return self._db
        identity = _identity(self.path)
        if self._db is not None and identity == self._identity:
            return self._db
        if identity is None and self._created:
            self.close()  # nothing more is written to a deleted file
            raise DatabaseGone(
                f"the {self.what} file {self.path} is gone (removed, or its folder was); restore it (it is reopened "
                "by itself) or restart the gateway to begin an empty store"
            )
        if self._created:
            # The file at the path is not the one opened: restored, or replaced while open.
            logger.warning("the %s file %s was replaced (restored from a backup?): reopening it", self.what, self.path)
            self.close()
        self._db = _open(self.path, self.schema)
        self._identity = _identity(self.path)
        self._created = True
        return self._db

    def close(self) -> None:
        """Close the connection, if open; the next `connection()` opens the file again."""
        if self._db is not None:
            self._db.close()
            self._db = None


def outage(error: sqlite3.Error) -> bool:
    """Whether `error` is the file's or the disk's trouble (full, failing, read-only, locked past the wait, not a
    database), which other statements may share, rather than one statement's own fault."""
    return isinstance(error, sqlite3.OperationalError) or type(error) is sqlite3.DatabaseError


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """A write transaction, begun at once (so a read in it never has to upgrade its lock, which fails instead of
    waiting), committed at the end, rolled back on any error (the error raised, not the rollback's)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            try:
                db.execute("ROLLBACK")
            except sqlite3.Error:
                logger.exception("a rollback failed after another error")
        raise


def connect(path: str) -> sqlite3.Connection:
    """A connection to `path` (`:memory:` for this process alone) in autocommit mode, usable from any thread
    (callers serialize their own use), WAL-journaled so that processes share the file. A new file is its
    owner's only (0600; SQLite gives its -wal and -shm files the same mode), in folders it creates 0700."""
    if path != ":memory:":
        _create_private(Path(path))
    db = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    try:
        _use_wal(db)
        db.execute("PRAGMA synchronous=NORMAL")
    except BaseException:
        db.close()
        raise
    return db


def _open(path: str, schema: str) -> sqlite3.Connection:
    db = connect(path)
    try:
        db.executescript(schema)
    except BaseException:
        db.close()
        raise
    return db


def _identity(path: str) -> tuple[int, int] | None:
    """The device and inode of the file at `path`, or None when there is none."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


def _create_private(path: Path) -> None:
    """Create the folders (0700) and the file (0600) of a new database; existing ones stay as the operator made
    them."""
    missing = [folder for folder in (path.parent, *path.parent.parents) if not folder.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass


def _use_wal(db: sqlite3.Connection) -> None:
    """Switch the file to WAL journaling. The switch locks the whole file and SQLite does not wait for that lock
    as it waits for others: when two processes open a new file at once, the second retries for a while."""
    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
