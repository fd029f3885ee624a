"""Named stores: validating names, opening each store once, listing them.

A store is created by its first write (or ``halls stores create``); reading
a store that does not exist is a ``StoreNotFound``, so that a typo in a
store name cannot silently create an empty store.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

from halls.config import StorageSettings
from halls.errors import InvalidStoreName, StoreNotFound
from halls.store.base import Store
from halls.store.sqlite import SQLiteStore

# \Z, not $: "$" also matches before a trailing newline, which would reach the file name.
STORE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\Z")
_SUFFIX = ".sqlite3"


def check_store_name(name: str) -> str:
    if not isinstance(name, str) or not STORE_NAME.match(name):
        shown = name[:70] if isinstance(name, str) else type(name).__name__
        raise InvalidStoreName(
            f"invalid store name {shown!r}: use 1-64 characters a-z, 0-9, '_' or '-', "
            "starting with a letter or digit"
        )
    return name


class StoreRegistry:
    def __init__(self, data_dir: Path, storage: StorageSettings) -> None:
        self.data_dir = data_dir
        self._storage = storage
        self._stores: dict[str, Store] = {}
        self._lock = threading.Lock()

    def _path(self, name: str) -> Path:
        return self.data_dir / f"{name}{_SUFFIX}"

    def exists(self, name: str) -> bool:
        check_store_name(name)
        return name in self._stores or self._path(name).exists()

    def open(self, name: str, create: bool) -> tuple[Store, bool]:
        """Return (store, newly_opened); newly opened stores get checked by the caller."""
        check_store_name(name)
        with self._lock:
            store = self._stores.get(name)
            if store is not None:
                return store, False
            path = self._path(name)
            if not path.exists() and not create:
                raise StoreNotFound(
                    f"no store named '{name}' (a store is created by its first write)"
                )
            self.data_dir.mkdir(parents=True, exist_ok=True)
            store = SQLiteStore(path, name, synchronous=self._storage.synchronous)
            self._stores[name] = store
            return store, True

    def forget(self, name: str) -> None:
        """Drop a store from the cache (after a refused open)."""
        with self._lock:
            store = self._stores.pop(name, None)
        if store is not None:
            store.close()

    def names(self) -> list[str]:
        found = {p.name[: -len(_SUFFIX)] for p in self.data_dir.glob(f"*{_SUFFIX}")}
        found |= set(self._stores)
        return sorted(n for n in found if STORE_NAME.match(n))

    def opened(self) -> list[Store]:
        """The stores open in this process now; opens none."""
        with self._lock:
            return list(self._stores.values())

    def close(self) -> None:
        with self._lock:
            stores, self._stores = list(self._stores.values()), {}
        for store in stores:
            store.close()
