"""The PostgreSQL store: one named store's rows in a database shared by many.

``PostgresStore`` is the ``Store`` protocol over the rows of one store id.
It owns the records (the CRUD of each tier, meta, edges, maintenance) and
composes the other parts over the backend's ``Database`` (its pool):
``Search`` (the recall primitives, over in-memory mirrors), ``RunLog`` and
``Consolidation`` (a run's inputs, its advisory lock, its changes) and
``Purger``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

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
from halls.store.postgres import rows
from halls.store.postgres.consolidation import AdvisoryLock, Consolidation, RunLog
from halls.store.postgres.db import Database, dicts, translated
from halls.store.postgres.journal import JournalText, tokens_of
from halls.store.postgres.purge import TABLES, Purger
from halls.store.postgres.scopes import ScopeTable
from halls.store.postgres.search import Search
from halls.store.rowmap import marks

# The supersession chain of a fact, both ways, in one statement.
_CHAIN = f"""
    WITH RECURSIVE
        older(id, depth) AS (
            SELECT %(id)s::text, 0
            UNION SELECT l.supersedes, o.depth - 1 FROM halls.long l JOIN older o ON l.id = o.id
            WHERE l.store = %(store)s AND l.supersedes IS NOT NULL AND o.depth > -10000
        ),
        newer(id, depth) AS (
            SELECT %(id)s::text, 0
            UNION SELECT l.superseded_by, n.depth + 1 FROM halls.long l JOIN newer n ON l.id = n.id
            WHERE l.store = %(store)s AND l.superseded_by IS NOT NULL AND n.depth < 10000
        ),
        chain(id, depth) AS (SELECT id, depth FROM older UNION SELECT id, depth FROM newer)
    SELECT f.* FROM ({rows.FACTS} WHERE l.store = %(store)s) f
    JOIN (SELECT id, MIN(depth) AS depth FROM chain GROUP BY id) c ON c.id = f.id
    ORDER BY c.depth
