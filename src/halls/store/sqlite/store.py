"""The SQLite store: one file per named store, WAL, one writer, many readers.

``SQLiteStore`` is the ``Store`` protocol over one file. It owns the
records (the CRUD of each tier, meta, edges, maintenance) and composes the
other parts, each a plain class over the same ``Database``: ``Search`` (the
recall primitives), ``RunLog`` and ``Consolidation`` (a run's inputs, lock
and changes) and ``Purger`` (the one true deletion).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from halls.models import (
    Brief,
    Edge,
    ForgetFlag,
    JournalEvent,
    LongFact,
    OpenLoop,
    Record,
    Retention,
    ShortEntry,
)
from halls.store import rowmap
from halls.store.base import ScopeTurn
from halls.store.composed import ComposedStore
from halls.store.sqlite import rows
from halls.store.sqlite.consolidation import Consolidation, ConsolidationLock, RunLog
from halls.store.sqlite.db import Database, blob, chunks, marks, translated, ts
from halls.store.sqlite.journal import JournalText, index_events
from halls.store.sqlite.purge import Purger
from halls.store.sqlite.schema import migrate
from halls.store.sqlite.scopes import ScopeTable
from halls.store.sqlite.search import Search

# The supersession chain of a fact, both ways, in one statement.
_CHAIN = f"""
    WITH RECURSIVE
        older(id, depth) AS (
            SELECT ?, 0
            UNION SELECT l.supersedes, o.depth - 1 FROM long l JOIN older o ON l.id = o.id
            WHERE l.supersedes IS NOT NULL AND o.depth > -10000
        ),
        newer(id, depth) AS (
            SELECT ?, 0
            UNION SELECT l.superseded_by, n.depth + 1 FROM long l JOIN newer n ON l.id = n.id
            WHERE l.superseded_by IS NOT NULL AND n.depth < 10000
        ),
        chain(id, depth) AS (SELECT id, depth FROM older UNION SELECT id, depth FROM newer)
    SELECT f.* FROM ({rows.FACTS}) f
    JOIN (SELECT id, MIN(depth) AS depth FROM chain GROUP BY id) c ON c.id = f.id
    ORDER BY c.depth
