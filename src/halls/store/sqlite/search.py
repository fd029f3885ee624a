"""The recall primitives of the SQLite store: BM25 over FTS5, exact dense
search, the neighbours of hits, and word document counts.

A part of ``SQLiteStore`` that reads through the shared ``Database``'s
per-thread readers. Filters are applied here, in SQL, so that the service
above never sees a record the request excluded.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from halls.models import SEARCH_TIERS, Match, SearchFilter, Written
from halls.store.memindex.bm25 import TextIndex
from halls.store.memindex.terms import TOKENS, tokenised_rows
from halls.store.memindex.vectors import Snapshot, VectorIndex, locate
from halls.store.sqlite import snapshots
from halls.store.sqlite.db import Database, chunks, marks

log = logging.getLogger(__name__)


def _narrows(filt: SearchFilter) -> bool:
    """True when the filter is selective enough to let SQLite pre-filter the rows."""
    return (
        filt.topic is not None
        or filt.category is not None
        or filt.since is not None
        or filt.until is not None
    )


def _tuples(db: sqlite3.Connection, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The rows of a query as plain tuples, fetched at once.

    A search reads a few hundred rows by rowid or id: a ``sqlite3.Row`` per
    row, and a step of the Python loop per row, cost more than the lookups.
    """
    cur = db.cursor()
    cur.row_factory = None
    return cur.execute(sql, args).fetchall()


