"""The PostgreSQL store's consolidation side: the lock, run records, inputs, changes.

``AdvisoryLock`` makes one consolidation per store at a time across every
process and host sharing the database: a session advisory lock keyed by
(halls, store id), held on a connection of its own (outside the pool)
for as long as the run lasts. If that connection dies, PostgreSQL
releases the lock with it, so a crashed process never leaves a store
locked.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg

from halls.models import Brief, JournalEvent, LongFact, OpenLoop, Run, ShortEntry
from halls.store import changes as ch
from halls.store import rowmap
from halls.store.postgres import rows
from halls.store.postgres.db import Database, VectorBytes, dicts, vector_oid
from halls.store.postgres.rows import Conn
from halls.store.postgres.schema import LOCK_SPACE
from halls.store.rowmap import marks, ts


class AdvisoryLock:
    """This store's consolidation lock: a thread lock, and the advisory lock behind it.

    A session advisory lock is re-entrant for its session; the thread lock
    keeps a second try through the same handle from succeeding.
    """

    def __init__(self, db: Database, store: int) -> None:
        self._db = db
        self._key = (LOCK_SPACE, store)
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None

    def try_acquire(self) -> bool:
        if not self._lock.acquire(blocking=False):
            return False
        try:
            conn = psycopg.connect(self._db.dsn, autocommit=True)
        except BaseException:
            self._lock.release()
            raise
        row = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", self._key).fetchone()
        if not (row and row[0]):
            conn.close()
            self._lock.release()
            return False
        self._conn = conn
        return True

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.execute("SELECT pg_advisory_unlock(%s, %s)", self._key)
            finally:
                conn.close()  # closing alone would release it too
        self._lock.release()

    def held(self) -> bool:
        """Whether any session (this handle's, another process's) holds it."""
        if self._lock.locked():
            return True
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                "AND classid = %s::oid AND objid = %s::oid AND objsubid = 2 AND granted)",
                self._key,
            ).fetchone()
        return bool(row and row[0])

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class RunLog:
    """Run records: each run with its actions, newest first."""

    def __init__(self, db: Database, store: int, name: str) -> None:
        self._db = db
        self._store = store
        self._name = name

    def write(self, conn: Conn, run: Run) -> None:
        conn.execute(
            f"INSERT INTO halls.runs(store, {rowmap.RUN_COLUMNS}) VALUES ({marks(11, '%s')}) "
            f"ON CONFLICT (store, id) DO UPDATE SET {rowmap.RUN_UPSERT}",
            (self._store, *rowmap.run_values(run)),
        )
        conn.execute(
            "DELETE FROM halls.run_actions WHERE store = %s AND run_id = %s", (self._store, run.id)
        )
        with conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO halls.run_actions(store, {rowmap.ACTION_COLUMNS}) "
                f"VALUES ({marks(11, '%s')})",
                [(self._store, *a) for a in rowmap.action_values(run)],
            )

    def save(self, run: Run) -> None:
        with self._db.tx(self._store) as conn:
            self.write(conn, run)

    def _runs(self, where: str, args: Sequence[Any], limit: int, offset: int) -> list[Run]:
        with self._db.read() as conn:
            found = (
                dicts(conn)
                .execute(
                    f"SELECT * FROM halls.runs WHERE store = %s {where} "
                    "ORDER BY started_at DESC, id DESC LIMIT %s OFFSET %s",
                    (self._store, *args, limit, offset),
                )
                .fetchall()
            )
            acts = (
                dicts(conn)
                .execute(
                    "SELECT * FROM halls.run_actions WHERE store = %s AND run_id = ANY(%s) "
                    "ORDER BY run_id, seq",
                    (self._store, [r["id"] for r in found]),
                )
                .fetchall()
            )
        by_run: dict[str, list[dict[str, Any]]] = {}
        for a in acts:
            by_run.setdefault(a["run_id"], []).append(a)
        return [rowmap.run_of(r, self._name, by_run.get(r["id"], [])) for r in found]

    def get(self, id: str) -> Run | None:
        found = self._runs("AND id = %s", (id,), 1, 0)
        return found[0] if found else None

    def recent(self, limit: int, offset: int) -> list[Run]:
        return self._runs("", (), limit, offset)

    def last_applied(self) -> Run | None:
        found = self._runs("AND status = 'done' AND engine != 'operator'", (), 1, 0)
        return found[0] if found else None

    def after(self, run: Run) -> list[str]:
        with self._db.read() as conn:
            found = conn.execute(
                "SELECT id FROM halls.runs WHERE store = %s AND status = 'done' "
                "AND engine != 'operator' AND (started_at > %s OR (started_at = %s AND id > %s)) "
                "ORDER BY started_at, id",
                (self._store, ts(run.started_at), ts(run.started_at), run.id),
            ).fetchall()
        return [r[0] for r in found]

    def fail_stale(self, now: float) -> int:
        with self._db.tx(self._store) as conn:
            return conn.execute(
                "UPDATE halls.runs SET status = 'failed', finished_at = %s, "
                "error = 'interrupted (the process stopped mid-run); nothing was applied' "
                "WHERE store = %s AND status = 'running'",
                (now, self._store),
            ).rowcount


def _with_vectors(conn: Conn, sql: str, args: Sequence[Any]) -> tuple[list[Any], np.ndarray]:
    """Rows of ``sql`` (which selects ``d.vec`` last, as ``vec``) and their vectors stacked."""
    cur = dicts(conn)
    cur.adapters.register_loader(vector_oid(conn), VectorBytes)
    # Binary results: the vector arrives as raw float32 bytes (VectorBytes).
    found = cur.execute(sql, args, binary=True).fetchall()
    if not found:
        return [], np.zeros((0, 0), dtype=np.float32)
    joined = b"".join(r["vec"] for r in found)
    return found, np.frombuffer(joined, dtype=np.float32).reshape(len(found), -1).copy()


class Consolidation:
    """A run's inputs, read whole, and its changes, applied with its record at once."""

    def __init__(self, db: Database, store: int, runs: RunLog) -> None:
        self._db = db
        self._store = store
        self._runs = runs

    def short_for_consolidation(self) -> tuple[list[ShortEntry], list[str | None], np.ndarray]:
        with self._db.read() as conn:
            found, vectors = _with_vectors(
                conn,
                "SELECT s.*, d.vec FROM halls.short s JOIN halls.docs d "
                "ON d.store = s.store AND d.item_id = s.id WHERE s.store = %s "
                "ORDER BY s.occurred_at, s.id",
                (self._store,),
            )
        entries, kept = rowmap.readable_rows(found, rowmap.short_of)
        found = [found[n] for n in kept]
        return entries, [r["consolidated_into"] for r in found], vectors[kept]

    def facts_with_vectors(self, status: str) -> tuple[list[LongFact], np.ndarray]:
        with self._db.read() as conn:
            found, vectors = _with_vectors(
                conn,
                f"SELECT f.*, d.vec FROM ({rows.FACTS} WHERE l.store = %s AND l.status = %s) f "
                "JOIN halls.docs d ON d.store = f.store AND d.item_id = f.id ORDER BY f.id",
                (self._store, status),
            )
        facts, kept = rowmap.readable_rows(found, rowmap.fact_of)
        return facts, vectors[kept]

    def open_loops_with_vectors(self) -> tuple[list[OpenLoop], np.ndarray]:
        with self._db.read() as conn:
            found, vectors = _with_vectors(
                conn,
                "SELECT n.*, d.vec FROM halls.near n JOIN halls.docs d "
                "ON d.store = n.store AND d.item_id = n.id "
                "WHERE n.store = %s AND n.status = 'open' ORDER BY n.id",
                (self._store,),
            )
        loops, kept = rowmap.readable_rows(found, rowmap.loop_of)
        return loops, vectors[kept]

    def journal_since(self, since: float | None) -> list[JournalEvent]:
        with self._db.read() as conn:
            found = dicts(conn).execute(
                "SELECT * FROM halls.journal WHERE store = %s AND created_at >= %s ORDER BY seq",
                (self._store, since or 0.0),
            )
            return rowmap.each(found, rowmap.journal_of)

    def briefs_since(self, since: float | None) -> list[Brief]:
        # >=, not >: a brief stamped in the same instant as the last run is
        # read again rather than missed; acting on a brief twice is harmless.
        with self._db.read() as conn:
            found = dicts(conn).execute(
                "SELECT * FROM halls.briefs WHERE store = %s AND created_at >= %s "
                "ORDER BY created_at, id",
                (self._store, since or 0.0),
            )
            return [rowmap.brief_of(r) for r in found]

    def apply_changes(self, changes: Sequence[ch.Change], run: Run | None) -> None:
        with self._db.tx(self._store) as conn:
            for change in changes:
                _apply(conn, self._store, change)
            if run is not None:
                self._runs.write(conn, run)