"""

# Where the text of a store's rows lives, for holds(): (table, columns).
_TEXT_COLUMNS = (
    ("meta", "value"),
    ("short", "content || ' ' || metadata"),
    ("near", "intent || ' ' || metadata"),
    ("long", "content || ' ' || metadata"),
    ("journal", "content || ' ' || metadata"),
    ("docs", "content"),
    ("briefs", "summary || promote_hints || completed_intents || noise"),
    ("forget_flags", "reason"),
    ("runs", "notes || COALESCE(error, '')"),
    (
        "run_actions",
        "reason || COALESCE(before, '') || COALESCE(after, '') || COALESCE(undo, '') "
        "|| COALESCE(engine_note, '')",
    ),
)


@translated
class PostgresStore(ComposedStore):
    def __init__(self, db: Database, store: int, name: str) -> None:
        self.name = name
        self._db = db
        self._id = store
        self._mirrors = Search(db, store)
        self._search = self._mirrors
        self._journal = JournalText(db, store)
        self._runs = RunLog(db, store, name)
        self._advisory = AdvisoryLock(db, store)
        self._lock = self._advisory
        self._cons = Consolidation(db, store, self._runs)
        self._purger = Purger(db, store)
        self._scope_table = ScopeTable(db, store)
        self._scopes = self._scope_table

    def close(self) -> None:
        self._advisory.close()

    def _one(self, sql: str, args: Sequence[Any]) -> dict[str, Any] | None:
        with self._db.read() as conn:
            return dicts(conn).execute(sql, args).fetchone()

    def _all(self, sql: str, args: Sequence[Any]) -> list[dict[str, Any]]:
        with self._db.read() as conn:
            return dicts(conn).execute(sql, args).fetchall()

    # -- meta --

    def get_meta(self, key: str) -> str | None:
        row = self._one(
            "SELECT value FROM halls.meta WHERE store = %s AND key = %s", (self._id, key)
        )
        return None if row is None else row["value"]

    def set_meta(self, key: str, value: str) -> None:
        with self._db.tx(self._id) as conn:
            conn.execute(
                "INSERT INTO halls.meta(store, key, value) VALUES (%s, %s, %s) "
                "ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
                (self._id, key, value),
            )

    # -- short-term --

    def add_short(
        self,
        entries: list[ShortEntry],
        vectors: np.ndarray,
        edges: Sequence[Edge] = (),
        turn: ScopeTurn | None = None,
    ) -> None:
        if not entries:
            return
        with self._db.tx(self._id) as conn:
            rows.insert_short(conn, self._id, entries, list(vectors))
            if edges:
                rows.add_edges(conn, self._id, edges)
            self._scope_table.take(conn, turn)

    def get_short(self, id: str) -> ShortEntry | None:
        row = self._one("SELECT * FROM halls.short WHERE store = %s AND id = %s", (self._id, id))
        return None if row is None else rowmap.short_of(row)

    def list_short(self, limit: int, offset: int) -> list[ShortEntry]:
        found = self._all(
            "SELECT * FROM halls.short WHERE store = %s ORDER BY id DESC LIMIT %s OFFSET %s",
            (self._id, limit, offset),
        )
        return rowmap.each(found, rowmap.short_of)

    def _delete(self, table: str, id: str) -> bool:
        with self._db.tx(self._id) as conn:
            return rows.delete_rows(conn, self._id, table, [id]) > 0

    def delete_short(self, id: str) -> bool:
        return self._delete("short", id)

    def update_short(self, entry: ShortEntry, vector: np.ndarray | None) -> bool:
        with self._db.tx(self._id) as conn:
            changed = conn.execute(
                "UPDATE halls.short SET content = %s, topic = %s, pinned = %s, metadata = %s, "
                "expires_at = %s, importance = %s WHERE store = %s AND id = %s",
                (
                    entry.content,
                    entry.topic,
                    entry.pinned,
                    json.dumps(entry.metadata),
                    rowmap.ts(entry.expires_at),
                    entry.importance,
                    self._id,
                    entry.id,
                ),
            ).rowcount
            if not changed:
                return False
            if vector is None:
                conn.execute(
                    "UPDATE halls.docs SET topic = %s WHERE store = %s AND item_id = %s",
                    (entry.topic, self._id, entry.id),
                )
                return True
            # Every process's mirrors read new rows and logged deletions, never
            # rewritten ones: the search row is replaced (a new seq), keeping
            # its state.
            old = conn.execute(
                "DELETE FROM halls.docs WHERE store = %s AND item_id = %s "
                "RETURNING seq, active, access_count, last_accessed",
                (self._id, entry.id),
            ).fetchone()
            assert old is not None, "a short entry always has its search row"
            rows.log_deleted(conn, self._id, [old[0]])
            rows.index_docs(conn, self._id, [(entry, entry.content, old[1])], [vector])
            conn.execute(
                "UPDATE halls.docs SET access_count = %s, last_accessed = %s "
                "WHERE store = %s AND item_id = %s",
                (old[2], old[3], self._id, entry.id),
            )
            return True

    # -- near-term --

    def add_loop(self, loop: OpenLoop, vector: np.ndarray, turn: ScopeTurn | None = None) -> None:
        with self._db.tx(self._id) as conn:
            rows.insert_loop(conn, self._id, loop, vector)
            self._scope_table.take(conn, turn)

    def get_loop(self, id: str) -> OpenLoop | None:
        row = self._one("SELECT * FROM halls.near WHERE store = %s AND id = %s", (self._id, id))
        return None if row is None else rowmap.loop_of(row)

    def list_loops(self, status: str | None, limit: int, offset: int) -> list[OpenLoop]:
        found = self._all(
            "SELECT * FROM halls.near WHERE store = %s AND (%s::text IS NULL OR status = %s) "
            "ORDER BY id DESC LIMIT %s OFFSET %s",
            (self._id, status or None, status, limit, offset),
        )
        return rowmap.each(found, rowmap.loop_of)

    def update_loop(self, loop: OpenLoop) -> None:
        with self._db.tx(self._id) as conn:
            conn.execute(
                "UPDATE halls.near SET status = %s, closed_at = %s, expires_at = %s, topic = %s "
                "WHERE store = %s AND id = %s",
                (
                    loop.status,
                    rowmap.ts(loop.closed_at),
                    rowmap.ts(loop.expires_at),
                    loop.topic,
                    self._id,
                    loop.id,
                ),
            )
            rows.set_active(conn, self._id, [loop.id], loop.status == "open", loop.topic)

    def delete_loop(self, id: str) -> bool:
        return self._delete("near", id)

    # -- long-term --

    def add_fact(self, fact: LongFact, vector: np.ndarray) -> None:
        with self._db.tx(self._id) as conn:
            rows.insert_fact(conn, self._id, fact, vector)

    def get_fact(self, id: str) -> LongFact | None:
        row = self._one(f"{rows.FACTS} WHERE l.store = %s AND l.id = %s", (self._id, id))
        return None if row is None else rowmap.fact_of(row)

    def list_facts(
        self, status: str | None, limit: int, offset: int, category: str | None = None
    ) -> list[LongFact]:
        found = self._all(
            f"{rows.FACTS} WHERE l.store = %s AND (%s::text IS NULL OR l.status = %s) "
            "AND (%s::text IS NULL OR l.category = %s) ORDER BY l.id DESC LIMIT %s OFFSET %s",
            (self._id, status or None, status, category or None, category, limit, offset),
        )
        return rowmap.each(found, rowmap.fact_of)

    def update_fact(self, fact: LongFact) -> None:
        with self._db.tx(self._id) as conn:
            rows.update_fact(conn, self._id, fact)

    def fact_chain(self, id: str) -> list[LongFact]:
        found = self._all(_CHAIN, {"id": id, "store": self._id})  # type: ignore[arg-type]
        return rowmap.each(found, rowmap.fact_of)

    # -- journal --

    def add_journal(self, events: list[JournalEvent], turn: ScopeTurn | None = None) -> None:
        with self._db.tx(self._id) as conn, conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO halls.journal(store, {rowmap.JOURNAL_COLUMNS}, tokens) "
                f"VALUES ({marks(13, '%s')})",
                [
                    (self._id, *rowmap.journal_values(e), tokens)
                    for e, tokens in zip(events, tokens_of(events), strict=True)
                ],
            )
            self._scope_table.take(conn, turn)

    def get_journal(self, id: str) -> JournalEvent | None:
        row = self._one("SELECT * FROM halls.journal WHERE store = %s AND id = %s", (self._id, id))
        return None if row is None else rowmap.journal_of(row)

    def list_journal(self, limit: int, offset: int) -> list[JournalEvent]:
        found = self._all(
            "SELECT * FROM halls.journal WHERE store = %s ORDER BY seq DESC LIMIT %s OFFSET %s",
            (self._id, limit, offset),
        )
        return rowmap.each(found, rowmap.journal_of)

    # -- briefs and forget flags --

    def add_brief(self, brief: Brief) -> None:
        with self._db.tx(self._id) as conn:
            conn.execute(
                f"INSERT INTO halls.briefs(store, {rowmap.BRIEF_COLUMNS}) "
                f"VALUES ({marks(7, '%s')})",
                (self._id, *rowmap.brief_values(brief)),
            )

    def get_brief(self, id: str) -> Brief | None:
        row = self._one("SELECT * FROM halls.briefs WHERE store = %s AND id = %s", (self._id, id))
        return None if row is None else rowmap.brief_of(row)

    def list_briefs(self, limit: int, offset: int) -> list[Brief]:
        found = self._all(
            "SELECT * FROM halls.briefs WHERE store = %s ORDER BY id DESC LIMIT %s OFFSET %s",
            (self._id, limit, offset),
        )
        return [rowmap.brief_of(r) for r in found]

    def add_flag(self, flag: ForgetFlag) -> None:
        with self._db.tx(self._id) as conn:
            conn.execute(
                f"INSERT INTO halls.forget_flags(store, {rowmap.FLAG_COLUMNS}) "
                f"VALUES ({marks(8, '%s')})",
                (self._id, *rowmap.flag_values(flag)),
            )

    def list_flags(self, status: str | None) -> list[ForgetFlag]:
        found = self._all(
            "SELECT * FROM halls.forget_flags WHERE store = %s "
            "AND (%s::text IS NULL OR status = %s) ORDER BY id",
            (self._id, status or None, status),
        )
        return [rowmap.flag_of(r) for r in found]

    def get_records(self, ids: list[str]) -> dict[str, Record]:
        by_table: dict[str, list[str]] = {}
        for i in ids:
            table = rows.TIER_TABLE.get(i[:1])
            if table:
                by_table.setdefault(table, []).append(i)
        out: dict[str, Record] = {}
        with self._db.read() as conn:
            cur = dicts(conn)
            for table, wanted in by_table.items():
                if table == "long":
                    sql = f"{rows.FACTS} WHERE l.store = %s AND l.id = ANY(%s)"
                    found = cur.execute(sql, (self._id, wanted))
                    out.update((f.id, f) for f in rowmap.each(found, rowmap.fact_of))
                    continue
                convert = rowmap.short_of if table == "short" else rowmap.loop_of
                sql = f"SELECT * FROM halls.{table} WHERE store = %s AND id = ANY(%s)"
                found = cur.execute(sql, (self._id, wanted))
                out.update((r.id, r) for r in rowmap.each(found, convert))
        return out

    # -- reinforcement --

    def reinforce(self, touches: Mapping[str, tuple[int, float]]) -> None:
        if not touches:
            return
        # Under the store's row lock like every write (so no two transactions
        # lock its search rows in opposite orders); each row's update adds, so
        # the recalls of several processes add up.
        with self._db.tx(self._id) as conn, conn.cursor() as cur:
            cur.executemany(
                "UPDATE halls.docs SET access_count = access_count + %s, "
                "last_accessed = GREATEST(COALESCE(last_accessed, 0), %s) "
                "WHERE store = %s AND item_id = %s",
                [(n, when, self._id, i) for i, (n, when) in touches.items()],
            )

    def retention(self, ids: Sequence[str]) -> dict[str, Retention]:
        if not ids:
            return {}
        found = self._all(
            "SELECT item_id, access_count, last_accessed FROM halls.docs "
            "WHERE store = %s AND item_id = ANY(%s) AND access_count > 0",
            (self._id, list(ids)),
        )
        return {r["item_id"]: Retention(r["access_count"], r["last_accessed"]) for r in found}

    def edges(self, ids: Sequence[str], kinds: Sequence[str] | None = None) -> list[Edge]:
        with self._db.read() as conn:
            return rows.edges_of(conn, self._id, ids, kinds)

    def adjacent(self, ids: Sequence[str], kinds: Sequence[str], limit: int) -> list[Edge]:
        with self._db.read() as conn:
            return rows.adjacent(conn, self._id, ids, kinds, limit)

    # -- maintenance --

    def counts(self) -> dict[str, int]:
        names = ("short", "near", "long", "journal", "briefs", "forget_flags")
        sql = ", ".join(f"(SELECT COUNT(*) FROM halls.{t} WHERE store = %(s)s)" for t in names)
        with self._db.read() as conn:
            row = conn.execute(f"SELECT {sql}", {"s": self._id}).fetchone()
        assert row is not None
        return dict(zip(names, (int(n) for n in row), strict=True))

    def index_bytes(self) -> int:
        return self._mirrors.index_bytes()

    def size_bytes(self) -> int:
        """The bytes of this store's rows (the database's own overhead is shared)."""
        parts = [
            f"(SELECT COALESCE(SUM(pg_column_size(t.*)), 0) FROM halls.{t} t WHERE store = %(s)s)"
            for t in ("meta", *TABLES, "runs")
        ]
        parts.append("(SELECT pg_column_size(s.*) FROM halls.stores s WHERE id = %(s)s)")
        with self._db.read() as conn:
            row = conn.execute(f"SELECT {' + '.join(parts)}", {"s": self._id}).fetchone()
        return int(row[0] or 0) if row else 0

    def holds(self, value: str) -> bool:
        """Whether ``value`` is in any row of this store, or (where this process
        can read them: the same host, enough rights) in the tables' files."""
        found = " OR ".join(
            f"EXISTS (SELECT 1 FROM halls.{t} WHERE store = %(s)s AND strpos({c}, %(v)s) > 0)"
            for t, c in _TEXT_COLUMNS
        )
        with self._db.read() as conn:
            row = conn.execute(f"SELECT {found}", {"s": self._id, "v": value}).fetchone()
            if row and row[0]:
                return True
            files = _relation_files(conn)
        data = value.encode()
        return any(data in f.read_bytes() for f in files)

    def iter_texts(self, batch: int) -> Iterator[list[tuple[str, str]]]:
        last = 0
        while True:
            with self._db.read() as conn:
                found = conn.execute(
                    "SELECT seq, item_id, content FROM halls.docs WHERE store = %s AND seq > %s "
                    "ORDER BY seq LIMIT %s",
                    (self._id, last, batch),
                ).fetchall()
            if not found:
                return
            last = found[-1][0]
            yield [(r[1], r[2]) for r in found]

    def set_vectors(self, ids: list[str], vectors: np.ndarray) -> None:
        with self._db.tx(self._id) as conn:
            with conn.cursor() as cur:
                cur.executemany(
                    "UPDATE halls.docs SET vec = %s WHERE store = %s AND item_id = %s",
                    [
                        (np.asarray(v, dtype=np.float32), self._id, i)
                        for i, v in zip(ids, vectors, strict=True)
                    ],
                )
            conn.execute(
                "UPDATE halls.stores SET vec_generation = vec_generation + 1 WHERE id = %s",
                (self._id,),
            )


def _relation_files(conn: Any) -> list[Path]:
    """The files of halls' tables, their TOAST tables and indexes, where readable here."""
    try:
        base = Path(conn.execute("SELECT current_setting('data_directory')").fetchone()[0])
    except Exception:  # no right to read the setting: a managed or remote server
        return []
    rels = conn.execute(
        "SELECT pg_relation_filepath(c.oid) FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'halls' "
        "UNION SELECT pg_relation_filepath(c.reltoastrelid) FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'halls' AND c.reltoastrelid <> 0"
    ).fetchall()
    out = []
    for (rel,) in rels:
        if rel is None:
            continue
        first = base / rel
        try:
            segments = [first, *sorted(first.parent.glob(f"{first.name}.[0-9]*"))]
            out += [p for p in segments if p.is_file() and os.access(p, os.R_OK)]
        except OSError:  # another host's path, or not ours to read
            continue
    return out
