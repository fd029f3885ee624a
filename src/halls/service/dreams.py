"""Consolidation ("dreaming") as seen from the service: run, review, revert, purge.

The steps and engines live in ``halls.consolidate``; ``Dreams`` composes them
with the stores, the embedder and the clock, and ``Memory`` delegates to it.
Imports of the engines are deferred so that a server that never dreams does
not load them (the llm engine pulls in an HTTP client and its schemas).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from halls.config import Settings
from halls.consolidate.due import next_due, set_next_due
from halls.errors import Conflict, ConsolidationFailed, NotFound
from halls.models import Run, check_id, check_page, check_run_id, to_datetime
from halls.service.stores import Stores

Embed = Callable[[list[str]], np.ndarray]
Reporter = Callable[[str, int, int], None]  # (stage, done, total): halls.consolidate.progress


class RunOutcomes:
    """How many consolidations this process attempted, by outcome (for /metrics).

    Outcomes are ``halls.models.RunOutcome``. Kept here rather than in an
    adapter so that runs of the scheduler thread count as well as runs on
    request.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def add(self, outcome: str) -> None:
        with self._lock:
            self._counts[outcome] = self._counts.get(outcome, 0) + 1

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)


class Dreams:
    """Consolidation runs of every store: run, list, review and apply a plan, revert,
    schedule, purge."""

    def __init__(
        self, stores: Stores, settings: Settings, clock: Callable[[], float], embed: Embed
    ) -> None:
        self.settings = settings
        self.clock = clock
        self._stores = stores
        self._embed = embed
        self.run_outcomes = RunOutcomes()

    def _consolidation_engine(self) -> Any:
        cfg = self.settings.consolidator
        if cfg.engine == "llm":
            from halls.consolidate.llm import LLMEngine

            return LLMEngine(cfg)
        from halls.consolidate.heuristic import HeuristicEngine

        return HeuristicEngine()

    def consolidate(
        self, *, store: str | None = None, dry_run: bool = False, progress: Reporter | None = None
    ) -> Run:
        """Run the consolidator on a store now; a dry run returns the plan, changes nothing.
        ``progress(stage, done, total)`` is told how far the run is as it goes."""
        from halls.consolidate.runner import Runner

        cfg = self.settings.consolidator
        s = self._stores.embedded(store)
        runner = Runner(
            s,
            self._consolidation_engine(),
            cfg,
            self._embed,
            self.clock,
            self.settings.recall,
            progress=progress,
        )
        try:
            run = runner.run(dry_run=dry_run)
        except ConsolidationFailed:
            self.run_outcomes.add("failed")
            if not dry_run:
                # Retry within the hour rather than every poll (or not for 20 h).
                set_next_due(s, self.clock() + min(cfg.interval_seconds, 3600))
            raise
        except Conflict:
            self.run_outcomes.add("busy")
            raise
        except Exception:
            self.run_outcomes.add("failed")
            raise
        self.run_outcomes.add(run.status)
        if not dry_run:
            set_next_due(s, self.clock() + cfg.interval_seconds)
        return run

    def list_runs(self, *, store: str | None = None, limit: int = 50, offset: int = 0) -> list[Run]:
        """Consolidation run records, newest first."""
        return self._stores.open(store).list_runs(*check_page(limit, offset))

    def get_run(self, id: str, *, store: str | None = None) -> Run:
        run = self._stores.open(store).get_run(check_run_id(id))
        if run is None:
            raise NotFound(f"no consolidation run {id}")
        return run

    def revert_run(self, id: str, *, store: str | None = None) -> Run:
        """Undo a run's non-purge actions (purges are irreversible by design)."""
        from halls.consolidate.revert import revert

        run = self.get_run(id, store=store)
        s = self._stores.embedded(store)
        with self._locked(s):
            return revert(s, run, self._embed, self.clock())

    def review_run(
        self,
        id: str,
        *,
        approve: list[int] | None = None,
        reject: list[int] | None = None,
        store: str | None = None,
    ) -> Run:
        """Approve and reject actions of a dry run's plan (numbered from 1); all or none."""
        from halls.consolidate.review import set_reviews

        run = self.get_run(id, store=store)
        s = self._stores.open(store)
        with self._locked(s):
            # Read again under the lock: an apply may have just turned it into a run.
            run = self.get_run(id, store=store)
            reviewed = set_reviews(run, list(approve or []), list(reject or []))
            s.save_run(reviewed)
        return reviewed

    def apply_run(self, id: str, *, store: str | None = None) -> Run:
        """Apply a reviewed plan's approved actions as one run (the rest are dropped)."""
        from halls.consolidate.review import apply_plan

        self.get_run(id, store=store)  # 404 before the lock
        s = self._stores.embedded(store)
        with self._locked(s):
            run, purge = apply_plan(s, self.get_run(id, store=store), self.clock())
            if purge["facts"]:
                try:
                    s.purge(**purge)
                except Exception as exc:
                    run.status = "failed"
                    run.error = f"purge failed ({type(exc).__name__}); retried next run"
                    s.save_run(run)
                    raise ConsolidationFailed(f"run {run.id}: {run.error}") from None
        self.run_outcomes.add(run.status)
        return run

    @contextmanager
    def _locked(self, s: Any) -> Iterator[None]:
        if not s.try_lock_consolidation():
            raise Conflict(f"a consolidation run for store '{s.name}' is in progress")
        try:
            yield
        finally:
            s.unlock_consolidation()

    def consolidation_due(self, store: str) -> bool:
        now = self.clock()
        return (
            next_due(self._stores.open(store), now, self.settings.consolidator.interval_seconds)
            <= now
        )

    def consolidation_status(self, *, store: str | None = None) -> dict[str, Any]:
        """Mode, next due time, whether a run is in progress, and the last run."""
        cfg = self.settings.consolidator
        s = self._stores.open(store)
        last = self._last_run(s)
        due = next_due(s, self.clock(), cfg.interval_seconds)
        return {
            "store": s.name,
            "mode": cfg.mode,
            "engine": cfg.engine,
            "interval_seconds": cfg.interval_seconds,
            "next_due_at": to_datetime(due).isoformat(),
            "running": s.consolidation_locked(),
            "last_run": None
            if last is None
            else {
                "id": last.id,
                "status": last.status,
                "started_at": last.started_at.isoformat(),
                "finished_at": last.finished_at.isoformat() if last.finished_at else None,
                "counts": last.counts,
            },
        }

    @staticmethod
    def _last_run(s: Any) -> Run | None:
        """The newest run record that is not a dry run's plan (a plan is not a run)."""
        offset = 0
        while page := s.list_runs(50, offset):
            found = next((r for r in page if r.status != "planned"), None)
            if found is not None:
                return found
            offset += len(page)
        return None

    def purge_fact(self, id: str, *, store: str | None = None) -> Run:
        """The operator's emergency door: purge one fact now, recorded as a run."""
        from halls.consolidate.runner import operator_purge

        s = self._stores.open(store)
        fact = s.get_fact(check_id(id, "long"))
        if fact is None:
            raise NotFound(f"no long-term fact {id}")
        return operator_purge(s, fact, self.clock())
