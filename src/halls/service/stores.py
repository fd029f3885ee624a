"""The service's one door to storage: named stores, opened once, and their embedder.

Every other service module asks ``Stores`` for a store by name; nothing else
in the service touches the registry. A store whose vectors came from another
embedder than the configured one is refused (``EmbedderMismatch``) before a
vector is read or written: cosines between two models' vectors mean nothing.
A store written before the association graph (or with an older name
extractor) has its memories linked then too (``graph.link_names``).
"""

from __future__ import annotations

from collections.abc import Callable

from halls.config import Settings
from halls.embed import Embedder, fingerprint
from halls.errors import EmbedderMismatch, HallsError
from halls.service import graph
from halls.store import StoreRegistry, check_store_name, open_backend
from halls.store.base import Store

FINGERPRINT_KEY = "embedder"

__all__ = ["FINGERPRINT_KEY", "Stores", "check_store_name"]


class Stores:
    """Opens stores by name (``None`` = the default store) and checks their embedder."""

    def __init__(self, settings: Settings, embedder: Callable[[], Embedder]) -> None:
        self._default = settings.default_store
        # The embedder is loaded lazily (seconds, for the local model): only a
        # store that is searched or written needs its fingerprint.
        self._embedder = embedder
        self._registry = StoreRegistry(
            open_backend(settings.storage, settings.data_dir),
            max_open=settings.storage.max_open_stores,
            max_index_bytes=settings.storage.max_index_mb * 2**20,
        )
        self._checked: set[str] = set()

    def name(self, store: str | None) -> str:
        return store or self._default

    def open(self, store: str | None, *, create: bool = False) -> Store:
        name = self.name(store)
        opened, _ = self._registry.open(name, create or name == self._default)
        return opened

    def embedded(self, store: str | None, *, create: bool = False) -> Store:
        """The store, after checking its vectors came from our embedder."""
        s = self.open(store, create=create)
        if s.name in self._checked:
            return s
        mine = fingerprint(self._embedder())
        theirs = s.get_meta(FINGERPRINT_KEY)
        if theirs is None:
            s.set_meta(FINGERPRINT_KEY, mine)
        elif theirs != mine:
            raise EmbedderMismatch(
                f"store '{s.name}' was embedded with {theirs} but the configured embedder is "
                f"{mine}; run `halls reembed --store {s.name}` to re-embed it with the "
                "configured embedder"
            )
        if not graph.up_to_date(s):
            graph.link_names(s)
        self._checked.add(s.name)
        return s

    def create(self, name: str) -> str:
        """Create the store ``name`` (if new) and bind it to the configured embedder."""
        check_store_name(name)  # "" must not fall back to the default store
        self.embedded(name, create=True)
        return name

    def mark_embedded(self, s: Store) -> None:
        """Record that every vector of ``s`` now comes from the configured embedder."""
        s.set_meta(FINGERPRINT_KEY, fingerprint(self._embedder()))
        self._checked.add(s.name)

    def fingerprint_of(self, store: str | None) -> str | None:
        return self.open(store).get_meta(FINGERPRINT_KEY)

    def delete(self, name: str) -> bool:
        """Close the store here and delete it with all its files; False if there was none."""
        check_store_name(name)
        found = self._registry.delete(name)
        self._checked.discard(name)
        return found

    def exists(self, name: str) -> bool:
        return self._registry.exists(check_store_name(name))

    def names(self) -> list[str]:
        return self._registry.names()

    def open_all(self) -> None:
        """Open every existing store now (see ``Memory.open_stores``)."""
        for name in self._registry.names():
            try:
                self._registry.open(name, False)
            except HallsError as err:
                # Which store, when there are many (errors from the store name none).
                err.message = f"store '{name}': {err.message}"
                err.args = (err.message,)
                raise

    def opened(self) -> list[Store]:
        """The stores open in this process now; opens none."""
        return self._registry.opened()

    def close(self) -> None:
        self._registry.close()
