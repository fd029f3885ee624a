"""The SQLite store's consolidation side: the lock, run records, inputs, changes.

Three plain parts of ``SQLiteStore`` over the shared ``Database``:
``ConsolidationLock`` (one run per store at a time, across processes),
``RunLog`` (run records) and ``Consolidation`` (a run's inputs, and its
changes applied with its record in one transaction). Purges live in
``purge``.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from halls.models import (
    Brief,
    JournalEvent,
    LongFact,
    OpenLoop,
    Run,
    ShortEntry,
)
from halls.store import changes as ch
from halls.store import rowmap
from halls.store.sqlite import rows
from halls.store.sqlite.db import Database, chunks, marks, ts

try:  # POSIX: a lock file, so two processes never consolidate one store at once
    import fcntl
except ImportError:  # pragma: no cover - Windows: the in-process lock only
    fcntl = None  # type: ignore[assignment]


class ConsolidationLock:
    """This store's consolidation lock: a thread lock, and a ``flock`` on a file beside it.

    The flock is per open file, so two handles on one store (in one process
    or two) exclude each other as two servers would.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None

    def try_acquire(self) -> bool:
        if not self._lock.acquire(blocking=False):
            return False
        if fcntl is None:
            return True
        f: IO[bytes] = open(self._path, "ab")  # noqa: SIM115 - held until release
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            self._lock.release()
            return False
        self._file = f
        return True

    def release(self) -> None:
        f, self._file = self._file, None
        if f is not None:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
            f.close()
        self._lock.release()

    def held(self) -> bool:
        """Whether anyone (this handle, another handle, another process) holds it."""
        if self._lock.locked():
            return True
        if fcntl is None or not os.path.exists(self._path):
            return False
        with open(self._path, "ab") as f:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        return False


class RunLog:
    """Run records: each run with its actions, newest first."""

    def __init__(self, db: Database, store: str) -> None:
        self._db = db
        self._store = store

    def write(self, db: sqlite3.Connection, run: Run) -> None:
        db.execute(
            f"INSERT INTO runs({rowmap.RUN_COLUMNS}) VALUES ({marks(10)}) "
            f"ON CONFLICT(id) DO UPDATE SET {rowmap.RUN_UPSERT}",
            rowmap.run_values(run),
        )
        db.execute("DELETE FROM run_actions WHERE run_id = ?", (run.id,))
        db.executemany(
            f"INSERT INTO run_actions({rowmap.ACTION_COLUMNS}) VALUES ({marks(10)})",
            rowmap.action_values(run),
        )

    def save(self, run: Run) -> None:
        with self._db.tx() as db:
            self.write(db, run)

    def _runs(self, where: str, args: Sequence[Any], limit: int, offset: int) -> list[Run]:
        db = self._db.reader()
        rows = db.execute(
            f"SELECT * FROM runs {where} ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?",
            (*args, limit, offset),
        ).fetchall()
        out = []
        for r in rows:
            acts = db.execute(
                "SELECT * FROM run_actions WHERE run_id = ? ORDER BY seq", (r["id"],)
            ).fetchall()
            out.append(rowmap.run_of(r, self._store, acts))
        return out

    def get(self, id: str) -> Run | None:
        found = self._runs("WHERE id = ?", (id,), 1, 0)
        return found[0] if found else None

    def recent(self, limit: int, offset: int) -> list[Run]:
        return self._runs("", (), limit, offset)

    def last_applied(self) -> Run | None:
        row = (
            self._db.reader()
            .execute(
                "SELECT id FROM runs WHERE status = 'done' AND engine != 'operator' "
                "ORDER BY started_at DESC, id DESC LIMIT 1"
            )
            .fetchone()
        )
        return None if row is None else self.get(row[0])

    def after(self, run: Run) -> list[str]:
        """Ids of applied runs that started after ``run`` (they may build on it)."""
        rows = self._db.reader().execute(
            "SELECT id FROM runs WHERE status = 'done' AND engine != 'operator' AND "
            "(started_at > ? OR (started_at = ? AND id > ?)) ORDER BY started_at, id",
            (ts(run.started_at), ts(run.started_at), run.id),
        )
        return [r[0] for r in rows]

    def fail_stale(self, now: float) -> int:
        """Mark runs left 'running' by a crash as failed (call holding the lock)."""
        with self._db.tx() as db:
            return db.execute(
                "UPDATE runs SET status = 'failed', finished_at = ?, "
                "error = 'interrupted (the process stopped mid-run); nothing was applied' "
                "WHERE status = 'running'",
                (now,),
            ).rowcount


