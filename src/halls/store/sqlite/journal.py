"""Full text over the SQLite store's journal: its own FTS5 table, ``journal_fts``.

A part of ``SQLiteStore`` (``JournalIndex``). The journal's rows are indexed
apart from ``docs_fts`` so that its raw turns weigh in none of the other
tiers' BM25 statistics. ``journal_fts``'s rowid is the event's ``seq``; a
``private`` event has no row there, and a deleted event loses its row by
trigger (``schema.m009_journal_search``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from halls.models import JournalEvent, Match, SearchFilter
from halls.store.sqlite.db import Database, chunks, marks


def fts_query(terms: Sequence[str]) -> str:
    # Each term quoted so FTS5 operators in user text are plain words.
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def index_events(db: sqlite3.Connection, events: Sequence[JournalEvent]) -> None:
    """Index the events just inserted that may be searched (all but ``private``)."""
    ids = [e.id for e in events if e.visibility != "private"]
    for chunk in chunks(ids):
        db.execute(
            "INSERT INTO journal_fts(rowid, content) "
            f"SELECT seq, content FROM journal WHERE id IN ({marks(chunk)})",
            chunk,
        )


class JournalText:
    """The ``JournalIndex`` method over one ``Database``'s readers."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def journal_search(self, terms: list[str], filt: SearchFilter, limit: int) -> list[Match]:
        if not terms:
            return []
        # The visibility test is the index's rule restated: a private event
        # is never indexed, and is never returned even if a row were left.
        clauses = ["j.visibility != 'private'"]
        args: list[Any] = []
        for sql, value in (
            ("j.topic = ?", filt.topic),
            ("j.occurred_at >= ?", filt.since),
            ("j.occurred_at <= ?", filt.until),
        ):
            if value is not None:
                clauses.append(sql)
                args.append(value)
        rows = self._db.reader().execute(
            "SELECT j.id, bm25(journal_fts) AS s FROM journal_fts "
            "JOIN journal j ON j.seq = journal_fts.rowid "
            f"WHERE journal_fts MATCH ? AND {' AND '.join(clauses)} ORDER BY s LIMIT ?",
            (fts_query(terms), *args, limit),
        )
        # FTS5's bm25() is negative, lower is better; flipped so higher is better.
        return [Match(r[0], "journal", -float(r[1])) for r in rows]
