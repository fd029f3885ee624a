"""The consolidation timer (halls.service.scheduler) and how Memory starts and stops it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from halls import Conflict, Memory, Settings
from halls.errors import ConsolidationFailed
from halls.models import Run
from halls.service.scheduler import Scheduler


class _Dreamer:
    """A stand-in for Memory: stores, which are due, and what consolidating one does."""

    def __init__(self, due: set[str], fails: dict[str, Exception] | None = None) -> None:
        self.due = due
        self.fails = fails or {}
        self.ran: list[str] = []
        self.ticked = threading.Event()

    def stores(self) -> list[str]:
        self.ticked.set()
        return ["a", "b", "c"]

    def consolidation_due(self, store: str) -> bool:
        return store in self.due

    def consolidate(self, *, store: str | None = None, dry_run: bool = False) -> Run:
        assert store is not None and not dry_run
        if store in self.fails:
            raise self.fails[store]
        self.ran.append(store)
        self.due.discard(store)
        return Run.model_construct(id=f"run_{store}")


def test_tick_runs_due_stores_only() -> None:
    """A tick consolidates each due store once and returns the run ids."""
    dreamer = _Dreamer({"a", "c"})
    assert Scheduler(dreamer, poll=60).tick() == ["run_a", "run_c"]
    assert dreamer.ran == ["a", "c"]


def test_tick_skips_busy_and_failing_stores() -> None:
    """A store held by a run on request, or whose run fails, does not stop the others."""
    fails: dict[str, Exception] = {
        "a": Conflict("busy"),
        "b": ConsolidationFailed("engine down"),
    }
    dreamer = _Dreamer({"a", "b", "c"}, fails)
    assert Scheduler(dreamer, poll=60).tick() == ["run_c"]


def test_thread_polls_until_stopped() -> None:
    """start() runs ticks on a thread; stop() ends it."""
    dreamer = _Dreamer({"b"})
    scheduler = Scheduler(dreamer, poll=0.01)
    scheduler.start()
    assert dreamer.ticked.wait(10)
    scheduler.stop()
    assert dreamer.ran == ["b"]
    assert not any(t.name == "halls-consolidator" for t in threading.enumerate())


def _memory(tmp_path: Path, embedder: Any, mode: str) -> Memory:
    settings = Settings(data_dir=tmp_path, consolidator={"mode": mode, "poll_seconds": 60})
    return Memory(settings, embedder=embedder)


def test_memory_starts_the_timer_in_thread_mode_only(tmp_path: Path, embedder: Any) -> None:
    """start_background() starts the timer for mode thread, not external; close() stops it."""

    def timers() -> int:
        return sum(t.name == "halls-consolidator" for t in threading.enumerate())

    with _memory(tmp_path / "ext", embedder, "external") as memory:
        memory.start_background()
        assert timers() == 0
    memory = _memory(tmp_path / "thr", embedder, "thread")
    memory.start_background()
    memory.start_background()  # idempotent: still one timer
    assert timers() == 1
    memory.close()
    assert timers() == 0
