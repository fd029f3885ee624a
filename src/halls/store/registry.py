"""Named stores: validating names, opening each store once, listing them.

A store is created by its first write (or ``halls stores create``); reading
a store that does not exist is a ``StoreNotFound``, so that a typo in a
store name cannot silently create an empty store. Which backend holds the
stores is the ``Backend``'s business; the registry knows none.
"""

from __future__ import annotations

import re
import threading

from halls.errors import InvalidStoreName
from halls.store.backend import Backend
from halls.store.base import Store

# \Z, not $: "$" also matches before a trailing newline, which would reach a file name.
STORE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\Z")


def check_store_name(name: str) -> str:
    if not isinstance(name, str) or not STORE_NAME.match(name):
        shown = name[:70] if isinstance(name, str) else type(name).__name__
        raise InvalidStoreName(
            f"invalid store name {shown!r}: use 1-64 characters a-z, 0-9, '_' or '-', "
            "starting with a letter or digit"
        )
    return name


class StoreRegistry:
    """One handle per named store for this process, opened through ``backend``."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._stores: dict[str, Store] = {}
        self._lock = threading.Lock()

    def exists(self, name: str) -> bool:
        check_store_name(name)
        return name in self._stores or self.backend.exists(name)

    def open(self, name: str, create: bool) -> tuple[Store, bool]:
        """Return (store, newly_opened); newly opened stores get checked by the caller."""
        check_store_name(name)
        with self._lock:
            store = self._stores.get(name)
            if store is not None:
                return store, False
            store = self.backend.open(name, create)
            self._stores[name] = store
            return store, True

    def names(self) -> list[str]:
        found = set(self.backend.names()) | set(self._stores)
        return sorted(n for n in found if STORE_NAME.match(n))

    def opened(self) -> list[Store]:
        """The stores open in this process now; opens none."""
        with self._lock:
            return list(self._stores.values())

    def delete(self, name: str) -> bool:
        """Close the store if open here, then delete it and all its data."""
        check_store_name(name)
        with self._lock:
            store = self._stores.pop(name, None)
            if store is not None:
                store.close()
            return self.backend.delete(name)

    def close(self) -> None:
        with self._lock:
            stores, self._stores = list(self._stores.values()), {}
        for store in stores:
            store.close()
        self.backend.close()
