"""The PostgreSQL store's work scopes (``halls.scopes``): its rows of ``halls.scopes``
and its turn count (meta ``scope_turn``), changed together in one transaction that
holds the store's row (``Database.tx``), so turns from many processes count in order:
their own (``update``), or a record write's (``take``, so a write and its turn commit
once)."""

from __future__ import annotations

from collections.abc import Sequence

from halls.models import Scope
from halls.scopes import TURN_KEY
from halls.store import rowmap
from halls.store.base import ScopeStep, ScopeTurn
from halls.store.postgres.db import Database, dicts
from halls.store.postgres.rows import Conn
from halls.store.rowmap import marks


class ScopeTable:
    def __init__(self, db: Database, store: int) -> None:
        self._db = db
        self._store = store

    def select(self, status: str | None, limit: int, offset: int) -> list[Scope]:
        with self._db.read() as conn:
            found = dicts(conn).execute(
                "SELECT * FROM halls.scopes WHERE store = %s AND (%s::text IS NULL OR status = %s) "
                "ORDER BY last_turn DESC, name LIMIT %s OFFSET %s",
                (self._store, status, status, limit, offset),
            )
            return [rowmap.scope_of(r) for r in found]

    def update(self, names: Sequence[str], step: ScopeStep) -> list[Scope]:
        with self._db.tx(self._store) as conn:
            return self.take(conn, ScopeTurn(names, step))

    def take(self, conn: Conn, turn: ScopeTurn | None) -> list[Scope]:
        """``update``'s work inside the caller's transaction ``conn``, which holds the
        store's row (``Database.tx``)."""
        if turn is None:
            return []
        row = conn.execute(
            "SELECT value FROM halls.meta WHERE store = %s AND key = %s",
            (self._store, TURN_KEY),
        ).fetchone()
        count = int(row[0]) if row else 0
        found = dicts(conn).execute(
            "SELECT * FROM halls.scopes WHERE store = %s AND (status = 'open' OR name = ANY(%s))",
            (self._store, list(dict.fromkeys(turn.names))),
        )
        scopes = {r["name"]: rowmap.scope_of(r) for r in found}
        count, changed = turn.step(count, scopes)
        conn.execute(
            "INSERT INTO halls.meta(store, key, value) VALUES (%s, %s, %s) "
            "ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
            (self._store, TURN_KEY, str(count)),
        )
        if changed:
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO halls.scopes(store, {rowmap.SCOPE_COLUMNS}) "
                    f"VALUES ({marks(9, '%s')}) "
                    f"ON CONFLICT (store, name) DO UPDATE SET {rowmap.SCOPE_UPSERT}",
                    [(self._store, *rowmap.scope_values(s)) for s in changed],
                )
        return changed