def _apply(conn: Conn, store: int, c: ch.Change) -> None:
    if isinstance(c, ch.AddFact):
        rows.insert_fact(conn, store, c.fact, c.vector)
    elif isinstance(c, ch.SetFact):
        rows.update_fact(conn, store, c.fact)
    elif isinstance(c, ch.DeleteFact):
        rows.delete_rows(conn, store, "long", [c.id])
    elif isinstance(c, ch.MarkShort):
        conn.execute(
            "UPDATE halls.short SET consolidated_into = %s WHERE store = %s AND id = ANY(%s)",
            (c.fact_id, store, list(c.ids)),
        )
        # A folded entry stays findable (recall ranks it below its fact);
        # unfolding one (a revert) reactivates it if an older run had not.
        if c.fact_id is None:
            rows.set_active(conn, store, c.ids, True)
    elif isinstance(c, ch.HideShort):
        rows.set_active(conn, store, c.ids, not c.hidden)
    elif isinstance(c, ch.DeleteShort):
        rows.delete_rows(conn, store, "short", c.ids)
    elif isinstance(c, ch.RestoreShort):
        # Restoring what is already there (a revert retried) changes nothing.
        there = conn.execute(
            "SELECT 1 FROM halls.short WHERE store = %s AND id = %s", (store, c.entry.id)
        ).fetchone()
        if not there:
            rows.insert_short(conn, store, [c.entry], [c.vector], c.consolidated_into)
    elif isinstance(c, ch.SetLoop):
        loop = c.loop
        conn.execute(
            "UPDATE halls.near SET status = %s, closed_at = %s WHERE store = %s AND id = %s",
            (loop.status, ts(loop.closed_at), store, loop.id),
        )
        rows.set_active(conn, store, [loop.id], loop.status == "open")
    elif isinstance(c, ch.SetFlag):
        conn.execute(
            "UPDATE halls.forget_flags SET status = %s WHERE store = %s AND id = %s",
            (c.status, store, c.id),
        )
    elif isinstance(c, ch.AddEdges):
        rows.add_edges(conn, store, c.edges)
    elif isinstance(c, ch.RemoveEdges):
        rows.remove_edges(conn, store, c.edges)
    else:  # pragma: no cover - a new Change type without a case here
        raise TypeError(f"unknown change {type(c).__name__}")
