"""The SQLite store: one file per named store, WAL, one writer, many readers.

Writes go through one connection guarded by a lock (SQLite allows one
writer; serialising in-process avoids busy retries), with
``synchronous=FULL`` so that a commit acknowledged to a client survives a
crash of the process or the machine. Reads use one connection per thread,
which WAL lets run beside the writer.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from halls.models import (
    Brief,
    ForgetFlag,
    JournalEvent,
    LongFact,
    OpenLoop,
    Record,
    ShortEntry,
    to_datetime,
)
from halls.store.sqlite_consolidate import SQLiteConsolidation
from halls.store.sqlite_schema import migrate
from halls.store.sqlite_search import SQLiteSearch, blob
from halls.store.textindex import TextIndex
from halls.store.vecindex import VectorIndex

_TIER_TABLE = {"s": "short", "n": "near", "l": "long"}


def _ts(value: Any) -> float | None:
    return None if value is None else value.timestamp()


def _loads(text: str) -> Any:
    # Most records carry no metadata: skip the JSON parser for that (a
    # search converts a hundred records).
    if text == "{}":
        return {}
    if text == "[]":
        return []
    return json.loads(text)


class SQLiteStore(SQLiteSearch, SQLiteConsolidation):
    def __init__(self, path: Path, name: str, synchronous: str = "FULL") -> None:
        self.name = name
        self.path = path
        self._synchronous = synchronous
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._writer = self._connect()
        self._writer.execute(f"PRAGMA synchronous = {synchronous}")
        migrate(self._writer)
        self._index: VectorIndex | None = None
        self._texts: TextIndex | None = None

    # -- connections --

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA busy_timeout = 10000")
        db.execute("PRAGMA foreign_keys = ON")
        # Memory-mapped reads skip a copy per page: a third off a full-text
        # search at 100k rows. It maps address space, not memory.
        db.execute("PRAGMA mmap_size = 1073741824")
        return db

    def _reader(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._connect()
            self._local.db = db
            with self._readers_lock:
                self._readers.append(db)
        return db

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._write_lock:
            db = self._writer
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        with self._readers_lock:
            for db in self._readers:
                db.close()
            self._readers.clear()
        with self._write_lock:
            self._writer.close()

    # -- meta --

    def get_meta(self, key: str) -> str | None:
        row = self._reader().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # -- the search index rows --

    def _index_doc(
        self,
        db: sqlite3.Connection,
        item: ShortEntry | OpenLoop | LongFact,
        text: str,
        active: bool,
        vector: np.ndarray,
    ) -> None:
        cur = db.execute(
            "INSERT INTO docs(item_id, tier, topic, occurred_at, active, vec) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (item.id, item.tier, item.topic, _ts(item.occurred_at), int(active), blob(vector)),
        )
        db.execute("INSERT INTO docs_fts(rowid, content) VALUES (?, ?)", (cur.lastrowid, text))

    def _set_active(self, db: sqlite3.Connection, item_id: str, active: bool, topic: Any) -> None:
        db.execute(
            "UPDATE docs SET active = ?, topic = ? WHERE item_id = ?", (int(active), topic, item_id)
        )

    # -- short-term --

    def add_short(self, entries: list[ShortEntry], vectors: np.ndarray) -> None:
        with self._tx() as db:
            for entry, vector in zip(entries, vectors, strict=True):
                db.execute(
                    "INSERT INTO short(id, content, topic, source, pinned, metadata, "
                    "created_at, occurred_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        entry.id,
                        entry.content,
                        entry.topic,
                        entry.source,
                        int(entry.pinned),
                        json.dumps(entry.metadata),
                        _ts(entry.created_at),
                        _ts(entry.occurred_at),
                        _ts(entry.expires_at),
                    ),
                )
                self._index_doc(db, entry, entry.content, True, vector)

    @staticmethod
    def _short(row: sqlite3.Row) -> ShortEntry:
        return ShortEntry(
            id=row["id"],
            content=row["content"],
            topic=row["topic"],
            source=row["source"],
            pinned=bool(row["pinned"]),
            metadata=_loads(row["metadata"]),
            created_at=to_datetime(row["created_at"]),
            occurred_at=to_datetime(row["occurred_at"]),
            expires_at=to_datetime(row["expires_at"]),
        )

    def get_short(self, id: str) -> ShortEntry | None:
        row = self._reader().execute("SELECT * FROM short WHERE id = ?", (id,)).fetchone()
        return None if row is None else self._short(row)

    def list_short(self, limit: int, offset: int) -> list[ShortEntry]:
        rows = self._reader().execute(
            "SELECT * FROM short ORDER BY id DESC LIMIT ? OFFSET ?", (limit, offset)
        )
        return [self._short(r) for r in rows]

    def _delete(self, table: str, id: str) -> bool:
        with self._tx() as db:
            gone = db.execute(f"DELETE FROM {table} WHERE id = ?", (id,)).rowcount
            db.execute("DELETE FROM docs WHERE item_id = ?", (id,))
        return gone > 0

    def delete_short(self, id: str) -> bool:
        return self._delete("short", id)

    # -- near-term --

    def add_loop(self, loop: OpenLoop, vector: np.ndarray) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO near(id, intent, topic, trigger_type, trigger_value, expires_at, "
                "status, closed_at, metadata, created_at, occurred_at) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    loop.id,
                    loop.intent,
                    loop.topic,
                    loop.trigger_type,
                    loop.trigger_value,
                    _ts(loop.expires_at),
                    loop.status,
                    _ts(loop.closed_at),
                    json.dumps(loop.metadata),
                    _ts(loop.created_at),
                    _ts(loop.occurred_at),
                ),
            )
            self._index_doc(db, loop, loop.intent, loop.status == "open", vector)

    @staticmethod
    def _loop(row: sqlite3.Row) -> OpenLoop:
        return OpenLoop(
            id=row["id"],
            intent=row["intent"],
            topic=row["topic"],
            trigger_type=row["trigger_type"],
            trigger_value=row["trigger_value"],
            expires_at=to_datetime(row["expires_at"]),
            status=row["status"],
            closed_at=to_datetime(row["closed_at"]),
            metadata=_loads(row["metadata"]),
            created_at=to_datetime(row["created_at"]),
            occurred_at=to_datetime(row["occurred_at"]),
        )

    def get_loop(self, id: str) -> OpenLoop | None:
        row = self._reader().execute("SELECT * FROM near WHERE id = ?", (id,)).fetchone()
        return None if row is None else self._loop(row)

    def list_loops(self, status: str | None, limit: int, offset: int) -> list[OpenLoop]:
        sql, args = "SELECT * FROM near", []
        if status:
            sql, args = sql + " WHERE status = ?", [status]
        rows = self._reader().execute(
            sql + " ORDER BY id DESC LIMIT ? OFFSET ?", (*args, limit, offset)
        )
        return [self._loop(r) for r in rows]

    def update_loop(self, loop: OpenLoop) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE near SET status = ?, closed_at = ?, expires_at = ?, topic = ? WHERE id = ?",
                (loop.status, _ts(loop.closed_at), _ts(loop.expires_at), loop.topic, loop.id),
            )
            self._set_active(db, loop.id, loop.status == "open", loop.topic)

    def delete_loop(self, id: str) -> bool:
        return self._delete("near", id)

    # -- long-term --

    def add_fact(self, fact: LongFact, vector: np.ndarray) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO long(id, content, topic, category, evidence_count, first_seen, "
                "last_confirmed, status, supersedes, superseded_by, derived_from, metadata, "
                "created_at, occurred_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    fact.id,
                    fact.content,
                    fact.topic,
                    fact.category,
                    fact.evidence_count,
                    _ts(fact.first_seen),
                    _ts(fact.last_confirmed),
                    fact.status,
                    fact.supersedes,
                    fact.superseded_by,
                    json.dumps(fact.derived_from),
                    json.dumps(fact.metadata),
                    _ts(fact.created_at),
                    _ts(fact.occurred_at),
                ),
            )
            self._index_doc(db, fact, fact.content, fact.status != "superseded", vector)

    @staticmethod
    def _fact(row: sqlite3.Row) -> LongFact:
        return LongFact(
            id=row["id"],
            content=row["content"],
            topic=row["topic"],
            category=row["category"],
            evidence_count=row["evidence_count"],
            first_seen=to_datetime(row["first_seen"]),
            last_confirmed=to_datetime(row["last_confirmed"]),
            status=row["status"],
            supersedes=row["supersedes"],
            superseded_by=row["superseded_by"],
            derived_from=_loads(row["derived_from"]),
            metadata=_loads(row["metadata"]),
            created_at=to_datetime(row["created_at"]),
            occurred_at=to_datetime(row["occurred_at"]),
        )

    def get_fact(self, id: str) -> LongFact | None:
        row = self._reader().execute("SELECT * FROM long WHERE id = ?", (id,)).fetchone()
        return None if row is None else self._fact(row)

    def list_facts(self, status: str | None, limit: int, offset: int) -> list[LongFact]:
        sql, args = "SELECT * FROM long", []
        if status:
            sql, args = sql + " WHERE status = ?", [status]
        rows = self._reader().execute(
            sql + " ORDER BY id DESC LIMIT ? OFFSET ?", (*args, limit, offset)
        )
        return [self._fact(r) for r in rows]

    def update_fact(self, fact: LongFact) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE long SET content = ?, topic = ?, category = ?, evidence_count = ?, "
                "last_confirmed = ?, status = ?, supersedes = ?, superseded_by = ?, "
                "derived_from = ?, metadata = ? WHERE id = ?",
                (
                    fact.content,
                    fact.topic,
                    fact.category,
                    fact.evidence_count,
                    _ts(fact.last_confirmed),
                    fact.status,
                    fact.supersedes,
                    fact.superseded_by,
                    json.dumps(fact.derived_from),
                    json.dumps(fact.metadata),
                    fact.id,
                ),
            )
            self._set_active(db, fact.id, fact.status != "superseded", fact.topic)

    # -- journal --

    def add_journal(self, events: list[JournalEvent]) -> None:
        with self._tx() as db:
            db.executemany(
                "INSERT INTO journal(id, content, role, session_id, redactions, topic, metadata, "
                "created_at, occurred_at) VALUES (?,?,?,?,?,?,?,?,?)",
                [
                    (
                        e.id,
                        e.content,
                        e.role,
                        e.session_id,
                        e.redactions,
                        e.topic,
                        json.dumps(e.metadata),
                        _ts(e.created_at),
                        _ts(e.occurred_at),
                    )
                    for e in events
                ],
            )

    @staticmethod
    def _journal(r: sqlite3.Row) -> JournalEvent:
        return JournalEvent(
            id=r["id"],
            content=r["content"],
            role=r["role"],
            session_id=r["session_id"],
            redactions=r["redactions"],
            topic=r["topic"],
            metadata=json.loads(r["metadata"]),
            created_at=to_datetime(r["created_at"]),
            occurred_at=to_datetime(r["occurred_at"]),
        )

    def list_journal(self, limit: int, offset: int) -> list[JournalEvent]:
        rows = self._reader().execute(
            "SELECT * FROM journal ORDER BY seq DESC LIMIT ? OFFSET ?", (limit, offset)
        )
        return [self._journal(r) for r in rows]

    # -- briefs and forget flags --

    def add_brief(self, brief: Brief) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO briefs(id, summary, promote_hints, completed_intents, created_at, "
                "noise) VALUES (?,?,?,?,?,?)",
                (
                    brief.id,
                    brief.summary,
                    json.dumps(brief.promote_hints),
                    json.dumps(brief.completed_intents),
                    _ts(brief.created_at),
                    json.dumps(brief.noise),
                ),
            )

    @staticmethod
    def _brief(r: sqlite3.Row) -> Brief:
        return Brief(
            id=r["id"],
            summary=r["summary"],
            promote_hints=json.loads(r["promote_hints"]),
            completed_intents=json.loads(r["completed_intents"]),
            noise=json.loads(r["noise"]),
            created_at=to_datetime(r["created_at"]),
        )

    def list_briefs(self, limit: int, offset: int) -> list[Brief]:
        rows = self._reader().execute(
            "SELECT * FROM briefs ORDER BY id DESC LIMIT ? OFFSET ?", (limit, offset)
        )
        return [self._brief(r) for r in rows]

    def add_flag(self, flag: ForgetFlag) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO forget_flags(id, fact_id, reason, status, created_at) "
                "VALUES (?,?,?,?,?)",
                (flag.id, flag.fact_id, flag.reason, flag.status, _ts(flag.created_at)),
            )

    def list_flags(self, status: str | None) -> list[ForgetFlag]:
        sql, args = "SELECT * FROM forget_flags", []
        if status:
            sql, args = sql + " WHERE status = ?", [status]
        rows = self._reader().execute(sql + " ORDER BY id", args)
        return [
            ForgetFlag(
                id=r["id"],
                fact_id=r["fact_id"],
                reason=r["reason"],
                status=r["status"],
                created_at=to_datetime(r["created_at"]),
            )
            for r in rows
        ]

    def get_records(self, ids: list[str]) -> dict[str, Record]:
        out: dict[str, Record] = {}
        db = self._reader()
        by_table: dict[str, list[str]] = {}
        for i in ids:
            table = _TIER_TABLE.get(i[:1])
            if table:
                by_table.setdefault(table, []).append(i)
        convert = {"short": self._short, "near": self._loop, "long": self._fact}
        for table, wanted in by_table.items():
            for start in range(0, len(wanted), 900):
                chunk = wanted[start : start + 900]
                rows = db.execute(
                    f"SELECT * FROM {table} WHERE id IN ({','.join('?' * len(chunk))})", chunk
                )
                for r in rows:
                    out[r["id"]] = convert[table](r)
        return out

    # -- maintenance --

    def counts(self) -> dict[str, int]:
        db = self._reader()
        out = {}
        for table in ("short", "near", "long", "journal", "briefs", "forget_flags"):
            out[table] = db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        return out

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                total += p.stat().st_size
        return total

    def iter_texts(self, batch: int) -> Iterator[list[tuple[str, str]]]:
        db = self._reader()
        last = 0
        while True:
            rows = db.execute(
                "SELECT d.rowid, d.item_id, f.content FROM docs d "
                "JOIN docs_fts f ON f.rowid = d.rowid WHERE d.rowid > ? ORDER BY d.rowid LIMIT ?",
                (last, batch),
            ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield [(r[1], r[2]) for r in rows]

    def set_vectors(self, ids: list[str], vectors: np.ndarray) -> None:
        with self._tx() as db:
            db.executemany(
                "UPDATE docs SET vec = ? WHERE item_id = ?",
                [(blob(v), i) for i, v in zip(ids, vectors, strict=True)],
            )
            db.execute("UPDATE counters SET value = value + 1 WHERE name = 'vec_generation'")
