"""The SQLite backend (the embedded default). Only ``halls.store`` imports it."""

from halls.store.sqlite.backend import SQLiteBackend
from halls.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteBackend", "SQLiteStore"]