def _fts_query(terms: Sequence[str]) -> str:
    # Each term quoted so FTS5 operators in user text are plain words.
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class Search:
    """The search-index methods of the Store protocol, over one ``Database``."""

    def __init__(self, db: Database, path: Path | None = None) -> None:
        self._db = db
        # The in-memory mirrors of the search rows, built on first use (read
        # back from their snapshots beside the store file when they fit).
        self._index: VectorIndex | None = None
        self._texts: TextIndex | None = None
        keep = path is not None and not db.encrypted  # no plaintext beside a cipher
        suffix = [Path(f"{path}{s}") if keep else None for s in snapshots.SUFFIXES]
        self.vector_file = snapshots.Persisted(suffix[0], "vectors")
        self.text_file = snapshots.Persisted(suffix[1], "text")
        # One per mirror: the two load beside each other (a search asks both at once).
        self._opening = {"text": threading.Lock(), "vectors": threading.Lock()}
        db.after_commit.append(self._after_commit)

    def files(self) -> list[Path]:
        """The snapshot files this store may leave beside its own."""
        return [f.path for f in (self.vector_file, self.text_file) if f.path is not None]

    def _after_commit(self) -> None:
        held = [f for f in (self.vector_file, self.text_file) if f.path and f.path.exists()]
        if held:
            deleted = self._snapshot().deleted
            for f in held:
                f.stale(deleted)

    def close(self) -> None:
        """Write each mirror's snapshot (caught up first if the store deleted rows since)."""
        for persisted, mirror in ((self.vector_file, self._index), (self.text_file, self._texts)):
            persisted.closed = True
            if mirror is None:
                continue
            try:
                if not persisted.save(mirror, self._snapshot, blocking=True):
                    if isinstance(mirror, VectorIndex):
                        self._vector_index(mirror.dim)
                    else:
                        self._text_index()
                    persisted.save(mirror, self._snapshot, blocking=True)
            except Exception:  # a cache: the next start rebuilds what was not written
                log.exception("could not write the %s snapshot of a store", persisted.kind)

    def _reader(self) -> sqlite3.Connection:
        return self._db.reader()

    def index_bytes(self) -> int:
        return sum(i.nbytes for i in (self._index, self._texts) if i is not None)

    @staticmethod
    def _filter_sql(filt: SearchFilter, alias: str = "d") -> tuple[str, list[Any]]:
        clauses = [f"{alias}.tier IN ({','.join('?' * len(filt.tiers))})"]
        args: list[Any] = list(filt.tiers)
        if not filt.include_superseded:
            clauses.append(f"{alias}.active = 1")
        if filt.topic is not None:
            clauses.append(f"{alias}.topic = ?")
            args.append(filt.topic)
        if filt.category is not None:
            clauses.append(f"{alias}.item_id IN (SELECT id FROM long WHERE category = ?)")
            args.append(filt.category)
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
        if _narrows(filt) or set(filt.tiers) != set(SEARCH_TIERS):
            # A selective filter: let SQLite join and filter every match.
            joined = db.execute(
                "SELECT d.item_id, d.tier, bm25(docs_fts) AS s FROM docs_fts "
                "JOIN docs d ON d.rowid = docs_fts.rowid "
                f"WHERE docs_fts MATCH ? AND {where} ORDER BY s LIMIT ?",
                (match, *args, limit),
            )
            # FTS5's bm25() is negative, lower is better; flip it so higher is better.
            return [Match(r[0], r[1], -float(r[2])) for r in joined]
        # Otherwise rank every match, then filter the best few: joining every
        # match to docs (thousands for common words at 100k rows) costs twice
        # the ranking itself. Widen until enough survive or every match was seen.
        # The ranking is the in-memory mirror of FTS5's index (textindex.py:
        # the same scores, ~20x faster) unless a word is a phrase to FTS5.
        tokens = TOKENS.of(terms)
        index = self._text_index() if all(len(tokens[t]) == 1 for t in terms) else None
        pool = max(limit * 2, 64)
        while True:
            if index is not None:
                rowids, scores = index.search([tokens[t][0] for t in terms], pool)
            else:
                rows = db.execute(
                    "SELECT rowid, bm25(docs_fts) AS s FROM docs_fts "
                    "WHERE docs_fts MATCH ? ORDER BY s LIMIT ?",
                    (match, pool),
                ).fetchall()
                rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
                scores = np.fromiter((-r[1] for r in rows), dtype=np.float64, count=len(rows))
            found = self._matches(db, rowids, scores, where, args)
            if len(found) >= limit or len(rowids) < pool:
                return found[:limit]
            pool *= 4

    def _snapshot(self) -> Snapshot:
        """Where the search index rows stand, from one statement (one snapshot)."""
        row = (
            self._reader()
            .execute(
                "SELECT (SELECT value FROM counters WHERE name = 'vec_generation'), "
                "(SELECT COALESCE(MAX(seq), 0) FROM deleted_rows), "
                "(SELECT MIN(seq) FROM deleted_rows), "
                "(SELECT COALESCE(MAX(rowid), 0) FROM docs)"
            )
            .fetchone()
        )
        deleted = int(row[1])
        oldest = deleted + 1 if row[2] is None else int(row[2])
        return Snapshot(int(row[0]), deleted, oldest, int(row[3]))

    def _gone(self, after: int, upto: int) -> np.ndarray:
        """The rowids deleted by deletion-log entries in (after, upto]."""
        cur = self._reader().execute(
            "SELECT row FROM deleted_rows WHERE seq > ? AND seq <= ?", (after, upto)
        )
        return np.fromiter((r[0] for r in cur), dtype=np.int64)

    def _text_index(self) -> TextIndex:
        now = self._snapshot()
        with self._opening["text"]:
            if self._texts is None:
                texts = TextIndex()
                self.text_file.load(texts, now, self._check_text, {"kind": "text"})
                self._texts = texts
        db = self._reader()

        def load(after: int) -> Iterable[tuple[int, str]]:
            return db.execute(
                "SELECT rowid, content FROM docs_fts WHERE rowid > ? ORDER BY rowid", (after,)
            )

        self._texts.refresh(now, load, self._gone)
        self.text_file.after_refresh(self._texts, now, self._snapshot)
        return self._texts

    def _vector_index(self, dim: int) -> VectorIndex:
        now = self._snapshot()
        with self._opening["vectors"]:
            if self._index is None or self._index.dim != dim:
                index = VectorIndex(dim)
                expect = {"kind": "vectors", "dim": dim}
                drop = partial(self._drop_vectors, index)
                self.vector_file.load(index, now, self._check_vectors, expect, drop)
                self._index = index
            index = self._index  # this search's, even if a failed check drops it meanwhile
        db = self._reader()

        def load(after: int) -> Iterable[tuple[int, bytes]]:
            return db.execute(
                "SELECT rowid, vec FROM docs WHERE rowid > ? ORDER BY rowid", (after,)
            )

        index.refresh(now, load, self._gone)
        self.vector_file.after_refresh(index, now, self._snapshot)
        return index

    def _drop_vectors(self, index: VectorIndex) -> None:
        """Forget ``index`` (its snapshot failed a check): the next search rebuilds it."""
        with self._opening["vectors"]:
            if self._index is index:
                self._index = None

    def _sampled(
        self, sql: str, label: dict[str, Any], rowids: np.ndarray
    ) -> tuple[np.ndarray, dict[int, Any]] | None:
        """Positions of a sample of a snapshot's rows and the store's values of them;
        None when the rowids cannot be the store's (not ascending, past its last)."""
        rows = int(label["rows"])
        ids = rowids[:rows]
        if rows and (np.any(ids[1:] <= ids[:-1]) or ids[-1] > int(label["max_rowid"])):
            return None
        pos = snapshots.sample(rows)
        wanted = [int(r) for r in ids[pos]]
        return pos, dict(_tuples(self._reader(), sql.format(marks(wanted)), wanted))

    def _check_vectors(
        self, label: dict[str, Any], arrays: dict[str, np.ndarray], now: Snapshot
    ) -> bool:
        found = self._sampled(
            "SELECT rowid, vec FROM docs WHERE rowid IN ({})", label, arrays["rowids"]
        )
        if found is None:
            return False
        pos, stored = found
        deletions = now.deleted > int(label["deleted"])
        for p, r in zip(pos.tolist(), arrays["rowids"][pos].tolist(), strict=True):
            held = stored.get(r)
            if (held is None and not deletions) or (
                held is not None and held != arrays["matrix"][p].tobytes()
            ):
                return False
        return True

    def _check_text(
        self, label: dict[str, Any], arrays: dict[str, np.ndarray], now: Snapshot
    ) -> bool:
        found = self._sampled(
            "SELECT rowid, content FROM docs_fts WHERE rowid IN ({})", label, arrays["rowids"]
        )
        if found is None:
            return False
        pos, stored = found
        rowids = arrays["rowids"][pos]
        if len(stored) < len(pos) and now.deleted == int(label["deleted"]):
            return False
        _, docs, counts = tokenised_rows(sorted(stored.items()))
        lengths = dict.fromkeys(stored, 0.0)
        for d, c in zip(docs.tolist(), counts.tolist(), strict=True):
            lengths[d] += c
        return all(
            lengths[r] == arrays["lengths"][p]
            for p, r in zip(pos.tolist(), rowids.tolist(), strict=True)
            if r in lengths
        )

    def vector_search(self, vector: np.ndarray, filt: SearchFilter, limit: int) -> list[Match]:
        if not filt.tiers:
            return []
        index = self._vector_index(len(vector))
        scan = index.scan(vector)
        rowids = scan.rowids
        if len(rowids) == 0:
            return []
        where, args = self._filter_sql(filt)
        db = self._reader()
        if _narrows(filt):
            # A selective filter: score only the rows it allows.
            sql = f"SELECT rowid FROM docs d WHERE {where} ORDER BY rowid"
            allowed = np.fromiter((r[0] for r in db.execute(sql, args)), dtype=np.int64)
            pos = locate(rowids, allowed)[1]
            order, scores = scan.best(limit, pos)
            return self._matches(db, rowids[order], scores, "1", [])
        # Otherwise take the best candidates and drop the filtered-out ones,
        # widening the pool until enough survive or every row was seen. A
        # quarter more than asked: every row read costs, and with the default
        # filter (every tier, active rows) few are filtered out.
        pool = max(limit + limit // 4, 64)
        while True:
            order, scores = scan.best(pool)
            found = self._matches(db, rowids[order], scores, where, args)
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
        for chunk in chunks(ids):
            sql = (
                f"SELECT d.rowid, d.item_id, d.tier FROM docs d "
                f"WHERE d.rowid IN ({marks(chunk)}) AND {where}"
            )
            found.update((r[0], (r[1], r[2])) for r in _tuples(db, sql, (*chunk, *args)))
        return [
            Match(found[r][0], found[r][1], float(s))
            for r, s in zip(ids, scores, strict=True)
            if r in found
        ]

    def _rowids(self, db: sqlite3.Connection, ids: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk in chunks(ids):
            sql = f"SELECT item_id, rowid FROM docs WHERE item_id IN ({marks(chunk)})"
            out.update(_tuples(db, sql, chunk))
        return out

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        rowids = self._rowids(self._reader(), ids)
        found = self._vectors_of(sorted(rowids.values()))
        # In write order, whatever the order asked: callers stack these, and
        # one order keeps their sums (and so rankings) reproducible.
        ordered = sorted(rowids.items(), key=lambda item: item[1])
        return {i: found[r] for i, r in ordered if r in found}

    def neighbours(self, ids: Sequence[str], radius: int, filt: SearchFilter) -> list[Written]:
        if not ids or not filt.tiers:
            return []
        db = self._reader()
        anchors = self._rowids(db, ids).values()
        # docs.rowid is AUTOINCREMENT: it is the store's write sequence, never reused.
        wanted = sorted({a + d for a in anchors for d in range(-radius, radius + 1)})
        where, args = self._filter_sql(filt)
        rows: list[tuple[Any, ...]] = []
        for chunk in chunks(wanted):
            sql = (
                "SELECT d.rowid, d.item_id, d.tier, d.occurred_at FROM docs d "
                f"WHERE d.rowid IN ({marks(chunk)}) AND {where}"
            )
            rows.extend(_tuples(db, sql, (*chunk, *args)))
        vectors = self._vectors_of([r[0] for r in rows])
        return [Written(r[1], r[2], r[0], r[3], vectors[r[0]]) for r in rows if r[0] in vectors]

    def _vectors_of(self, rowids: list[int]) -> dict[int, np.ndarray]:
        """The stored vectors of rows, from the in-memory index where it is current.

        A row that is neither in the index nor stored any more (deleted
        meanwhile, by another process) has none.
        """
        ask = np.asarray(rowids, dtype=np.int64)
        out: dict[int, np.ndarray] = {}
        known = np.zeros(len(ask), dtype=bool)
        index = self._index
        if index is not None and len(ask):
            known, found = index.lookup(ask, self._snapshot().generation)
            out.update(zip(ask[known].tolist(), found, strict=True))
        # Rows written since the index last refreshed: their blobs.
        missing = ask[~known].tolist()
        db = self._reader()
        for chunk in chunks(missing):
            sql = f"SELECT rowid, vec FROM docs WHERE rowid IN ({marks(chunk)})"
            out.update((r, np.frombuffer(v, dtype=np.float32)) for r, v in db.execute(sql, chunk))
        return out

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
        known: dict[str, int] | None = getattr(self._db.local, "df", None)
        if known is None or self._db.local.df_version != version or len(known) > 50_000:
            known = self._db.local.df = {}
            self._db.local.df_version = version
            self._db.local.df_total = db.execute("SELECT COUNT(*) FROM docs").fetchone()[0]
        missing = [t for t in dict.fromkeys(terms) if t not in known]
        # A word that indexes as one token is looked up in FTS5's vocabulary
        # by that token; anything else (no token, or several: a phrase) is
        # counted as text_search would match it.
        tokens = TOKENS.of(missing)
        single = {t: tokens[t][0] for t in missing if len(tokens[t]) == 1}
        wanted = sorted(set(single.values()))
        held: dict[str, int] = {}
        for chunk in chunks(wanted):
            sql = f"SELECT term, doc FROM docs_vocab WHERE term IN ({marks(chunk)})"
            held.update(db.execute(sql, chunk).fetchall())
        for term in missing:
            if term in single:
                known[term] = held.get(single[term], 0)
            else:
                known[term] = db.execute(
                    "SELECT COUNT(*) FROM docs_fts WHERE docs_fts MATCH ?", (_fts_query([term]),)
                ).fetchone()[0]
        return self._db.local.df_total, {t: known[t] for t in terms}
