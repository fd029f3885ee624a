"""Full text over the PostgreSQL store's journal, ranked as FTS5 ranks it.

A part of ``PostgresStore`` (``JournalIndex``). Each event's tokens, as
FTS5's tokenizer makes them (``memindex.terms``), are stored beside it in
``halls.journal.tokens`` (empty for a ``private`` event) under a GIN index:
a search fetches the events holding a query token (array overlap, no
parser of PostgreSQL's in the way), and scores them here with FTS5's BM25
over the store's searchable events. The counts are read per search (one
pass over the store's journal rows): the journal is searched only when
asked for, and no process keeps a mirror of it.

Events written before the column existed have no tokens (NULL); the first
search of their store tokenises them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from halls.models import JournalEvent, Match, SearchFilter
from halls.store.memindex.bm25 import K1, B
from halls.store.memindex.terms import TOKENS, token_sequences
from halls.store.postgres.db import Database
from halls.store.postgres.rows import Conn

# FTS5's floor for a term held by half the rows or more (fts5_aux.c).
_MIN_IDF = 1e-6
# Old events tokenised per statement.
_BACKFILL = 1000


def tokens_of(events: Sequence[JournalEvent]) -> list[list[str]]:
    """Each event's tokens in order, as ``journal_fts`` would index it; none if private."""
    found = token_sequences(
        [(n, e.content) for n, e in enumerate(events) if e.visibility != "private"]
    )
    return [list(found.get(n, ())) for n in range(len(events))]


def _count(held: Sequence[str], phrase: tuple[str, ...]) -> int:
    """How often ``phrase`` (one token or several in a row) occurs in ``held``."""
    n = len(phrase)
    if n == 1:
        return held.count(phrase[0])
    return sum(1 for p in range(len(held) - n + 1) if tuple(held[p : p + n]) == phrase)


class JournalText:
    """The ``JournalIndex`` method over one store's rows of ``halls.journal``."""

    def __init__(self, db: Database, store: int) -> None:
        self._db = db
        self._store = store

    def _backfill(self) -> None:
        """Tokenise the events stored before tokens were (at most once per event)."""
        # A read first: the write transaction locks the store's row, and a
        # search must not queue behind writes when there is nothing to do.
        with self._db.read() as conn:
            waiting = conn.execute(
                "SELECT 1 FROM halls.journal WHERE store = %s AND tokens IS NULL LIMIT 1",
                (self._store,),
            ).fetchone()
        if waiting is None:
            return
        while True:
            with self._db.tx(self._store) as conn:
                rows = conn.execute(
                    "SELECT seq, content, visibility FROM halls.journal "
                    "WHERE store = %s AND tokens IS NULL LIMIT %s FOR UPDATE SKIP LOCKED",
                    (self._store, _BACKFILL),
                ).fetchall()
                if not rows:
                    return
                found = token_sequences([(s, c) for s, c, v in rows if v != "private"])
                conn.cursor().executemany(
                    "UPDATE halls.journal SET tokens = %s WHERE store = %s AND seq = %s",
                    [(list(found.get(s, ())), self._store, s) for s, _, _ in rows],
                )

    def journal_search(self, terms: list[str], filt: SearchFilter, limit: int) -> list[Match]:
        phrases = [p for p in (TOKENS.of(terms)[t] for t in terms) if p]
        if not phrases:
            return []
        self._backfill()
        wanted = sorted({t for p in phrases for t in p})
        with self._db.read() as conn:
            rows, total = self._stats(conn)
            found = conn.execute(
                "SELECT id, seq, tokens, topic, occurred_at FROM halls.journal "
                "WHERE store = %s AND visibility <> 'private' AND tokens && %s",
                (self._store, wanted),
            ).fetchall()
        if not rows or not found:
            return []
        # The statistics count every event holding a term, whatever the
        # filter (as FTS5 ranks before a join filters); the filter then
        # keeps the events it allows.
        counts = [[_count(r[2], p) for p in phrases] for r in found]
        held = [sum(1 for c in counts if c[i]) for i in range(len(phrases))]
        average = total / rows
        scored = []
        for r, tf in zip(found, counts, strict=True):
            if not _passes(r, filt):
                continue
            norm = K1 * (1.0 - B + B * len(r[2]) / average)
            score = 0.0
            for f, n in zip(tf, held, strict=True):
                if f:
                    idf = math.log((rows - n + 0.5) / (n + 0.5))
                    score += (idf if idf > 0.0 else _MIN_IDF) * (f * (K1 + 1.0)) / (f + norm)
            if score:
                scored.append((-score, r[1], r[0]))
        scored.sort()
        return [Match(i, "journal", -s) for s, _, i in scored[:limit]]

    def _stats(self, conn: Conn) -> tuple[int, int]:
        """How many searchable events the store has, and how many tokens they hold."""
        row = conn.execute(
            "SELECT count(*), COALESCE(sum(cardinality(tokens)), 0) FROM halls.journal "
            "WHERE store = %s AND visibility <> 'private'",
            (self._store,),
        ).fetchone()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))


def _passes(row: Any, filt: SearchFilter) -> bool:
    _, _, _, topic, at = row
    return (
        (filt.topic is None or topic == filt.topic)
        and (filt.since is None or at >= filt.since)
        and (filt.until is None or at <= filt.until)
    )
