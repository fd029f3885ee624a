"""Backends: where named stores live, and the one place that picks one.

A ``Backend`` opens, lists and deletes the named stores of one place (a
directory of SQLite files, a PostgreSQL database). ``open_backend`` reads
``storage.backend`` and is the only code that names a backend: adding one is
a package under ``halls.store`` and one line here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from halls.config import StorageSettings
from halls.errors import StoreUnavailable
from halls.store.base import Store


class Backend(Protocol):
    """The named stores of one place. Names reaching it are already valid."""

    def open(self, name: str, create: bool) -> Store:
        """A new handle on the store ``name``; created empty if missing and ``create``.

        A missing store with ``create`` False is ``StoreNotFound``. Two
        handles on one store see each other's writes (as two processes would).
        """
        ...

    def exists(self, name: str) -> bool: ...

    def names(self) -> list[str]:
        """Every store there, sorted."""
        ...

    def delete(self, name: str) -> bool:
        """Delete the store and all its data, for real; False if there was none.

        Every handle on it must be closed first.
        """
        ...

    def close(self) -> None:
        """Release what the backend itself holds (not the stores it opened)."""
        ...


def open_backend(storage: StorageSettings, data_dir: Path) -> Backend:
    """The backend ``storage.backend`` names, with its own settings."""
    # Imported here: a backend's driver is loaded only when it is chosen.
    if storage.backend == "sqlite":
        from halls.store.sqlite import SQLiteBackend

        key = storage.encryption_key
        return SQLiteBackend(
            data_dir, storage.sqlite, None if key is None else key.get_secret_value()
        )
    if storage.backend == "postgres":
        try:
            from halls.store.postgres import PostgresBackend
        except ImportError as err:
            raise StoreUnavailable(
                f"storage.backend postgres needs the postgres extra ({err.name} is missing): "
                "pip install 'halls[postgres]'"
            ) from err
        assert storage.dsn, "StorageSettings requires a dsn for postgres"
        return PostgresBackend(storage.dsn, storage.postgres)
    raise ValueError(f"unknown storage backend {storage.backend!r}")  # pragma: no cover
