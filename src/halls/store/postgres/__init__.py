"""The PostgreSQL backend (``storage.backend: postgres``; ``pip install halls[postgres]``)."""

from halls.store.postgres.backend import PostgresBackend
from halls.store.postgres.store import PostgresStore

__all__ = ["PostgresBackend", "PostgresStore"]
