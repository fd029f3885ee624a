"""The recall primitives of the PostgreSQL store, over in-memory mirrors.

halls ranks on FTS5's BM25 and exact cosine; PostgreSQL's ``ts_rank`` is
not BM25 and an HNSW index is approximate. So each process keeps the same
in-memory indexes the SQLite store does (``memindex``): BM25 postings
tokenised by the same FTS5 tokenizer, and the exact float32 vectors. They
follow ``halls.docs`` through the store's write sequence before *every*
search (one small read of the store's row: the last seq, the deletion
log's head, the vector generation), so a write committed through any
process is found by the next search of every other. Filters are applied
by PostgreSQL on the few candidates (or, when a filter is selective, on
the store's rows first), so a search never returns a record the request
excluded, and never one deleted meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from halls.models import Match, SearchFilter, Written
from halls.store.memindex.bm25 import Postings, TextIndex, View
from halls.store.memindex.terms import TOKENS, token_sequences
from halls.store.memindex.vectors import Snapshot, VectorIndex, locate
from halls.store.postgres.db import Database, VectorBytes, vector_oid
from halls.store.postgres.rows import Conn


def _narrows(filt: SearchFilter) -> bool:
    """True when the filter is selective enough to ask PostgreSQL for its rows first."""
    return (
        filt.topic is not None
        or filt.category is not None
        or filt.since is not None
        or filt.until is not None
    )


class Search:
    def __init__(self, db: Database, store: int) -> None:
        self._db = db
        self._store = store
        self._vectors: VectorIndex | None = None
        self._texts: TextIndex | None = None

    def index_bytes(self) -> int:
        """What this process's mirrors of the store hold in memory."""
        return sum(i.nbytes for i in (self._vectors, self._texts) if i is not None)

    # -- following the store --

    def _snapshot(self, conn: Conn) -> Snapshot:
        row = conn.execute(
            "SELECT vec_generation, last_deleted, "
            "(SELECT MIN(seq) FROM halls.deleted_rows WHERE store = s.id), last_seq "
            "FROM halls.stores s WHERE id = %s",
            (self._store,),
        ).fetchone()
        if row is None:  # the store was deleted under this handle
            return Snapshot(-1, 0, 1, 0)
        deleted = int(row[1])
        oldest = deleted + 1 if row[2] is None else int(row[2])
        return Snapshot(int(row[0]), deleted, oldest, int(row[3]))

    def _gone(self, conn: Conn) -> Any:
        def gone(after: int, upto: int) -> np.ndarray:
            cur = conn.execute(
                "SELECT row FROM halls.deleted_rows WHERE store = %s AND seq > %s AND seq <= %s",
                (self._store, after, upto),
            )
            return np.fromiter((r[0] for r in cur), dtype=np.int64)

        return gone

    def _text_view(self, conn: Conn) -> View:
        if self._texts is None:
            self._texts = TextIndex()

        def load(after: int) -> Iterable[tuple[int, str]]:
            return conn.execute(
                "SELECT seq, content FROM halls.docs WHERE store = %s AND seq > %s ORDER BY seq",
                (self._store, after),
            ).fetchall()

        self._texts.refresh(self._snapshot(conn), load, self._gone(conn))
        return self._texts.view()

    def _vector_index(self, conn: Conn, dim: int, snapshot: Snapshot) -> VectorIndex:
        if self._vectors is None or self._vectors.dim != dim:
            self._vectors = VectorIndex(dim)

        def load(after: int) -> Iterable[tuple[int, bytes]]:
            cur = conn.cursor(binary=True)
            cur.adapters.register_loader(vector_oid(conn), VectorBytes)
            # Streamed: a whole store's vectors are never held twice.
            return cur.stream(
                "SELECT seq, vec FROM halls.docs WHERE store = %s AND seq > %s ORDER BY seq",
                (self._store, after),
            )

        self._vectors.refresh(snapshot, load, self._gone(conn))
        return self._vectors

    # -- filters --

    def _where(self, filt: SearchFilter) -> tuple[str, list[Any]]:
        clauses = ["d.store = %s", "d.tier = ANY(%s)"]
        args: list[Any] = [self._store, list(filt.tiers)]
        if not filt.include_superseded:
            clauses.append("d.active")
        if filt.topic is not None:
            clauses.append("d.topic = %s")
            args.append(filt.topic)
        if filt.category is not None:
            clauses.append(
                "d.item_id IN (SELECT id FROM halls.long WHERE store = %s AND category = %s)"
            )
            args += [self._store, filt.category]
        if filt.since is not None:
            clauses.append("d.occurred_at >= %s")
            args.append(filt.since)
        if filt.until is not None:
            clauses.append("d.occurred_at <= %s")
            args.append(filt.until)
        return " AND ".join(clauses), args

    def _allowed(self, conn: Conn, filt: SearchFilter) -> np.ndarray:
        where, args = self._where(filt)
        cur = conn.execute(f"SELECT seq FROM halls.docs d WHERE {where} ORDER BY seq", args)
        return np.fromiter((r[0] for r in cur), dtype=np.int64)

    def _matches(
        self, conn: Conn, seqs: np.ndarray, scores: np.ndarray, filt: SearchFilter | None
    ) -> list[Match]:
        """Matches of the rows (best first) that exist and pass ``filt`` (None: no filter)."""
        if len(seqs) == 0:
            return []
        where, args = ("d.store = %s", [self._store]) if filt is None else self._where(filt)
        ids = [int(s) for s in seqs]
        found = {
            r[0]: (r[1], r[2])
            for r in conn.execute(
                f"SELECT d.seq, d.item_id, d.tier FROM halls.docs d "
                f"WHERE d.seq = ANY(%s) AND {where}",
                (ids, *args),
            )
        }
        return [
            Match(found[r][0], found[r][1], float(s))
            for r, s in zip(ids, scores, strict=True)
            if r in found
        ]

    # -- full text --

    def _phrase(self, conn: Conn, view: View, tokens: tuple[str, ...]) -> Postings:
        """The rows holding ``tokens`` in a row, as FTS5 matches a phrase, and how often."""
        candidates = view.holding_all(tokens)
        if len(candidates) == 0:
            return candidates, candidates
        seqs = view.rowids[candidates]
        texts = conn.execute(
            "SELECT seq, content FROM halls.docs WHERE store = %s AND seq = ANY(%s)",
            (self._store, seqs.tolist()),
        ).fetchall()
        sequences = token_sequences([(int(s), t) for s, t in texts])
        n = len(tokens)
        counts = np.zeros(len(candidates), dtype=np.int32)
        for i, seq in enumerate(seqs.tolist()):
            held = sequences.get(seq, ())
            counts[i] = sum(held[p : p + n] == tokens for p in range(len(held) - n + 1))
        hit = counts > 0
        return candidates[hit], counts[hit]

    def _terms(self, conn: Conn, view: View, terms: list[str]) -> list[Postings]:
        """One postings list per term, as FTS5 reads each quoted term (a word or a
        phrase); a term of no token (punctuation) holds no row."""
        tokens = TOKENS.of(terms)
        empty = np.zeros(0, dtype=np.int32)
        out = []
        for t in terms:
            words = tokens[t]
            if len(words) == 1:
                out.append(view.postings(words[0]))
            elif words:
                out.append(self._phrase(conn, view, words))
            else:
                out.append((empty, empty))
        return out

    def text_search(self, terms: list[str], filt: SearchFilter, limit: int) -> list[Match]:
        if not terms or not filt.tiers:
            return []
        with self._db.read() as conn:
            view = self._text_view(conn)
            postings = self._terms(conn, view, terms)
            if _narrows(filt):
                # A selective filter: rank only the rows it allows.
                allowed = locate(view.rowids, self._allowed(conn, filt))[1]
                seqs, scores = view.rank(postings, limit, allowed)
                return self._matches(conn, seqs, scores, None)
            # Otherwise rank every match, then filter the best few, widening
            # until enough survive or every match was seen.
            pool = max(limit * 2, 64)
            while True:
                seqs, scores = view.rank(postings, pool)
                found = self._matches(conn, seqs, scores, filt)
                if len(found) >= limit or len(seqs) < pool:
                    return found[:limit]
                pool *= 4

    def term_counts(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        if not terms:
            return 0, {}
        unique = list(dict.fromkeys(terms))
        with self._db.read() as conn:
            view = self._text_view(conn)
            held = dict(zip(unique, self._terms(conn, view, unique), strict=True))
        return view.rows, {t: len(held[t][0]) for t in terms}

    # -- dense --

    def vector_search(self, vector: np.ndarray, filt: SearchFilter, limit: int) -> list[Match]:
        if not filt.tiers:
            return []
        with self._db.read() as conn:
            index = self._vector_index(conn, len(vector), self._snapshot(conn))
            scan = index.scan(vector)
            rowids = scan.rowids
            if len(rowids) == 0:
                return []
            if _narrows(filt):
                pos = locate(rowids, self._allowed(conn, filt))[1]
                order, scores = scan.best(limit, pos)
                return self._matches(conn, rowids[order], scores, None)
            pool = max(limit * 2, 64)
            while True:
                order, scores = scan.best(pool)
                found = self._matches(conn, rowids[order], scores, filt)
                if len(found) >= limit or pool >= len(rowids):
                    return found[:limit]
                pool *= 4

    def _vectors_of(self, conn: Conn, seqs: list[int]) -> dict[int, np.ndarray]:
        """Stored vectors by seq: from the mirror where it is current, else from the rows."""
        ask = np.asarray(seqs, dtype=np.int64)
        out: dict[int, np.ndarray] = {}
        known = np.zeros(len(ask), dtype=bool)
        if self._vectors is not None and len(ask):
            known, found = self._vectors.lookup(ask, self._snapshot(conn).generation)
            out.update(zip(ask[known].tolist(), found, strict=True))
        missing = ask[~known].tolist()
        if missing:
            cur = conn.cursor(binary=True)
            cur.adapters.register_loader(vector_oid(conn), VectorBytes)
            for seq, blob in cur.execute(
                "SELECT seq, vec FROM halls.docs WHERE store = %s AND seq = ANY(%s)",
                (self._store, missing),
            ):
                out[seq] = np.frombuffer(blob, dtype=np.float32)
        return out

    def _seqs(self, conn: Conn, ids: Sequence[str]) -> dict[str, int]:
        return dict(
            conn.execute(
                "SELECT item_id, seq FROM halls.docs WHERE store = %s AND item_id = ANY(%s)",
                (self._store, list(ids)),
            ).fetchall()
        )

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        with self._db.read() as conn:
            seqs = self._seqs(conn, ids)
            found = self._vectors_of(conn, sorted(seqs.values()))
        # In write order, whatever the order asked (callers stack these).
        ordered = sorted(seqs.items(), key=lambda item: item[1])
        return {i: found[s] for i, s in ordered if s in found}

    def neighbours(self, ids: Sequence[str], radius: int, filt: SearchFilter) -> list[Written]:
        if not ids or not filt.tiers:
            return []
        with self._db.read() as conn:
            anchors = self._seqs(conn, ids).values()
            wanted = sorted({a + d for a in anchors for d in range(-radius, radius + 1)})
            where, args = self._where(filt)
            rows = conn.execute(
                "SELECT d.seq, d.item_id, d.tier, d.occurred_at FROM halls.docs d "
                f"WHERE d.seq = ANY(%s) AND {where} ORDER BY d.seq",
                (wanted, *args),
            ).fetchall()
            vectors = self._vectors_of(conn, [r[0] for r in rows])
        return [Written(r[1], r[2], r[0], r[3], vectors[r[0]]) for r in rows if r[0] in vectors]
