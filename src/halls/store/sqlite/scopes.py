"""The SQLite store's work scopes (``halls.scopes``): the ``scopes`` table and the
turn count (meta ``scope_turn``), changed together in one write transaction."""

from __future__ import annotations

from collections.abc import Sequence

from halls.models import Scope
from halls.scopes import TURN_KEY
from halls.store import rowmap
from halls.store.base import ScopeStep
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
            row = db.execute("SELECT value FROM meta WHERE key = ?", (TURN_KEY,)).fetchone()
            turn = int(row[0]) if row else 0
            scopes = {
                r["name"]: rowmap.scope_of(r)
                for r in db.execute("SELECT * FROM scopes WHERE status = 'open'")
            }
            for chunk in chunks(list(dict.fromkeys(names))):
                sql = f"SELECT * FROM scopes WHERE name IN ({marks(len(chunk))})"
                found = db.execute(sql, chunk)
                scopes |= {r["name"]: rowmap.scope_of(r) for r in found}
            turn, changed = step(turn, scopes)
            db.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (TURN_KEY, str(turn)),
            )
            db.executemany(
                f"INSERT INTO scopes({rowmap.SCOPE_COLUMNS}) VALUES ({marks(8)}) "
                f"ON CONFLICT(name) DO UPDATE SET {rowmap.SCOPE_UPSERT}",
                [rowmap.scope_values(s) for s in changed],
            )
        return changed
