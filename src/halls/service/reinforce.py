"""Reinforcement: uses are counted in memory and written off the request path.

A memory counts as used (``halls.recall.strength`` makes a used memory fade
more slowly) when someone opens it by id (``GET /short/{id}``,
``/long/{id}``, ``/near/{id}``) or a context block shows it to the agent
(what it is given at a session's start, kept from fading into
retirement). Being returned by a search is not use: counting it made
whatever ranked high once rank
higher after (up to 25% with the default ``recall.recency_weight``), a
popularity bias that cost LoCoMo recall (issue 52). Writing a use on every
read would put a write transaction on the read path; instead uses are
merged here and a daemon thread writes each store's batch every
``recall.reinforce_flush_seconds``, and at close. A
consolidation run flushes first, so that it decays from current figures.
Recalls not yet written when the process dies are lost: they only tune
strength, and are never acknowledged to anyone.

With ``co_recall`` among ``recall.graph_edges``, the memories a search
returns together at the top are linked pairwise (a ``co_recall`` edge,
written in the same flush), so that one of them found later lifts the others
(``halls.recall.spread``); that counts no use.
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

    def note(self, store: str, ids: Sequence[str], when: float) -> None:
        """Count one use of each of ``ids`` at ``when``. Returns at once."""
        if not ids:
            return
        with self._lock:
            pending = self._pending.setdefault(store, {})
            for i in ids:
                times, last = pending.get(i, (0, when))
                pending[i] = (times + 1, max(last, when))
            self._started()

    def link(self, store: str, ids: Sequence[str], when: float) -> None:
        """Link ``ids`` pairwise (``co_recall``), counting no use. Returns at once."""
        if len(ids) < 2:
            return
        with self._lock:
            pairs = self._pairs.setdefault(store, {})
            distinct = sorted(set(ids))
            for n, a in enumerate(distinct):
                for b in distinct[n + 1 :]:
                    pairs.setdefault((a, b), when)
            self._started()

    def _started(self) -> None:
        """Start the writer thread on first need (called holding the lock)."""
        if self._thread is None and not self._stop.is_set():
            self._thread = threading.Thread(target=self._loop, name="halls-reinforce", daemon=True)
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
        # A store may have links and no uses (searches link, only reads use).
        for name in {**batches, **linked}:
            touches, pairs = batches.get(name, {}), linked.get(name, {})
            try:
                s = self._stores.open(name)
                if touches:
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
