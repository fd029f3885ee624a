"""Named stores: validating names, opening them on demand, keeping a bounded set open.

A store is created by its first write (or ``halls stores create``); reading
a store that does not exist is a ``StoreNotFound``, so that a typo in a
store name cannot silently create an empty store. Which backend holds the
stores is the ``Backend``'s business; the registry knows none.

Open stores hold file descriptors (a SQLite file, its WAL and shared
memory, one connection per thread) and in-memory indexes, so at most
``max_open`` stay open: opening one more closes the least recently used
idle one (``storage.max_open_stores``). Their indexes also have a budget in
bytes (``storage.max_index_mb``): past it, least recently used idle stores
are closed too, but never the most recently used one, so that one store
larger than the budget still serves (alone). Callers never see this: ``open``
returns a handle whose every call takes the store (reopening it if it was
closed) for the length of that call, so a store is only ever closed while
no call is running on it, and never while this process holds its
consolidation lock. When every open store is busy the bound is exceeded
rather than a call refused; it returns to the bound as they finish.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, cast

from halls.errors import InvalidStoreName, StoreUnavailable
from halls.store.backend import Backend
from halls.store.base import FileBackup, Store

# \Z, not $: "$" also matches before a trailing newline, which would reach a file name.
STORE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\Z")
DEFAULT_MAX_OPEN = 64
# How long delete() waits for the calls running on a store to finish.
DELETE_WAIT_SECONDS = 30.0


def check_store_name(name: str) -> str:
    if not isinstance(name, str) or not STORE_NAME.match(name):
        shown = name[:70] if isinstance(name, str) else type(name).__name__
        raise InvalidStoreName(
            f"invalid store name {shown!r}: use 1-64 characters a-z, 0-9, '_' or '-', "
            "starting with a letter or digit"
        )
    return name


# What a store may offer besides ``Store`` (``base.FileBackup``): a handle
# answers for these only when its store has them.
_OPTIONAL = frozenset(n for n in vars(FileBackup) if not n.startswith("_"))


class _Open:
    """A store open in this process: its handle, the calls running on it, its lock."""

    __slots__ = ("store", "users", "locked", "index_bytes")

    def __init__(self, store: Store) -> None:
        self.store = store
        self.users = 0
        self.locked = False  # this process holds its consolidation lock
        self.index_bytes = 0  # as of the end of its last call


class _Handle:
    """What callers hold: a store by name, opened for the length of each call."""

    def __init__(self, registry: StoreRegistry, name: str) -> None:
        self.name = name
        self._registry = registry

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        registry, name = self._registry, self.name
        if attr in _OPTIONAL and not registry._has(name, attr):
            # A capability the backend's stores may lack: the handle has it
            # only if the store has (base.offers_file_backup asks).
            raise AttributeError(attr)

        def call(*args: Any, **kwargs: Any) -> Any:
            store = registry._take(name)
            held = False
            try:
                result = getattr(store, attr)(*args, **kwargs)
                if attr == "try_lock_consolidation" and result:
                    registry._set_locked(name, True)
                elif attr == "unlock_consolidation":
                    registry._set_locked(name, False)
                if isinstance(result, Iterator) and attr.startswith("iter_"):
                    held = True  # released when the iteration ends
                    return registry._holding(name, result)
                return result
            finally:
                if not held:
                    registry._give(name)

        return call

    def __repr__(self) -> str:
        return f"<store {self.name!r}>"


class _Held:
    """An iteration over a store that keeps it in use until it ends or is closed."""

    def __init__(self, registry: StoreRegistry, name: str, items: Iterator[Any]) -> None:
        self._registry, self._name, self._items = registry, name, items
        self._done = False

    def __iter__(self) -> _Held:
        return self

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        try:
            return next(self._items)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if not self._done:
            self._done = True
            close = getattr(self._items, "close", None)
            if close is not None:
                close()
            self._registry._give(self._name)

    def __del__(self) -> None:
        self.close()


class StoreRegistry:
    """A bounded set of open stores of ``backend``, and handles on any of them."""

    def __init__(
        self,
        backend: Backend,
        max_open: int = DEFAULT_MAX_OPEN,
        max_index_bytes: int | None = None,
    ) -> None:
        if max_open < 1:
            raise ValueError("max_open must be at least 1")
        self.backend = backend
        self.max_open = max_open
        self.max_index_bytes = max_index_bytes
        # The open stores' index bytes, summed as each call ends: checking
        # the budget after a call asks only that call's store.
        self._index_total = 0
        # Least recently used first.
        self._open: OrderedDict[str, _Open] = OrderedDict()
        self._handles: dict[str, _Handle] = {}
        self._cond = threading.Condition()

    def exists(self, name: str) -> bool:
        check_store_name(name)
        return name in self._open or self.backend.exists(name)

    def open(self, name: str, create: bool) -> tuple[Store, bool]:
        """Return (store, newly_opened); a missing store is created only with ``create``."""
        check_store_name(name)
        with self._cond:
            newly = name not in self._open
            self._take(name, create)
            self._give(name)
            handle = self._handles.get(name)
            if handle is None:
                handle = self._handles[name] = _Handle(self, name)
            return cast(Store, handle), newly

    def names(self) -> list[str]:
        found = set(self.backend.names()) | set(self._open)
        return sorted(n for n in found if STORE_NAME.match(n))

    def opened(self) -> list[Store]:
        """The stores open in this process now; opens none."""
        with self._cond:
            return [cast(Store, self._handles.get(n) or _Handle(self, n)) for n in self._open]

    def delete(self, name: str) -> bool:
        """Close the store once no call runs on it, then delete it and all its data."""
        check_store_name(name)
        with self._cond:
            if not self._cond.wait_for(
                lambda: name not in self._open or self._open[name].users == 0,
                timeout=DELETE_WAIT_SECONDS,
            ):
                raise StoreUnavailable(f"store '{name}' is busy; try again")
            entry = self._open.pop(name, None)
            self._handles.pop(name, None)
            if entry is not None:
                self._index_total -= entry.index_bytes
                entry.store.close()
            return self.backend.delete(name)

    def close(self) -> None:
        with self._cond:
            entries, self._open = list(self._open.values()), OrderedDict()
            self._handles.clear()
            self._index_total = 0
        for entry in entries:
            entry.store.close()
        self.backend.close()

    # -- what handles call --

    def _take(self, name: str, create: bool = False) -> Store:
        """The open store ``name`` (opening it, and closing an idle one, if need be), in use."""
        with self._cond:
            entry = self._open.get(name)
            if entry is None:
                self._make_room()
                try:
                    store = self._open_backend(name, create)
                except StoreUnavailable:
                    # Out of descriptors or memory, maybe for a reason of the
                    # system's: give back what idle stores hold, and try once more.
                    self._make_room(over=self.max_open)
                    store = self._open_backend(name, create)
                entry = self._open[name] = _Open(store)
            else:
                self._open.move_to_end(name)
            entry.users += 1
            return entry.store

    def _open_backend(self, name: str, create: bool) -> Store:
        try:
            return self.backend.open(name, create)
        except OSError as err:  # out of file descriptors, memory
            raise StoreUnavailable(
                f"store '{name}' cannot be opened now ({err.strerror or 'a system limit'}); "
                "try again"
            ) from None

    def _has(self, name: str, attr: str) -> bool:
        store = self._take(name)
        try:
            return hasattr(store, attr)
        finally:
            self._give(name)

    def _give(self, name: str) -> None:
        with self._cond:
            entry = self._open.get(name)
            if entry is not None:
                entry.users -= 1
                if entry.users == 0:
                    self._cond.notify_all()
                    if self.max_index_bytes is not None:
                        now = entry.store.index_bytes()
                        self._index_total += now - entry.index_bytes
                        entry.index_bytes = now
                    self._make_room(over=0)

    def _set_locked(self, name: str, locked: bool) -> None:
        with self._cond:
            entry = self._open.get(name)
            if entry is not None:
                entry.locked = locked

    def _holding(self, name: str, items: Iterator[Any]) -> Iterator[Any]:
        return _Held(self, name, items)

    def _make_room(self, over: int = 1) -> None:
        """Close least recently used idle stores until ``over`` more fit under the bound."""
        idle: Callable[[_Open], bool] = lambda e: e.users == 0 and not e.locked  # noqa: E731
        while len(self._open) + over > self.max_open:
            victim = next((n for n, e in self._open.items() if idle(e)), None)
            if victim is None:
                return  # every open store is busy: over the bound until they finish
            self._close(victim)
        if self.max_index_bytes is None:
            return
        while self._index_total > self.max_index_bytes:
            # Never the most recently used: it is the store being served.
            victim = next((n for n, e in list(self._open.items())[:-1] if idle(e)), None)
            if victim is None:
                return  # the rest is busy or the newest: over budget until they finish
            self._close(victim)

    def _close(self, name: str) -> None:
        entry = self._open.pop(name)
        self._handles.pop(name, None)
        self._index_total -= entry.index_bytes
        entry.store.close()
