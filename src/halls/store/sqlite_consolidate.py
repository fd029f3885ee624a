"""The SQLite store's consolidation side: inputs, run records, changes, purge.

A mixin of ``SQLiteStore`` (it uses its writer ``_tx``, per-thread
``_reader`` and row converters), kept apart so that neither module grows
past one concept. Everything a run changes, and its record, is applied in
one transaction. Purges live in ``sqlite_purge``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from typing import IO, Any

import numpy as np

from halls.models import (
    Action,
    Brief,
    JournalEvent,
    LongFact,
    OpenLoop,
    Run,
    ShortEntry,
    to_datetime,
)
from halls.store import changes as ch
from halls.store.sqlite_purge import SQLitePurge, _chunks, _in

try:  # POSIX: a lock file, so two processes never consolidate one store at once
    import fcntl
except ImportError:  # pragma: no cover - Windows: the in-process lock only
    fcntl = None  # type: ignore[assignment]

_GUARD = threading.Lock()


def _ts(value: Any) -> float | None:
    return None if value is None else value.timestamp()


def _vectors(rows: Sequence[sqlite3.Row], dim_hint: int = 0) -> np.ndarray:
    if not rows:
        return np.zeros((0, dim_hint), dtype=np.float32)
    blob = b"".join(r["vec"] for r in rows)
    return np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1).copy()


class SQLiteConsolidation(SQLitePurge):
    """Consolidation methods of the Store protocol, for SQLiteStore."""

    # -- one run per store at a time --

    def _cons_state(self) -> dict[str, Any]:
        with _GUARD:
            state = self.__dict__.get("_cons")
            if state is None:
                state = {"lock": threading.Lock(), "file": None}
                self.__dict__["_cons"] = state
        return state

    def _lock_path(self) -> str:
        return f"{self.path}.consolidate.lock"  # type: ignore[attr-defined]

    def try_lock_consolidation(self) -> bool:
        state = self._cons_state()
        if not state["lock"].acquire(blocking=False):
            return False
        if fcntl is None:
            return True
        f: IO[bytes] = open(self._lock_path(), "ab")  # noqa: SIM115 - held until unlock
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            state["lock"].release()
            return False
        state["file"] = f
        return True

    def unlock_consolidation(self) -> None:
        state = self._cons_state()
        f = state["file"]
        if f is not None:
            state["file"] = None
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
            f.close()
        state["lock"].release()

    def consolidation_locked(self) -> bool:
        state = self._cons_state()
        if state["lock"].locked():
            return True
        if fcntl is None or not os.path.exists(self._lock_path()):
            return False
        with open(self._lock_path(), "ab") as f:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        return False

    # -- inputs --

    def short_for_consolidation(self) -> tuple[list[ShortEntry], list[str | None], np.ndarray]:
        rows = (
            self._reader()
            .execute(  # type: ignore[attr-defined]
                "SELECT s.*, d.vec FROM short s JOIN docs d ON d.item_id = s.id "
                "ORDER BY s.occurred_at, s.id"
            )
            .fetchall()
        )
        entries = [self._short(r) for r in rows]  # type: ignore[attr-defined]
        return entries, [r["consolidated_into"] for r in rows], _vectors(rows)

    def facts_with_vectors(self, status: str) -> tuple[list[LongFact], np.ndarray]:
        rows = (
            self._reader()
            .execute(  # type: ignore[attr-defined]
                "SELECT l.*, d.vec FROM long l JOIN docs d ON d.item_id = l.id "
                "WHERE l.status = ? ORDER BY l.id",
                (status,),
            )
            .fetchall()
        )
        return [self._fact(r) for r in rows], _vectors(rows)  # type: ignore[attr-defined]

    def open_loops_with_vectors(self) -> tuple[list[OpenLoop], np.ndarray]:
        rows = (
            self._reader()
            .execute(  # type: ignore[attr-defined]
                "SELECT n.*, d.vec FROM near n JOIN docs d ON d.item_id = n.id "
                "WHERE n.status = 'open' ORDER BY n.id"
            )
            .fetchall()
        )
        return [self._loop(r) for r in rows], _vectors(rows)  # type: ignore[attr-defined]

    def journal_since(self, since: float | None) -> list[JournalEvent]:
        rows = self._reader().execute(
            "SELECT * FROM journal WHERE created_at >= ? ORDER BY seq", (since or 0.0,)
        )
        return [self._journal(r) for r in rows]  # type: ignore[attr-defined]

    def briefs_since(self, since: float | None) -> list[Brief]:
        # >=, not >: a brief stamped in the same instant as the last run is
        # read again rather than missed; acting on a brief twice is harmless.
        rows = self._reader().execute(
            "SELECT * FROM briefs WHERE created_at >= ? ORDER BY created_at, id", (since or 0.0,)
        )
        return [self._brief(r) for r in rows]  # type: ignore[attr-defined]

    # -- run records --

    def _write_run(self, db: sqlite3.Connection, run: Run) -> None:
        db.execute(
            "INSERT INTO runs(id, started_at, finished_at, engine, status, since, counts, notes, "
            "error, reverted_at) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
            "finished_at = excluded.finished_at, status = excluded.status, "
            "counts = excluded.counts, notes = excluded.notes, error = excluded.error, "
            "reverted_at = excluded.reverted_at",
            (
                run.id,
                _ts(run.started_at),
                _ts(run.finished_at),
                run.engine,
                run.status,
                _ts(run.since),
                json.dumps(run.counts),
                json.dumps(run.notes),
                run.error,
                _ts(run.reverted_at),
            ),
        )
        db.execute("DELETE FROM run_actions WHERE run_id = ?", (run.id,))
        db.executemany(
            "INSERT INTO run_actions(run_id, seq, kind, target_id, reason, inputs, before, after, "
            "engine_note, undo) VALUES (?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    run.id,
                    n,
                    a.kind,
                    a.target_id,
                    a.reason,
                    json.dumps(a.inputs),
                    None if a.before is None else json.dumps(a.before),
                    None if a.after is None else json.dumps(a.after),
                    a.engine_note,
                    None if a.undo is None else json.dumps(a.undo),
                )
                for n, a in enumerate(run.actions)
            ],
        )

    def save_run(self, run: Run) -> None:
        with self._tx() as db:  # type: ignore[attr-defined]
            self._write_run(db, run)

    def _runs(self, where: str, args: Sequence[Any], limit: int, offset: int) -> list[Run]:
        db = self._reader()  # type: ignore[attr-defined]
        rows = db.execute(
            f"SELECT * FROM runs {where} ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?",
            (*args, limit, offset),
        ).fetchall()
        out = []
        for r in rows:
            acts = db.execute(
                "SELECT * FROM run_actions WHERE run_id = ? ORDER BY seq", (r["id"],)
            ).fetchall()
            out.append(
                Run(
                    id=r["id"],
                    store=self.name,  # type: ignore[attr-defined]
                    started_at=to_datetime(r["started_at"]),  # type: ignore[arg-type]
                    finished_at=to_datetime(r["finished_at"]),
                    engine=r["engine"],
                    dry_run=False,
                    status=r["status"],
                    since=to_datetime(r["since"]),
                    counts=json.loads(r["counts"]),
                    notes=json.loads(r["notes"]),
                    error=r["error"],
                    reverted_at=to_datetime(r["reverted_at"]),
                    actions=[
                        Action(
                            kind=a["kind"],
                            target_id=a["target_id"],
                            reason=a["reason"],
                            inputs=json.loads(a["inputs"]),
                            before=None if a["before"] is None else json.loads(a["before"]),
                            after=None if a["after"] is None else json.loads(a["after"]),
                            engine_note=a["engine_note"],
                            undo=None if a["undo"] is None else json.loads(a["undo"]),
                        )
                        for a in acts
                    ],
                )
            )
        return out

    def get_run(self, id: str) -> Run | None:
        found = self._runs("WHERE id = ?", (id,), 1, 0)
        return found[0] if found else None

    def list_runs(self, limit: int, offset: int) -> list[Run]:
        return self._runs("", (), limit, offset)

    def last_applied_run(self) -> Run | None:
        row = (
            self._reader()
            .execute(  # type: ignore[attr-defined]
                "SELECT id FROM runs WHERE status = 'done' AND engine != 'operator' "
                "ORDER BY started_at DESC, id DESC LIMIT 1"
            )
            .fetchone()
        )
        return None if row is None else self.get_run(row[0])

    def runs_after(self, run: Run) -> list[str]:
        """Ids of applied runs that started after ``run`` (they may build on it)."""
        rows = self._reader().execute(  # type: ignore[attr-defined]
            "SELECT id FROM runs WHERE status = 'done' AND engine != 'operator' AND "
            "(started_at > ? OR (started_at = ? AND id > ?)) ORDER BY started_at, id",
            (_ts(run.started_at), _ts(run.started_at), run.id),
        )
        return [r[0] for r in rows]

    def fail_stale_runs(self, now: float) -> int:
        """Mark runs left 'running' by a crash as failed (call holding the lock)."""
        with self._tx() as db:  # type: ignore[attr-defined]
            return db.execute(
                "UPDATE runs SET status = 'failed', finished_at = ?, "
                "error = 'interrupted (the process stopped mid-run); nothing was applied' "
                "WHERE status = 'running'",
                (now,),
            ).rowcount

    # -- applying a run --

    def apply_changes(self, changes: Sequence[ch.Change], run: Run) -> None:
        with self._tx() as db:  # type: ignore[attr-defined]
            for change in changes:
                self._apply(db, change)
            self._write_run(db, run)

    def _apply(self, db: sqlite3.Connection, c: ch.Change) -> None:
        if isinstance(c, ch.AddFact):
            f = c.fact
            db.execute(
                "INSERT INTO long(id, content, topic, category, evidence_count, first_seen, "
                "last_confirmed, status, supersedes, superseded_by, derived_from, metadata, "
                "created_at, occurred_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    f.id,
                    f.content,
                    f.topic,
                    f.category,
                    f.evidence_count,
                    _ts(f.first_seen),
                    _ts(f.last_confirmed),
                    f.status,
                    f.supersedes,
                    f.superseded_by,
                    json.dumps(f.derived_from),
                    json.dumps(f.metadata),
                    _ts(f.created_at),
                    _ts(f.occurred_at),
                ),
            )
            self._index_doc(db, f, f.content, f.status != "superseded", c.vector)  # type: ignore[attr-defined]
        elif isinstance(c, ch.SetFact):
            f = c.fact
            db.execute(
                "UPDATE long SET evidence_count = ?, last_confirmed = ?, status = ?, "
                "supersedes = ?, superseded_by = ?, derived_from = ?, metadata = ? WHERE id = ?",
                (
                    f.evidence_count,
                    _ts(f.last_confirmed),
                    f.status,
                    f.supersedes,
                    f.superseded_by,
                    json.dumps(f.derived_from),
                    json.dumps(f.metadata),
                    f.id,
                ),
            )
            db.execute(
                "UPDATE docs SET active = ? WHERE item_id = ?",
                (int(f.status != "superseded"), f.id),
            )
        elif isinstance(c, ch.DeleteFact):
            db.execute("DELETE FROM long WHERE id = ?", (c.id,))
            db.execute("DELETE FROM docs WHERE item_id = ?", (c.id,))
            db.execute("DELETE FROM edges WHERE src = ? OR dst = ?", (c.id, c.id))
        elif isinstance(c, ch.MarkShort):
            for chunk in _chunks(c.ids):
                db.execute(
                    f"UPDATE short SET consolidated_into = ? WHERE id IN ({_in(chunk)})",
                    (c.fact_id, *chunk),
                )
                db.execute(
                    f"UPDATE docs SET active = ? WHERE item_id IN ({_in(chunk)})",
                    (int(c.fact_id is None), *chunk),
                )
        elif isinstance(c, ch.DeleteShort):
            for chunk in _chunks(c.ids):
                db.execute(f"DELETE FROM short WHERE id IN ({_in(chunk)})", chunk)
                db.execute(f"DELETE FROM docs WHERE item_id IN ({_in(chunk)})", chunk)
        elif isinstance(c, ch.RestoreShort):
            e = c.entry
            db.execute(
                "INSERT OR IGNORE INTO short(id, content, topic, source, pinned, metadata, "
                "created_at, occurred_at, expires_at, consolidated_into) "
                "VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    e.id,
                    e.content,
                    e.topic,
                    e.source,
                    int(e.pinned),
                    json.dumps(e.metadata),
                    _ts(e.created_at),
                    _ts(e.occurred_at),
                    _ts(e.expires_at),
                    c.consolidated_into,
                ),
            )
            if not db.execute("SELECT 1 FROM docs WHERE item_id = ?", (e.id,)).fetchone():
                self._index_doc(db, e, e.content, c.consolidated_into is None, c.vector)  # type: ignore[attr-defined]
        elif isinstance(c, ch.SetLoop):
            loop = c.loop
            db.execute(
                "UPDATE near SET status = ?, closed_at = ? WHERE id = ?",
                (loop.status, _ts(loop.closed_at), loop.id),
            )
            db.execute(
                "UPDATE docs SET active = ? WHERE item_id = ?",
                (int(loop.status == "open"), loop.id),
            )
        elif isinstance(c, ch.SetFlag):
            db.execute("UPDATE forget_flags SET status = ? WHERE id = ?", (c.status, c.id))
        elif isinstance(c, ch.AddEdges):
            db.executemany(
                "INSERT OR IGNORE INTO edges(src, dst, kind, created_at) "
                "VALUES (?, ?, ?, julianday('now'))",
                c.edges,
            )
        else:  # pragma: no cover - a new Change type without a case here
            raise TypeError(f"unknown change {type(c).__name__}")
