"""Scheduling: when a store is next due, and the thread that runs due stores.

The next due time is stored in the store itself (meta key
``consolidator.next_due``), so a restart does not reset the clock: a server
that was down when a store fell due runs it at its first check. A store
seen for the first time is due one interval later, not at once. Every
applied run (on a timer or on request) sets the next due time to
``finished + interval_seconds``.

One run per store at a time is the store's lock (``try_lock_consolidation``),
so the thread and an HTTP request cannot race: the loser gets a Conflict,
which the thread simply skips.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from halls.errors import Conflict, HallsError
from halls.store.base import Store

if TYPE_CHECKING:
    from halls.service import Memory

log = logging.getLogger("halls.consolidate")
NEXT_DUE = "consolidator.next_due"


def next_due(store: Store, now: float, interval: float) -> float:
    """The store's next due time, set to ``now + interval`` when it has none."""
    value = store.get_meta(NEXT_DUE)
    if value is None:
        due = now + interval
        store.set_meta(NEXT_DUE, repr(due))
        return due
    return float(value)


def set_next_due(store: Store, when: float) -> None:
    store.set_meta(NEXT_DUE, repr(when))


class Scheduler:
    """Runs every due store on a background thread (``consolidator.mode: thread``)."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.poll = memory.settings.consolidator.poll_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name="halls-consolidator", daemon=True
            )
            self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.tick()
            self._stop.wait(self.poll)

    def tick(self) -> list[str]:
        """Run every store that is due now; return the ids of the runs made."""
        made = []
        for name in self.memory.stores():
            if self._stop.is_set():
                break
            try:
                if self.memory.consolidation_due(name):
                    made.append(self.memory.consolidate(store=name).id)
            except Conflict:
                continue  # a run on request holds the store; it resets the clock itself
            except HallsError as exc:
                log.warning("scheduled consolidation of store %s: %s", name, exc.message)
            except Exception:
                log.exception("scheduled consolidation of store %s failed", name)
        return made


def start_scheduler(memory: Memory) -> Scheduler | None:
    """The running scheduler when ``consolidator.mode`` is thread, else None."""
    if memory.settings.consolidator.mode != "thread":
        return None
    scheduler = Scheduler(memory)
    scheduler.start()
    return scheduler
