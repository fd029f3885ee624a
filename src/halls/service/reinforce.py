"""Reinforcement: recalls are counted in memory and written off the request path.

A search's best hits and the memories a context block shows count as
recalled (``halls.recall.strength`` makes a recalled memory fade more
slowly). Writing that on every search would put a write transaction on the
read path; instead recalls are merged here and a daemon thread writes each
store's batch every ``recall.reinforce_flush_seconds``, and at close. A
consolidation run flushes first, so that it decays from current figures.
Recalls not yet written when the process dies are lost: they only tune
strength, and are never acknowledged to anyone.

With ``co_recall`` among ``recall.graph_edges``, the memories a search
returns together at the top are also linked pairwise (a ``co_recall`` edge,
written in the same flush), so that one of them found later lifts the others
(``halls.recall.spread``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from halls.errors import HallsError
from halls.models import Edge
from halls.service.stores import Stores
from halls.store import changes as ch

CO_RECALL = "co_recall"

log = logging.getLogger("halls.reinforce")


class Reinforcer:
    def __init__(self, stores: Stores, flush_seconds: float) -> None:
        self._stores = stores
        self._every = flush_seconds
        self._lock = threading.Lock()
        # store -> id -> (times recalled, last time)
        self._pending: dict[str, dict[str, tuple[int, float]]] = {}
        # store -> (id, id) in id order -> first time recalled together
        self._pairs: dict[str, dict[tuple[str, str], float]] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def note(self, store: str, ids: Sequence[str], when: float, together: bool = False) -> None:
        """Count one recall of each of ``ids`` at ``when``; ``together`` also links
        them pairwise (``co_recall``). Returns at once."""
        if not ids:
            return
        with self._lock:
            pending = self._pending.setdefault(store, {})
            for i in ids:
                times, last = pending.get(i, (0, when))
                pending[i] = (times + 1, max(last, when))
            if together:
                pairs = self._pairs.setdefault(store, {})
                distinct = sorted(set(ids))
                for n, a in enumerate(distinct):
                    for b in distinct[n + 1 :]:
                        pairs.setdefault((a, b), when)
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
                linked, self._pairs = self._pairs, {}
            else:
                batches = {store: self._pending.pop(store)} if store in self._pending else {}
                linked = {store: self._pairs.pop(store)} if store in self._pairs else {}
        for name, touches in batches.items():
            pairs = linked.get(name, {})
            try:
                s = self._stores.open(name)
                s.reinforce(touches)
                if pairs:
                    # A record deleted since the search would keep an edge that no
                    # delete removes any more: link only records still there.
                    alive = set(s.get_records(sorted({i for p in pairs for i in p})))
                    edges = tuple(
                        Edge(a, b, CO_RECALL, when)
                        for (a, b), when in pairs.items()
                        if a in alive and b in alive
                    )
                    s.apply_changes([ch.AddEdges(edges)], None)
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
