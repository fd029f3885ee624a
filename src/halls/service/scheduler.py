"""The consolidator's timer: a thread that runs every due store (``consolidator.mode: thread``).

It knows nothing of ``Memory``: it drives anything with the three methods of
``Dreamer``. When a store is due is ``halls.consolidate.due``'s business.

One run per store at a time is the store's lock (``try_lock_consolidation``),
so the thread and an HTTP request cannot race: the loser gets a Conflict,
which the thread simply skips.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from halls.errors import Conflict, HallsError
from halls.models import Run
from halls.service.audit import acting_as

log = logging.getLogger("halls.consolidate")


class Dreamer(Protocol):
    """What the scheduler drives (``Memory`` is one)."""

    def stores(self) -> list[str]: ...

    def consolidation_due(self, store: str) -> bool: ...

    def consolidate(self, *, store: str | None = None, dry_run: bool = False) -> Run: ...


class Scheduler:
    """Runs every due store on a background thread, every ``poll`` seconds."""

    def __init__(self, dreamer: Dreamer, poll: float) -> None:
        self.dreamer = dreamer
        self.poll = poll
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # How many times the thread has looked at the stores since it started:
        # the consolidator's status reports it, so a user (or a test) can see
        # the timer is alive and that a look found nothing due.
        self.checks = 0

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
        for name in self.dreamer.stores():
            if self._stop.is_set():
                break
            try:
                if self.dreamer.consolidation_due(name):
                    with acting_as("scheduler"):
                        made.append(self.dreamer.consolidate(store=name).id)
            except Conflict:
                continue  # a run on request holds the store; it resets the clock itself
            except HallsError as exc:
                log.warning("scheduled consolidation of store %s: %s", name, exc.message)
            except Exception:
                log.exception("scheduled consolidation of store %s failed", name)
        self.checks += 1
        return made
