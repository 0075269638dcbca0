"""`connect`: a SQLite database that several processes on one host share, readable by its owner alone."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

__all__ = ["BUSY_SECONDS", "connect"]

#: How long a statement waits for another process's lock before failing.
BUSY_SECONDS = 10.0


def connect(path: str) -> sqlite3.Connection:
    """A connection to `path` (`:memory:` for this process alone) in autocommit mode, usable from any thread
    (callers serialize their own use), WAL-journaled so that processes share the file. A new file is its
    owner's only (0600; SQLite gives its -wal and -shm files the same mode), in folders it creates 0700."""
    if path != ":memory:":
        _create_private(Path(path))
    db = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    _use_wal(db)
    db.execute("PRAGMA synchronous=NORMAL")
    return db


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
