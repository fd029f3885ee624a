"""Reinforcement: recalls are counted in memory and written off the request path.

A search's best hits and the memories a context block shows count as
recalled (``halls.recall.strength`` makes a recalled memory fade more
slowly). Writing that on every search would put a write transaction on the
read path; instead recalls are merged here and a daemon thread writes each
store's batch every ``recall.reinforce_flush_seconds``, and at close. A
consolidation run flushes first, so that it decays from current figures.
Recalls not yet written when the process dies are lost: they only tune
strength, and are never acknowledged to anyone.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from halls.errors import HallsError
from halls.service.stores import Stores

log = logging.getLogger("halls.reinforce")


class Reinforcer:
    def __init__(self, stores: Stores, flush_seconds: float) -> None:
        self._stores = stores
        self._every = flush_seconds
        self._lock = threading.Lock()
        # store -> id -> (times recalled, last time)
        self._pending: dict[str, dict[str, tuple[int, float]]] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def note(self, store: str, ids: Sequence[str], when: float) -> None:
        """Count one recall of each of ``ids`` at ``when``; returns at once."""
        if not ids:
            return
        with self._lock:
            pending = self._pending.setdefault(store, {})
            for i in ids:
                times, last = pending.get(i, (0, when))
                pending[i] = (times + 1, max(last, when))
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._loop, name="halls-reinforce", daemon=True
                )
                self._thread.start()

    def flush(self, store: str | None = None) -> None:
        """Write what is pending (for one store, or all) now."""
        with self._lock:
            if store is None:
                batches, self._pending = self._pending, {}
            else:
                batches = {store: self._pending.pop(store)} if store in self._pending else {}
        for name, touches in batches.items():
            try:
                self._stores.open(name).reinforce(touches)
            except HallsError as exc:  # the store was deleted, or is busy past its timeout
                log.warning("recalls of store %s not recorded: %s", name, exc.message)

    def _loop(self) -> None:
        while not self._stop.wait(self._every):
            try:
                self.flush()
            except Exception:  # a bad flush must not end reinforcement for good
                log.exception("writing recalls failed")

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self._every + 5)
            self._thread = None
        self.flush()