class Consolidation:
    """A run's inputs, read whole, and its changes, applied with its record at once."""

    def __init__(self, db: Database, runs: RunLog) -> None:
        self._db = db
        self._runs = runs

    def short_for_consolidation(self) -> tuple[list[ShortEntry], list[str | None], np.ndarray]:
        found = (
            self._db.reader()
            .execute(
                "SELECT s.*, d.vec FROM short s JOIN docs d ON d.item_id = s.id "
                "ORDER BY s.occurred_at, s.id"
            )
            .fetchall()
        )
        entries, kept = rowmap.readable_rows(found, rowmap.short_of)
        found = [found[n] for n in kept]
        return entries, [r["consolidated_into"] for r in found], rows.matrix(found)

    def facts_with_vectors(self, status: str) -> tuple[list[LongFact], np.ndarray]:
        found = (
            self._db.reader()
            .execute(
                f"SELECT f.*, d.vec FROM ({rows.FACTS}) f JOIN docs d ON d.item_id = f.id "
                "WHERE f.status = ? ORDER BY f.id",
                (status,),
            )
            .fetchall()
        )
        facts, kept = rowmap.readable_rows(found, rowmap.fact_of)
        return facts, rows.matrix([found[n] for n in kept])

    def open_loops_with_vectors(self) -> tuple[list[OpenLoop], np.ndarray]:
        found = (
            self._db.reader()
            .execute(
                "SELECT n.*, d.vec FROM near n JOIN docs d ON d.item_id = n.id "
                "WHERE n.status = 'open' ORDER BY n.id"
            )
            .fetchall()
        )
        loops, kept = rowmap.readable_rows(found, rowmap.loop_of)
        return loops, rows.matrix([found[n] for n in kept])

    def journal_since(self, since: float | None) -> list[JournalEvent]:
        found = self._db.reader().execute(
            "SELECT * FROM journal WHERE created_at >= ? ORDER BY seq", (since or 0.0,)
        )
        return rowmap.each(found, rowmap.journal_of)

    def briefs_since(self, since: float | None) -> list[Brief]:
        # >=, not >: a brief stamped in the same instant as the last run is
        # read again rather than missed; acting on a brief twice is harmless.
        found = self._db.reader().execute(
            "SELECT * FROM briefs WHERE created_at >= ? ORDER BY created_at, id", (since or 0.0,)
        )
        return [rowmap.brief_of(r) for r in found]

    def apply_changes(self, changes: Sequence[ch.Change], run: Run | None) -> None:
        with self._db.tx() as db:
            for change in changes:
                _apply(db, change)
            if run is not None:
                self._runs.write(db, run)


def _apply(db: sqlite3.Connection, c: ch.Change) -> None:
    if isinstance(c, ch.AddFact):
        rows.insert_fact(db, c.fact, c.vector)
    elif isinstance(c, ch.SetFact):
        rows.update_fact(db, c.fact)
    elif isinstance(c, ch.DeleteFact):
        rows.delete_rows(db, "long", [c.id])
    elif isinstance(c, ch.MarkShort):
        for chunk in chunks(c.ids):
            db.execute(
                f"UPDATE short SET consolidated_into = ? WHERE id IN ({marks(chunk)})",
                (c.fact_id, *chunk),
            )
            # A folded entry stays findable (recall ranks it below its fact);
            # unfolding one (a revert) reactivates it if an older run had not.
            if c.fact_id is None:
                db.execute(f"UPDATE docs SET active = 1 WHERE item_id IN ({marks(chunk)})", chunk)
    elif isinstance(c, ch.HideShort):
        for chunk in chunks(c.ids):
            db.execute(
                f"UPDATE docs SET active = ? WHERE item_id IN ({marks(chunk)})",
                (int(not c.hidden), *chunk),
            )
    elif isinstance(c, ch.DeleteShort):
        rows.delete_rows(db, "short", c.ids)
    elif isinstance(c, ch.RestoreShort):
        # Restoring what is already there (a revert retried) changes nothing.
        if not db.execute("SELECT 1 FROM short WHERE id = ?", (c.entry.id,)).fetchone():
            rows.insert_short(db, c.entry, c.vector, c.consolidated_into)
    elif isinstance(c, ch.SetLoop):
        loop = c.loop
        db.execute(
            "UPDATE near SET status = ?, closed_at = ? WHERE id = ?",
            (loop.status, ts(loop.closed_at), loop.id),
        )
        db.execute(
            "UPDATE docs SET active = ? WHERE item_id = ?", (int(loop.status == "open"), loop.id)
        )
    elif isinstance(c, ch.SetFlag):
        db.execute("UPDATE forget_flags SET status = ? WHERE id = ?", (c.status, c.id))
    elif isinstance(c, ch.AddEdges):
        rows.add_edges(db, c.edges)
    elif isinstance(c, ch.RemoveEdges):
        rows.remove_edges(db, c.edges)
    else:  # pragma: no cover - a new Change type without a case here
        raise TypeError(f"unknown change {type(c).__name__}")
