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
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from halls.models import (
    SEARCH_TIERS,
    Brief,
    ForgetFlag,
    JournalEvent,
    LongFact,
    OpenLoop,
    Record,
    SearchFilter,
    ShortEntry,
    to_datetime,
)
from halls.store.base import Match, Written
from halls.store.sqlite_consolidate import SQLiteConsolidation
from halls.store.sqlite_schema import migrate
from halls.store.sqlite_terms import TOKENS
from halls.store.vecindex import VectorIndex

_TIER_TABLE = {"s": "short", "n": "near", "l": "long"}


def _ts(value: Any) -> float | None:
    return None if value is None else value.timestamp()


def _blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def _loads(text: str) -> Any:
    # Most records carry no metadata: skip the JSON parser for that (a
    # search converts a hundred records).
    if text == "{}":
        return {}
    if text == "[]":
        return []
    return json.loads(text)


def _fts_query(terms: Sequence[str]) -> str:
    # Each term quoted so FTS5 operators in user text are plain words.
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class SQLiteStore(SQLiteConsolidation):
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
            (item.id, item.tier, item.topic, _ts(item.occurred_at), int(active), _blob(vector)),
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

    def list_journal(self, limit: int, offset: int) -> list[JournalEvent]:
        rows = self._reader().execute(
            "SELECT * FROM journal ORDER BY seq DESC LIMIT ? OFFSET ?", (limit, offset)
        )
        return [
            JournalEvent(
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
            for r in rows
        ]

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

    def list_briefs(self, limit: int, offset: int) -> list[Brief]:
        rows = self._reader().execute(
            "SELECT * FROM briefs ORDER BY id DESC LIMIT ? OFFSET ?", (limit, offset)
        )
        return [
            Brief(
                id=r["id"],
                summary=r["summary"],
                promote_hints=json.loads(r["promote_hints"]),
                completed_intents=json.loads(r["completed_intents"]),
                noise=json.loads(r["noise"]),
                created_at=to_datetime(r["created_at"]),
            )
            for r in rows
        ]

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

    # -- recall primitives --

    @staticmethod
    def _filter_sql(filt: SearchFilter, alias: str = "d") -> tuple[str, list[Any]]:
        clauses = [f"{alias}.tier IN ({','.join('?' * len(filt.tiers))})"]
        args: list[Any] = list(filt.tiers)
        if not filt.include_superseded:
            clauses.append(f"{alias}.active = 1")
        if filt.topic is not None:
            clauses.append(f"{alias}.topic = ?")
            args.append(filt.topic)
        if filt.since is not None:
            clauses.append(f"{alias}.occurred_at >= ?")
            args.append(filt.since)
        if filt.until is not None:
            clauses.append(f"{alias}.occurred_at <= ?")
            args.append(filt.until)
        return " AND ".join(clauses), args

    def text_search(self, terms: list[str], filt: SearchFilter, limit: int) -> list[Match]:
        if not terms or not filt.tiers:
            return []
        where, args = self._filter_sql(filt)
        db = self._reader()
        match = _fts_query(terms)
        if filt.narrows or set(filt.tiers) != set(SEARCH_TIERS):
            # A selective filter: let SQLite join and filter every match.
            joined = db.execute(
                "SELECT d.item_id, d.tier, bm25(docs_fts) AS s FROM docs_fts "
                "JOIN docs d ON d.rowid = docs_fts.rowid "
                f"WHERE docs_fts MATCH ? AND {where} ORDER BY s LIMIT ?",
                (match, *args, limit),
            )
            # FTS5's bm25() is negative, lower is better; flip it so higher is better.
            return [Match(r[0], r[1], -float(r[2])) for r in joined]
        # Otherwise rank in FTS5 alone, then filter the best few: joining every
        # match to docs (thousands for common words at 100k rows) costs twice
        # the ranking itself. Widen until enough survive or every match was seen.
        pool = max(limit * 2, 64)
        while True:
            rows = db.execute(
                "SELECT rowid, bm25(docs_fts) AS s FROM docs_fts "
                "WHERE docs_fts MATCH ? ORDER BY s LIMIT ?",
                (match, pool),
            ).fetchall()
            rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            scores = np.fromiter((-r[1] for r in rows), dtype=np.float64, count=len(rows))
            found = self._matches(db, rowids, scores, where, args)
            if len(found) >= limit or len(rows) < pool:
                return found[:limit]
            pool *= 4

    def _vector_index(self, dim: int) -> VectorIndex:
        if self._index is None or self._index.dim != dim:
            self._index = VectorIndex(dim)
        db = self._reader()
        # One statement, so both values come from the same snapshot.
        generation, max_rowid = db.execute(
            "SELECT (SELECT value FROM counters WHERE name = 'vec_generation'), "
            "(SELECT COALESCE(MAX(rowid), 0) FROM docs)"
        ).fetchone()

        def load(after: int) -> Iterable[tuple[int, bytes]]:
            return db.execute(
                "SELECT rowid, vec FROM docs WHERE rowid > ? ORDER BY rowid", (after,)
            )

        self._index.refresh(generation, max_rowid, load)
        return self._index

    def vector_search(self, vector: np.ndarray, filt: SearchFilter, limit: int) -> list[Match]:
        if not filt.tiers:
            return []
        index = self._vector_index(len(vector))
        rowids, scores = index.scores(vector)
        if len(rowids) == 0:
            return []
        where, args = self._filter_sql(filt)
        db = self._reader()
        if filt.narrows:
            # A selective filter: score only the rows it allows.
            sql = f"SELECT rowid FROM docs d WHERE {where} ORDER BY rowid"
            allowed = np.fromiter((r[0] for r in db.execute(sql, args)), dtype=np.int64)
            pos = np.searchsorted(rowids, allowed)
            inside = pos < len(rowids)
            pos, allowed = pos[inside], allowed[inside]
            pos = pos[rowids[pos] == allowed]
            order = pos[VectorIndex.top(scores[pos], limit)]
            return self._matches(db, rowids[order], scores[order], "1", [])
        # Otherwise take the best candidates and drop the filtered-out ones,
        # widening the pool until enough survive or every row was seen.
        pool = max(limit * 2, 64)
        while True:
            order = VectorIndex.top(scores, pool)
            found = self._matches(db, rowids[order], scores[order], where, args)
            if len(found) >= limit or pool >= len(rowids):
                return found[:limit]
            pool *= 4

    @staticmethod
    def _matches(
        db: sqlite3.Connection, rowids: np.ndarray, scores: np.ndarray, where: str, args: list[Any]
    ) -> list[Match]:
        if len(rowids) == 0:
            return []
        found: dict[int, tuple[str, str]] = {}
        ids = [int(r) for r in rowids]
        for start in range(0, len(ids), 900):
            chunk = ids[start : start + 900]
            sql = (
                f"SELECT d.rowid, d.item_id, d.tier FROM docs d "
                f"WHERE d.rowid IN ({','.join('?' * len(chunk))}) AND {where}"
            )
            for r in db.execute(sql, (*chunk, *args)):
                found[r[0]] = (r[1], r[2])
        return [
            Match(found[r][0], found[r][1], float(s))
            for r, s in zip(ids, scores, strict=True)
            if r in found
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
                [(_blob(v), i) for i, v in zip(ids, vectors, strict=True)],
            )
            db.execute("UPDATE counters SET value = value + 1 WHERE name = 'vec_generation'")

    # -- recall context --

    def around(self, ids: list[str], radius: int, filt: SearchFilter) -> list[Written]:
        if not ids or not filt.tiers:
            return []
        db = self._reader()
        anchors: list[int] = []
        for start in range(0, len(ids), 900):
            chunk = ids[start : start + 900]
            sql = f"SELECT rowid FROM docs WHERE item_id IN ({','.join('?' * len(chunk))})"
            anchors.extend(r[0] for r in db.execute(sql, chunk))
        # docs.rowid is AUTOINCREMENT, so it is the write order and is never reused.
        wanted = sorted({a + d for a in anchors for d in range(-radius, radius + 1)})
        where, args = self._filter_sql(filt)
        rows: list[tuple[int, str, str, float, bytes]] = []
        # Plain tuples (no sqlite3.Row per row) and one buffer for all the
        # vectors: a few hundred rows per search make the per-row cost count.
        cur = db.cursor()
        cur.row_factory = None
        for start in range(0, len(wanted), 900):
            rows_chunk = wanted[start : start + 900]
            sql = (
                "SELECT d.rowid, d.item_id, d.tier, d.occurred_at, d.vec FROM docs d "
                f"WHERE d.rowid IN ({','.join('?' * len(rows_chunk))}) AND {where}"
            )
            rows.extend(cur.execute(sql, (*rows_chunk, *args)))
        if len({len(r[4]) for r in rows}) != 1:
            # Empty, or vectors of two sizes (a re-embedding half done).
            return [Written(r[1], r[2], r[0], r[3], np.frombuffer(r[4], np.float32)) for r in rows]
        vectors = np.frombuffer(b"".join(r[4] for r in rows), dtype=np.float32)
        vectors = vectors.reshape(len(rows), -1)
        return [Written(r[1], r[2], r[0], r[3], v) for r, v in zip(rows, vectors, strict=True)]

    def term_counts(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        if not terms:
            return 0, {}
        db = self._reader()
        # Counts change only when something is committed, which PRAGMA
        # data_version tells this connection (a commit by the writer or by
        # another process): until then, counts read before are still exact.
        # A commit landing during this call changes the version too, so the
        # next call starts afresh.
        version = db.execute("PRAGMA data_version").fetchone()[0]
        known: dict[str, int] | None = getattr(self._local, "df", None)
        if known is None or self._local.df_version != version or len(known) > 50_000:
            known = self._local.df = {}
            self._local.df_version = version
            self._local.df_total = db.execute("SELECT COUNT(*) FROM docs").fetchone()[0]
        missing = [t for t in dict.fromkeys(terms) if t not in known]
        # A word that indexes as one token is looked up in FTS5's vocabulary
        # by that token; anything else (no token, or several: a phrase) is
        # counted as text_search would match it.
        tokens = TOKENS.of(missing)
        single = {t: tokens[t][0] for t in missing if len(tokens[t]) == 1}
        wanted = sorted(set(single.values()))
        held: dict[str, int] = {}
        for start in range(0, len(wanted), 900):
            chunk = wanted[start : start + 900]
            sql = f"SELECT term, doc FROM docs_vocab WHERE term IN ({','.join('?' * len(chunk))})"
            held.update(db.execute(sql, chunk).fetchall())
        for term in missing:
            if term in single:
                known[term] = held.get(single[term], 0)
            else:
                known[term] = db.execute(
                    "SELECT COUNT(*) FROM docs_fts WHERE docs_fts MATCH ?", (_fts_query([term]),)
                ).fetchone()[0]
        return self._local.df_total, {t: known[t] for t in terms}