"""


@translated
class SQLiteStore(ComposedStore):
    def __init__(
        self, path: Path, name: str, synchronous: str = "FULL", key: str | None = None
    ) -> None:
        self.name = name
        self.path = path
        self._db = Database(path, synchronous, key)
        try:
            migrate(self._db.writer)
        except BaseException:
            self._db.close()  # a store that cannot be opened keeps no connection
            raise
        self._indexes = Search(self._db, path)
        self._search = self._indexes
        self._journal = JournalText(self._db)
        self._runs = RunLog(self._db, name)
        self._lock = ConsolidationLock(Path(f"{path}.consolidate.lock"))
        self._cons = Consolidation(self._db, self._runs)
        self._purger = Purger(self._db)
        self._scopes = ScopeTable(self._db)

    def close(self) -> None:
        try:
            self._indexes.close()  # their snapshots, for the next start
        finally:
            self._db.close()

    # -- meta --

    def get_meta(self, key: str) -> str | None:
        row = self._db.reader().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        with self._db.tx() as db:
            db.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # -- short-term --

    def add_short(
        self,
        entries: list[ShortEntry],
        vectors: np.ndarray,
        edges: Sequence[Edge] = (),
        turn: ScopeTurn | None = None,
    ) -> None:
        with self._db.tx() as db:
            for entry, vector in zip(entries, vectors, strict=True):
                rows.insert_short(db, entry, vector)
            if edges:
                rows.add_edges(db, edges)
            ScopeTable.take(db, turn)

    def get_short(self, id: str) -> ShortEntry | None:
        row = self._db.reader().execute("SELECT * FROM short WHERE id = ?", (id,)).fetchone()
        return None if row is None else rowmap.short_of(row)

    def list_short(self, limit: int, offset: int) -> list[ShortEntry]:
        found = self._db.reader().execute(
            "SELECT * FROM short ORDER BY id DESC LIMIT ? OFFSET ?", (limit, offset)
        )
        return rowmap.each(found, rowmap.short_of)

    def delete_short(self, id: str) -> bool:
        return self._erase("short", id)

    def update_short(self, entry: ShortEntry, vector: np.ndarray | None) -> bool:
        with self._db.tx() as db:
            changed = db.execute(
                "UPDATE short SET content = ?, topic = ?, pinned = ?, metadata = ?, "
                "expires_at = ?, importance = ? WHERE id = ?",
                (
                    entry.content,
                    entry.topic,
                    int(entry.pinned),
                    json.dumps(entry.metadata),
                    ts(entry.expires_at),
                    entry.importance,
                    entry.id,
                ),
            ).rowcount
            if not changed:
                return False
            if vector is None:
                db.execute("UPDATE docs SET topic = ? WHERE item_id = ?", (entry.topic, entry.id))
                return True
            # The in-memory indexes read new rows and logged deletions, never
            # rewritten ones: the search row is replaced, keeping its state.
            old = db.execute(
                "SELECT active, access_count, last_accessed FROM docs WHERE item_id = ?",
                (entry.id,),
            ).fetchone()
            db.execute("DELETE FROM docs WHERE item_id = ?", (entry.id,))
            rows.index_doc(db, entry, entry.content, bool(old[0]), vector)
            db.execute(
                "UPDATE docs SET access_count = ?, last_accessed = ? WHERE item_id = ?",
                (old[1], old[2], entry.id),
            )
            return True

    # -- near-term --

    def add_loop(self, loop: OpenLoop, vector: np.ndarray, turn: ScopeTurn | None = None) -> None:
        with self._db.tx() as db:
            db.execute(
                f"INSERT INTO near({rowmap.LOOP_COLUMNS}) VALUES ({marks(13)})",
                rowmap.loop_values(loop),
            )
            rows.index_doc(db, loop, loop.intent, loop.status == "open", vector)
            ScopeTable.take(db, turn)

    def get_loop(self, id: str) -> OpenLoop | None:
        row = self._db.reader().execute("SELECT * FROM near WHERE id = ?", (id,)).fetchone()
        return None if row is None else rowmap.loop_of(row)

    def list_loops(self, status: str | None, limit: int, offset: int) -> list[OpenLoop]:
        sql, args = "SELECT * FROM near", []
        if status:
            sql, args = sql + " WHERE status = ?", [status]
        found = self._db.reader().execute(
            sql + " ORDER BY id DESC LIMIT ? OFFSET ?", (*args, limit, offset)
        )
        return rowmap.each(found, rowmap.loop_of)

    def update_loop(self, loop: OpenLoop) -> None:
        with self._db.tx() as db:
            db.execute(
                "UPDATE near SET status = ?, closed_at = ?, expires_at = ?, topic = ? WHERE id = ?",
                (loop.status, ts(loop.closed_at), ts(loop.expires_at), loop.topic, loop.id),
            )
            rows.set_active(db, loop.id, loop.status == "open", loop.topic)

    def delete_loop(self, id: str) -> bool:
        return self._erase("near", id)

    def _erase(self, table: str, id: str) -> bool:
        """Delete one record so that no byte of it stays in the file or the WAL."""
        with self._db.tx() as db:
            gone = rows.delete_rows(db, table, [id]) > 0
            if gone:
                # An FTS5 delete only adds a tombstone: the terms stay in the
                # older segments (lowercased, prefix-compressed: a word's
                # tail) until they are merged. secure_delete (Database.connect)
                # zeroes the pages the merge frees.
                db.execute("INSERT INTO docs_fts(docs_fts) VALUES ('optimize')")
        if gone:
            self._db.truncate_wal()
        return gone

    # -- long-term --

    def add_fact(self, fact: LongFact, vector: np.ndarray) -> None:
        with self._db.tx() as db:
            rows.insert_fact(db, fact, vector)

    def get_fact(self, id: str) -> LongFact | None:
        row = self._db.reader().execute(f"{rows.FACTS} WHERE l.id = ?", (id,)).fetchone()
        return None if row is None else rowmap.fact_of(row)

    def list_facts(
        self, status: str | None, limit: int, offset: int, category: str | None = None
    ) -> list[LongFact]:
        where, args = ["1"], []
        if status:
            where.append("l.status = ?")
            args.append(status)
        if category:
            where.append("l.category = ?")
            args.append(category)
        found = self._db.reader().execute(
            f"{rows.FACTS} WHERE {' AND '.join(where)} ORDER BY l.id DESC LIMIT ? OFFSET ?",
            (*args, limit, offset),
        )
        return rowmap.each(found, rowmap.fact_of)

    def update_fact(self, fact: LongFact) -> None:
        with self._db.tx() as db:
            rows.update_fact(db, fact)

    def fact_chain(self, id: str) -> list[LongFact]:
        found = self._db.reader().execute(_CHAIN, (id, id)).fetchall()
        return rowmap.each(found, rowmap.fact_of)

    # -- journal --

    def add_journal(self, events: list[JournalEvent], turn: ScopeTurn | None = None) -> None:
        with self._db.tx() as db:
            db.executemany(
                f"INSERT INTO journal({rowmap.JOURNAL_COLUMNS}) VALUES ({marks(11)})",
                [rowmap.journal_values(e) for e in events],
            )
            index_events(db, events)
            ScopeTable.take(db, turn)

    def get_journal(self, id: str) -> JournalEvent | None:
        row = self._db.reader().execute("SELECT * FROM journal WHERE id = ?", (id,)).fetchone()
        return None if row is None else rowmap.journal_of(row)

    def list_journal(self, limit: int, offset: int) -> list[JournalEvent]:
        found = self._db.reader().execute(
            "SELECT * FROM journal ORDER BY seq DESC LIMIT ? OFFSET ?", (limit, offset)
        )
        return rowmap.each(found, rowmap.journal_of)

    # -- briefs and forget flags --

    def add_brief(self, brief: Brief) -> None:
        with self._db.tx() as db:
            db.execute(
                f"INSERT INTO briefs({rowmap.BRIEF_COLUMNS}) VALUES ({marks(6)})",
                rowmap.brief_values(brief),
            )

    def get_brief(self, id: str) -> Brief | None:
        row = self._db.reader().execute("SELECT * FROM briefs WHERE id = ?", (id,)).fetchone()
        return None if row is None else rowmap.brief_of(row)

    def list_briefs(self, limit: int, offset: int) -> list[Brief]:
        found = self._db.reader().execute(
            "SELECT * FROM briefs ORDER BY id DESC LIMIT ? OFFSET ?", (limit, offset)
        )
        return [rowmap.brief_of(r) for r in found]

    def add_flag(self, flag: ForgetFlag) -> None:
        with self._db.tx() as db:
            db.execute(
                f"INSERT INTO forget_flags({rowmap.FLAG_COLUMNS}) VALUES ({marks(7)})",
                rowmap.flag_values(flag),
            )

    def list_flags(self, status: str | None) -> list[ForgetFlag]:
        sql, args = "SELECT * FROM forget_flags", []
        if status:
            sql, args = sql + " WHERE status = ?", [status]
        found = self._db.reader().execute(sql + " ORDER BY id", args)
        return [rowmap.flag_of(r) for r in found]

    def get_records(self, ids: list[str]) -> dict[str, Record]:
        out: dict[str, Record] = {}
        db = self._db.reader()
        by_table: dict[str, list[str]] = {}
        for i in ids:
            table = rows.TIER_TABLE.get(i[:1])
            if table:
                by_table.setdefault(table, []).append(i)
        for table, wanted in by_table.items():
            for chunk in chunks(wanted):
                if table == "long":
                    sql = f"{rows.FACTS} WHERE l.id IN ({marks(chunk)})"
                    out.update(
                        (f.id, f) for f in rowmap.each(db.execute(sql, chunk), rowmap.fact_of)
                    )
                    continue
                convert = rowmap.short_of if table == "short" else rowmap.loop_of
                sql = f"SELECT * FROM {table} WHERE id IN ({marks(chunk)})"
                out.update((r.id, r) for r in rowmap.each(db.execute(sql, chunk), convert))
        return out

    # -- reinforcement --

    def reinforce(self, touches: Mapping[str, tuple[int, float]]) -> None:
        if not touches:
            return
        with self._db.tx() as db:
            db.executemany(
                "UPDATE docs SET access_count = access_count + ?, "
                "last_accessed = MAX(COALESCE(last_accessed, 0), ?) WHERE item_id = ?",
                [(n, when, i) for i, (n, when) in touches.items()],
            )

    def retention(self, ids: Sequence[str]) -> dict[str, Retention]:
        out: dict[str, Retention] = {}
        db = self._db.reader()
        for chunk in chunks(list(ids)):
            sql = (
                "SELECT item_id, access_count, last_accessed FROM docs "
                f"WHERE item_id IN ({marks(chunk)}) AND access_count > 0"
            )
            out.update((r[0], Retention(r[1], r[2])) for r in db.execute(sql, chunk))
        return out

    # -- edges --

    def edges(self, ids: Sequence[str], kinds: Sequence[str] | None = None) -> list[Edge]:
        return rows.edges_of(self._db.reader(), ids, kinds)

    def adjacent(self, ids: Sequence[str], kinds: Sequence[str], limit: int) -> list[Edge]:
        return rows.adjacent(self._db.reader(), ids, kinds, limit)

    # -- maintenance --

    def counts(self) -> dict[str, int]:
        db = self._db.reader()
        out = {}
        for table in ("short", "near", "long", "journal", "briefs", "forget_flags"):
            out[table] = db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        return out

    def index_bytes(self) -> int:
        return self._indexes.index_bytes()

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.files() if p.exists())

    def files(self) -> list[Path]:
        """The files that hold this store's data (the database, its WAL, its index snapshots)."""
        own = [Path(str(self.path) + suffix) for suffix in ("", "-wal", "-shm")]
        return own + self._indexes.files()

    def backup(self, target: Path) -> None:
        """SQLite's online backup API: a consistent copy while writers go on.

        Read from its own connection in one step, inside one read
        transaction: under WAL the store's writer goes on meanwhile, and the
        copy is the database as of that instant (WAL pages included).
        """
        source = sqlite3.connect(self.path)
        try:
            copy = sqlite3.connect(target)
            try:
                source.backup(copy)
            finally:
                copy.close()
        finally:
            source.close()

    def holds(self, value: str) -> bool:
        # Reads every file whole: a purge's proof, never on a request's path.
        data = value.encode()
        if any(data in p.read_bytes() for p in self.files() if p.exists()):
            return True
        # Encrypted, the files hold ciphertext only: look in every decrypted
        # row instead (a purge's secure_delete and VACUUM leave no free page).
        return self._db.encrypted and self._db.rows_hold(data)

    def iter_texts(self, batch: int) -> Iterator[list[tuple[str, str]]]:
        db = self._db.reader()
        last = 0
        while True:
            found = db.execute(
                "SELECT d.rowid, d.item_id, f.content FROM docs d "
                "JOIN docs_fts f ON f.rowid = d.rowid WHERE d.rowid > ? ORDER BY d.rowid LIMIT ?",
                (last, batch),
            ).fetchall()
            if not found:
                return
            last = found[-1][0]
            yield [(r[1], r[2]) for r in found]

    def set_vectors(self, ids: list[str], vectors: np.ndarray) -> None:
        with self._db.tx() as db:
            db.executemany(
                "UPDATE docs SET vec = ? WHERE item_id = ?",
                [(blob(v), i) for i, v in zip(ids, vectors, strict=True)],
            )
            db.execute("UPDATE counters SET value = value + 1 WHERE name = 'vec_generation'")
