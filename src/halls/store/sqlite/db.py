"""One SQLite file's connections, shared by every part of the SQLite store.

Writes go through one connection guarded by a lock (SQLite allows one
writer; serialising in-process avoids busy retries), with
``synchronous=FULL`` by default so that a commit acknowledged to a client
survives a crash of the process or the machine. Reads use one connection per
thread, which WAL lets run beside the writer.

Driver errors stop here: ``translated`` turns every ``sqlite3.Error`` (or
SQLCipher's, for an encrypted store: see ``cipher``) into a ``HallsError``,
so nothing above the store has to know sqlite3 exists.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from halls.errors import AlreadyExists, HallsError, StoreUnavailable
from halls.store.errors import translating
from halls.store.sqlite import cipher

T = TypeVar("T")

# SQLite's default SQLITE_MAX_VARIABLE_NUMBER was 999 before 3.32: stay under it.
CHUNK = 900


def chunks(ids: Sequence[T], size: int = CHUNK) -> Iterator[list[T]]:
    """``ids`` in lists short enough for one ``IN (...)`` each."""
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def marks(n: int | Sequence[Any]) -> str:
    """The ``?,?,...`` placeholders of an ``IN`` list."""
    return ",".join("?" * (n if isinstance(n, int) else len(n)))


def ts(value: Any) -> float | None:
    return None if value is None else value.timestamp()


def blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def translate(err: Exception) -> HallsError:
    """The HallsError a driver error means to a caller; the message names no file."""
    if cipher.is_error(err, "IntegrityError"):
        return AlreadyExists("a record with that id already exists")
    return StoreUnavailable(f"the store could not be read or written ({type(err).__name__})")


# Wraps each public method of a class so that sqlite3 (or SQLCipher) errors
# leave as HallsErrors.
translated = translating(cipher.is_error, translate)


class Database:
    """The writer (with its lock), the per-thread readers, and ``tx()``."""

    def __init__(self, path: Path, synchronous: str = "FULL", key: str | None = None) -> None:
        self.path = path
        self._driver = cipher.driver(key is not None)
        # Derived once here (a third of a second), then given raw to each connection.
        self._key = None if key is None else cipher.store_key(path, key)
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self.write_lock = threading.Lock()
        # Called after each write transaction commits (outside the lock): the
        # search part checks that no index snapshot holds a deleted row.
        self.after_commit: list[Callable[[], None]] = []
        self.writer = self.connect()
        self.writer.execute(f"PRAGMA synchronous = {synchronous}")

    def connect(self) -> sqlite3.Connection:
        db = self._driver.connect(self.path, isolation_level=None, check_same_thread=False)
        # A file that is not a database (or is encrypted) fails here: the
        # connection is closed then, not left to the garbage collector.
        try:
            db.row_factory = self._driver.Row
            if self._key is not None:
                self._unlock(db)
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA busy_timeout = 10000")
            db.execute("PRAGMA foreign_keys = ON")
            # A deleted or overwritten row's bytes are zeroed, not just
            # unlinked (freed pages too): deleted is gone from the file.
            db.execute("PRAGMA secure_delete = ON")
            # Memory-mapped reads skip a copy per page: a third off a full-text
            # search at 100k rows. It maps address space, not memory.
            db.execute("PRAGMA mmap_size = 1073741824")
        except BaseException:
            db.close()
            raise
        return db

    def _unlock(self, db: sqlite3.Connection) -> None:
        """Key an SQLCipher connection, first thing, and prove the key with a read."""
        # SQLCipher logs a failed page check to stderr itself; the error below says it.
        db.execute("PRAGMA cipher_log_level = NONE")
        db.execute(f'PRAGMA key = "{self._key}"')
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except Exception as err:  # connect() closes the connection
            if cipher.is_error(err, "DatabaseError"):
                raise cipher.wrong_key(self.path) from None
            raise

    @property
    def encrypted(self) -> bool:
        return self._key is not None

    def rows_hold(self, data: bytes) -> bool:
        """Whether any value of any table (full-text shadow tables included) holds ``data``."""
        db = self.reader()
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                for v in row:
                    raw = v.encode() if isinstance(v, str) else v
                    if isinstance(raw, bytes) and data in raw:
                        return True
        return False

    @property
    def local(self) -> threading.local:
        """Per-thread state that lives as long as the thread's reader (caches)."""
        return self._local

    def reader(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = self.connect()
            self._local.db = db
            with self._readers_lock:
                self._readers.append(db)
        return db

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed on return, rolled back on any error."""
        with self.write_lock:
            db = self.writer
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        self.committed()

    def committed(self) -> None:
        """Run the ``after_commit`` hooks (a write that bypasses ``tx()`` calls this itself)."""
        for hook in self.after_commit:
            hook()

    def truncate_wal(self) -> None:
        """Copy the WAL into the file and empty it: it held the pages a deletion replaced."""
        with self.write_lock:
            self.writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with self._readers_lock:
            for db in self._readers:
                db.close()
            self._readers.clear()
        with self.write_lock:
            self.writer.close()
