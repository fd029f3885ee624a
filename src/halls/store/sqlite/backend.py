"""The SQLite backend: one file per store, ``<data_dir>/<name>.sqlite3``."""

from __future__ import annotations

from pathlib import Path

from halls.config import SqliteSettings
from halls.errors import StoreNotFound
from halls.store.sqlite import cipher
from halls.store.sqlite.db import translate
from halls.store.sqlite.store import SQLiteStore

_SUFFIX = ".sqlite3"
# What a store leaves beside its file: WAL, shared memory, the consolidation
# lock, the snapshots of its in-memory indexes.
_BESIDE = ("-wal", "-shm", ".consolidate.lock", "-vectors", "-text")


class SQLiteBackend:
    def __init__(
        self,
        data_dir: Path,
        settings: SqliteSettings | None = None,
        encryption_key: str | None = None,
    ) -> None:
        self.data_dir = data_dir
        self._settings = settings or SqliteSettings()
        # storage.encryption_key: every store file is SQLCipher-encrypted (cipher.py).
        self._key = encryption_key

    def _path(self, name: str) -> Path:
        return self.data_dir / f"{name}{_SUFFIX}"

    def open(self, name: str, create: bool) -> SQLiteStore:
        path = self._path(name)
        if not path.exists():
            if not create:
                raise StoreNotFound(
                    f"no store named '{name}' (a store is created by its first write)"
                )
            self.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            return SQLiteStore(path, name, self._settings.synchronous, self._key)
        except Exception as err:  # not a database, unreadable, a failed migration
            if not cipher.is_error(err):
                raise
            looks_encrypted = None if self._key else cipher.not_plain(path)
            if looks_encrypted is not None:
                raise looks_encrypted from None
            raise translate(err) from err

    def exists(self, name: str) -> bool:
        return self._path(name).exists()

    def names(self) -> list[str]:
        return sorted(p.name[: -len(_SUFFIX)] for p in self.data_dir.glob(f"*{_SUFFIX}"))

    def delete(self, name: str) -> bool:
        path = self._path(name)
        existed = path.exists()
        for p in (path, *(Path(f"{path}{s}") for s in _BESIDE)):
            p.unlink(missing_ok=True)
        return existed

    def close(self) -> None:
        """Nothing to release: each store owns its connections."""
