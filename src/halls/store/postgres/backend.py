"""The PostgreSQL backend: every named store in one database, rows keyed by store.

One ``PostgresBackend`` per process holds one connection pool
(``storage.postgres.pool_size``) that every store it opens shares, and
applies pending migrations when it starts.
"""

from __future__ import annotations

import psycopg

from halls.config import PostgresSettings
from halls.errors import StoreNotFound
from halls.store.postgres.db import Database, translated
from halls.store.postgres.purge import TABLES
from halls.store.postgres.schema import migrate
from halls.store.postgres.store import PostgresStore


@translated
class PostgresBackend:
    def __init__(self, dsn: str, settings: PostgresSettings | None = None) -> None:
        settings = settings or PostgresSettings()
        try:
            migrate(dsn)
        except psycopg.OperationalError as err:
            from halls.errors import StoreUnavailable

            raise StoreUnavailable(
                "PostgreSQL could not be reached or set up (check storage.dsn)"
            ) from err
        self._db = Database(dsn, settings.pool_size)

    def _id(self, name: str) -> int | None:
        with self._db.read() as conn:
            row = conn.execute("SELECT id FROM halls.stores WHERE name = %s", (name,)).fetchone()
        return None if row is None else int(row[0])

    def open(self, name: str, create: bool) -> PostgresStore:
        store = self._id(name)
        if store is None:
            if not create:
                raise StoreNotFound(
                    f"no store named '{name}' (a store is created by its first write)"
                )
            with self._db.tx() as conn:
                conn.execute(
                    "INSERT INTO halls.stores(name) VALUES (%s) ON CONFLICT (name) DO NOTHING",
                    (name,),
                )
            store = self._id(name)
            assert store is not None
        return PostgresStore(self._db, store, name)

    def exists(self, name: str) -> bool:
        return self._id(name) is not None

    def names(self) -> list[str]:
        with self._db.read() as conn:
            return [r[0] for r in conn.execute("SELECT name FROM halls.stores ORDER BY name")]

    def delete(self, name: str) -> bool:
        with self._db.tx() as conn:
            row = conn.execute(
                "SELECT id FROM halls.stores WHERE name = %s FOR UPDATE", (name,)
            ).fetchone()
            if row is None:
                return False
            for table in ("meta", "runs", "scopes", *TABLES):
                conn.execute(f"DELETE FROM halls.{table} WHERE store = %s", (row[0],))
            conn.execute("DELETE FROM halls.stores WHERE id = %s", (row[0],))
        return True

    def close(self) -> None:
        self._db.close()
