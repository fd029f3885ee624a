"""The SQLite store's purge: the one true deletion, verifiable in the files.

A purge is its own transaction (with ``secure_delete`` on, so freed cells
are zeroed), then an FTS5 ``optimize`` (deleted terms leave the index
b-tree), a WAL checkpoint and ``VACUUM`` (the file is rewritten), and a
final ``wal_checkpoint(TRUNCATE)`` so that no old page survives in the WAL.
Every other copy of a purged value goes too, and earlier run records are
scrubbed of it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from halls.store.sqlite.db import Database, chunks, marks
from halls.store.sqlite.rows import delete_rows

_PURGED = "[purged]"


class Purger:
    """``Store.purge`` for the SQLite store: it takes the writer for the whole purge."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def purge(
        self,
        facts: Sequence[str],
        short: Sequence[str],
        journal: Sequence[str],
        values: Sequence[str],
        flags: Sequence[str],
    ) -> None:
        """Delete facts, their sources, edges and every copy of ``values``; then vacuum."""
        # Not Database.tx(): secure_delete must be set outside the transaction,
        # and VACUUM run after it, all without another write in between.
        with self._db.write_lock:
            db = self._db.writer
            previous = db.execute("PRAGMA secure_delete").fetchone()[0]
            # Freed cells are zeroed as they are freed, not just unlinked.
            db.execute("PRAGMA secure_delete = ON")
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    _purge_rows(db, list(facts), list(short), list(journal), list(values))
                    for chunk in chunks(flags):
                        db.execute(
                            f"UPDATE forget_flags SET status = 'done' WHERE id IN ({marks(chunk)})",
                            chunk,
                        )
                    # Merge FTS5 segments so deleted terms leave the index b-tree too.
                    db.execute("INSERT INTO docs_fts(docs_fts) VALUES ('optimize')")
                    db.execute("INSERT INTO journal_fts(journal_fts) VALUES ('optimize')")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
                # VACUUM cannot run in a transaction; it rewrites the file, and
                # TRUNCATE empties the WAL that held the old pages.
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                db.execute("VACUUM")
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                db.execute(f"PRAGMA secure_delete = {int(previous)}")
        # The index snapshots beside the file held the purged rows: gone too.
        self._db.committed()


def _purge_rows(
    db: sqlite3.Connection,
    facts: list[str],
    short: list[str],
    journal: list[str],
    values: list[str],
) -> None:
    for v in values:
        # Every other copy of the value goes too: the same SSN in another
        # entry, loop or fact is the same secret.
        for table, col, into in (
            ("short", "content", short),
            ("journal", "content", journal),
            ("long", "content", facts),
            ("near", "intent", None),
        ):
            ids = [
                r[0] for r in db.execute(f"SELECT id FROM {table} WHERE instr({col}, ?) > 0", (v,))
            ]
            if into is None:
                delete_rows(db, "near", ids)
            else:
                into += [i for i in ids if i not in into]
        for col in ("summary", "promote_hints", "completed_intents", "noise"):
            db.execute(f"UPDATE briefs SET {col} = replace({col}, ?, ?)", (v, _PURGED))
        db.execute("UPDATE forget_flags SET reason = replace(reason, ?, ?)", (v, _PURGED))
    for table, ids in (("long", facts), ("short", short), ("journal", journal)):
        delete_rows(db, table, ids)
    gone = [*facts, *short, *journal]
    # Earlier run records must not keep what the purge removes.
    stub = (
        "CASE WHEN {c} IS NULL THEN NULL ELSE "
        "json_object('id', json_extract({c}, '$.id'), 'purged', json('true')) END"
    )
    scrub = (
        f"UPDATE run_actions SET before = {stub.format(c='before')}, "
        f"after = {stub.format(c='after')}, undo = NULL, "
        "reason = replace(reason, ?, ?), engine_note = replace(engine_note, ?, ?) "
    )
    for chunk in chunks(gone):
        q = marks(chunk)
        db.execute(
            scrub.replace("replace(reason, ?, ?)", "reason").replace(
                "replace(engine_note, ?, ?)", "engine_note"
            )
            + f"WHERE target_id IN ({q}) OR json_extract(after, '$.id') IN ({q})",
            (*chunk, *chunk),
        )
    for v in values:
        db.execute(
            scrub + "WHERE instr(COALESCE(before, ''), ?) OR instr(COALESCE(after, ''), ?) "
            "OR instr(COALESCE(undo, ''), ?) OR instr(reason, ?) "
            "OR instr(COALESCE(engine_note, ''), ?)",
            (v, _PURGED, v, _PURGED, v, v, v, v, v),
        )
