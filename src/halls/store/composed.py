"""The Store methods a backend answers with its parts, forwarded once for both backends.

A backend's store class is composed of plain parts over its database:
``_search`` (the ``SearchIndex`` methods themselves), ``_journal``
(``JournalIndex``), ``_lock`` (the
consolidation lock), ``_cons`` (a run's inputs and changes), ``_runs``
(run records), ``_purger`` and ``_scopes`` (work scopes). ``ComposedStore`` maps the protocol's
methods onto them; the store class itself keeps the records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from halls.models import (
    Brief,
    JournalEvent,
    LongFact,
    Match,
    OpenLoop,
    Run,
    Scope,
    SearchFilter,
    ShortEntry,
    Written,
)
from halls.store import changes as ch
from halls.store.base import JournalIndex, ScopeStep, SearchIndex


class LockPart(Protocol):
    def try_acquire(self) -> bool: ...
    def release(self) -> None: ...
    def held(self) -> bool: ...


class ConsolidationPart(Protocol):
    def short_for_consolidation(
        self,
    ) -> tuple[list[ShortEntry], list[str | None], np.ndarray]: ...
    def facts_with_vectors(self, status: str) -> tuple[list[LongFact], np.ndarray]: ...
    def open_loops_with_vectors(self) -> tuple[list[OpenLoop], np.ndarray]: ...
    def journal_since(self, since: float | None) -> list[JournalEvent]: ...
    def briefs_since(self, since: float | None) -> list[Brief]: ...
    def apply_changes(self, changes: Sequence[ch.Change], run: Run | None) -> None: ...


class RunLogPart(Protocol):
    def save(self, run: Run) -> None: ...
    def get(self, id: str) -> Run | None: ...
    def recent(self, limit: int, offset: int) -> list[Run]: ...
    def last_applied(self) -> Run | None: ...
    def after(self, run: Run) -> list[str]: ...
    def fail_stale(self, now: float) -> int: ...


class PurgePart(Protocol):
    def purge(
        self,
        facts: Sequence[str],
        short: Sequence[str],
        journal: Sequence[str],
        values: Sequence[str],
        flags: Sequence[str],
    ) -> None: ...


class ScopesPart(Protocol):
    def select(self, status: str | None, limit: int, offset: int) -> list[Scope]: ...
    def update(self, names: Sequence[str], step: ScopeStep) -> list[Scope]: ...


class ComposedStore:
    _search: SearchIndex
    _journal: JournalIndex
    _lock: LockPart
    _cons: ConsolidationPart
    _runs: RunLogPart
    _purger: PurgePart
    _scopes: ScopesPart

    # -- work scopes --

    def list_scopes(self, status: str | None, limit: int, offset: int) -> list[Scope]:
        return self._scopes.select(status, limit, offset)

    def update_scopes(self, names: Sequence[str], step: ScopeStep) -> list[Scope]:
        return self._scopes.update(names, step)

    # -- search --

    def text_search(self, terms: list[str], filt: SearchFilter, limit: int) -> list[Match]:
        return self._search.text_search(terms, filt, limit)

    def vector_search(self, vector: np.ndarray, filt: SearchFilter, limit: int) -> list[Match]:
        return self._search.vector_search(vector, filt, limit)

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return self._search.vectors(ids)

    def neighbours(self, ids: Sequence[str], radius: int, filt: SearchFilter) -> list[Written]:
        return self._search.neighbours(ids, radius, filt)

    def term_counts(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        return self._search.term_counts(terms)

    def journal_search(self, terms: list[str], filt: SearchFilter, limit: int) -> list[Match]:
        return self._journal.journal_search(terms, filt, limit)

    # -- the consolidation lock --

    def try_lock_consolidation(self) -> bool:
        return self._lock.try_acquire()

    def unlock_consolidation(self) -> None:
        self._lock.release()

    def consolidation_locked(self) -> bool:
        return self._lock.held()

    # -- consolidation inputs and changes --

    def short_for_consolidation(self) -> tuple[list[ShortEntry], list[str | None], np.ndarray]:
        return self._cons.short_for_consolidation()

    def facts_with_vectors(self, status: str) -> tuple[list[LongFact], np.ndarray]:
        return self._cons.facts_with_vectors(status)

    def open_loops_with_vectors(self) -> tuple[list[OpenLoop], np.ndarray]:
        return self._cons.open_loops_with_vectors()

    def journal_since(self, since: float | None) -> list[JournalEvent]:
        return self._cons.journal_since(since)

    def briefs_since(self, since: float | None) -> list[Brief]:
        return self._cons.briefs_since(since)

    def apply_changes(self, changes: Sequence[ch.Change], run: Run | None) -> None:
        self._cons.apply_changes(changes, run)

    # -- run records --

    def save_run(self, run: Run) -> None:
        self._runs.save(run)

    def get_run(self, id: str) -> Run | None:
        return self._runs.get(id)

    def list_runs(self, limit: int, offset: int) -> list[Run]:
        return self._runs.recent(limit, offset)

    def last_applied_run(self) -> Run | None:
        return self._runs.last_applied()

    def runs_after(self, run: Run) -> list[str]:
        return self._runs.after(run)

    def fail_stale_runs(self, now: float) -> int:
        return self._runs.fail_stale(now)

    # -- purge --

    def purge(
        self,
        facts: Sequence[str],
        short: Sequence[str],
        journal: Sequence[str],
        values: Sequence[str],
        flags: Sequence[str],
    ) -> None:
        self._purger.purge(facts, short, journal, values, flags)
