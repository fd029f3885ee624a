"""One PostgreSQL database's connection pool, shared by every store a backend opens.

Reads take a pooled connection in autocommit (each statement sees what is
committed when it starts, whichever process committed it); writes take one
for a transaction (``tx``). Every write transaction first locks its
store's row in ``stores``, and one that writes search rows takes the next
seqs from that row (``take_seqs``): writes to one store are serialised as
SQLite's are, and seqs become visible in the order they were given, which
is what lets an in-memory index follow the store by reading "rows after
the last seq".

Driver errors stop here (``translated``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
import psycopg_pool
from pgvector.psycopg import register_vector
from psycopg.adapt import Loader
from psycopg.pq import Format
from psycopg.rows import dict_row

from halls.errors import AlreadyExists, HallsError, StoreNotFound, StoreUnavailable
from halls.store.errors import translating

# Statement parameters per IN list: PostgreSQL takes up to 65535 per statement.
CHUNK = 5000


def translate(err: BaseException) -> HallsError:
    """The HallsError a driver error means to a caller; the message names no host."""
    if isinstance(err, psycopg.errors.UniqueViolation):
        return AlreadyExists("a record with that id already exists")
    return StoreUnavailable(f"the store could not be read or written ({type(err).__name__})")


translated = translating(
    lambda err: isinstance(err, (psycopg.Error, psycopg_pool.PoolTimeout)), translate
)


class VectorBytes(Loader):
    """pgvector's binary form (dim: int16, unused: int16, big-endian float32s)
    as little-endian float32 bytes: what the in-memory vector index appends,
    without a Python object per row."""

    format = Format.BINARY

    def load(self, data: Any) -> bytes:
        return np.frombuffer(data, dtype=">f4", offset=4).astype("<f4").tobytes()


def _configure(conn: psycopg.Connection[Any]) -> None:
    register_vector(conn)


class Database:
    def __init__(self, dsn: str, pool_size: int) -> None:
        self.dsn = dsn
        self.pool: psycopg_pool.ConnectionPool[psycopg.Connection[Any]] = (
            psycopg_pool.ConnectionPool(
                dsn,
                min_size=1,
                max_size=pool_size,
                kwargs={"autocommit": True},
                configure=_configure,
                open=False,
                name="halls",
            )
        )
        try:
            self.pool.open(wait=True, timeout=30)
        except psycopg_pool.PoolTimeout as err:
            self.pool.close()
            raise StoreUnavailable("PostgreSQL could not be reached (storage.dsn)") from err

    @contextmanager
    def read(self) -> Iterator[psycopg.Connection[Any]]:
        with self.pool.connection() as conn:
            yield conn

    @contextmanager
    def tx(self, store: int | None = None) -> Iterator[psycopg.Connection[Any]]:
        """One write transaction: committed on return, rolled back on any error.

        With ``store``, the transaction first locks that store's row: every
        write to a store is serialised with every other (see above), and a
        write to a store deleted meanwhile (by another process) is
        ``StoreNotFound`` rather than rows nobody can reach.
        """
        with self.pool.connection() as conn, conn.transaction():
            if store is not None:
                found = conn.execute(
                    "SELECT 1 FROM halls.stores WHERE id = %s FOR UPDATE", (store,)
                ).fetchone()
                if found is None:
                    raise StoreNotFound("the store was deleted")
            yield conn

    def close(self) -> None:
        self.pool.close()


def dicts(conn: psycopg.Connection[Any]) -> psycopg.Cursor[dict[str, Any]]:
    return conn.cursor(row_factory=dict_row)


def vector_oid(conn: psycopg.Connection[Any]) -> int:
    info = conn.adapters.types.get("vector")
    assert info is not None, "register_vector ran on every pooled connection"
    return int(info.oid)


def take_seqs(conn: psycopg.Connection[Any], store: int, n: int) -> list[int]:
    """The next ``n`` seqs of the store's write sequence, its row locked till commit."""
    last = conn.execute(
        "UPDATE halls.stores SET last_seq = last_seq + %s WHERE id = %s RETURNING last_seq",
        (n, store),
    ).fetchone()
    assert last is not None
    return list(range(int(last[0]) - n + 1, int(last[0]) + 1))
