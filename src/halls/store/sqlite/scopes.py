"""The SQLite store's work scopes (``halls.scopes``): the ``scopes`` table and the
turn count (meta ``scope_turn``), changed together in one write transaction: their
own (``update``), or a record write's (``take``, so a write and its turn commit once)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from halls.models import Scope
from halls.scopes import TURN_KEY
from halls.store import rowmap
from halls.store.base import ScopeStep, ScopeTurn
from halls.store.sqlite.db import Database, chunks, marks


class ScopeTable:
    def __init__(self, db: Database) -> None:
        self._db = db

    def select(self, status: str | None, limit: int, offset: int) -> list[Scope]:
        found = self._db.reader().execute(
            "SELECT * FROM scopes WHERE (? IS NULL OR status = ?) "
            "ORDER BY last_turn DESC, name LIMIT ? OFFSET ?",
            (status, status, limit, offset),
        )
        return [rowmap.scope_of(r) for r in found]

    def update(self, names: Sequence[str], step: ScopeStep) -> list[Scope]:
        with self._db.tx() as db:
            return self.take(db, ScopeTurn(names, step))

    @staticmethod
    def take(db: sqlite3.Connection, turn: ScopeTurn | None) -> list[Scope]:
        """``update``'s work inside the caller's write transaction ``db``."""
        if turn is None:
            return []
        row = db.execute("SELECT value FROM meta WHERE key = ?", (TURN_KEY,)).fetchone()
        count = int(row[0]) if row else 0
        scopes = {
            r["name"]: rowmap.scope_of(r)
            for r in db.execute("SELECT * FROM scopes WHERE status = 'open'")
        }
        for chunk in chunks(list(dict.fromkeys(turn.names))):
            sql = f"SELECT * FROM scopes WHERE name IN ({marks(len(chunk))})"
            scopes |= {r["name"]: rowmap.scope_of(r) for r in db.execute(sql, chunk)}
        count, changed = turn.step(count, scopes)
        db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (TURN_KEY, str(count)),
        )
        db.executemany(
            f"INSERT INTO scopes({rowmap.SCOPE_COLUMNS}) VALUES ({marks(8)}) "
            f"ON CONFLICT(name) DO UPDATE SET {rowmap.SCOPE_UPSERT}",
            [rowmap.scope_values(s) for s in changed],
        )
        return changed
