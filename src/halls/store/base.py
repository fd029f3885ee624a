"""The Store protocol: everything the service needs from a backend, and no more.

One Store object is one named store (one SQLite file, or one schema in
PostgreSQL). The service composes records and vectors; the store persists
them, answers the two primitive searches (full text and dense) with filters
applied, and never ranks across them — fusion lives in ``halls.recall``.
Domain code never asks which backend it runs on; one contract suite
(``tests/test_store_contract.py``) runs against every implementation.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from halls.models import (
    Brief,
    ForgetFlag,
    JournalEvent,
    LongFact,
    OpenLoop,
    Record,
    Run,
    SearchFilter,
    ShortEntry,
)
from halls.store.changes import Change


@dataclass(frozen=True, slots=True)
class Match:
    """A primitive search result: which record, and the backend's raw score."""

    id: str
    tier: str
    score: float


class Store(Protocol):
    name: str

    # -- store metadata (embedder fingerprint, consolidator clock, ...) --
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...

    # -- short-term --
    def add_short(self, entries: list[ShortEntry], vectors: np.ndarray) -> None:
        """Insert all entries atomically (all or none), committed on return."""
        ...

    def get_short(self, id: str) -> ShortEntry | None: ...
    def list_short(self, limit: int, offset: int) -> list[ShortEntry]: ...
    def delete_short(self, id: str) -> bool: ...

    # -- near-term (open loops) --
    def add_loop(self, loop: OpenLoop, vector: np.ndarray) -> None: ...
    def get_loop(self, id: str) -> OpenLoop | None: ...
    def list_loops(self, status: str | None, limit: int, offset: int) -> list[OpenLoop]: ...
    def update_loop(self, loop: OpenLoop) -> None: ...
    def delete_loop(self, id: str) -> bool: ...

    # -- long-term (written by the consolidator only) --
    def add_fact(self, fact: LongFact, vector: np.ndarray) -> None: ...
    def get_fact(self, id: str) -> LongFact | None: ...
    def list_facts(self, status: str | None, limit: int, offset: int) -> list[LongFact]: ...
    def update_fact(self, fact: LongFact) -> None: ...

    # -- journal (append-only) --
    def add_journal(self, events: list[JournalEvent]) -> None: ...
    def list_journal(self, limit: int, offset: int) -> list[JournalEvent]: ...

    # -- consolidator inputs --
    def add_brief(self, brief: Brief) -> None: ...
    def list_briefs(self, limit: int, offset: int) -> list[Brief]: ...
    def add_flag(self, flag: ForgetFlag) -> None: ...
    def list_flags(self, status: str | None) -> list[ForgetFlag]: ...

    # -- recall primitives --
    def text_search(self, terms: list[str], filt: SearchFilter, limit: int) -> list[Match]:
        """Best first by BM25 over records matching any term; ``score`` higher is better."""
        ...

    def vector_search(self, vector: np.ndarray, filt: SearchFilter, limit: int) -> list[Match]:
        """Best first by cosine similarity (vectors are unit length)."""
        ...

    def get_records(self, ids: list[str]) -> dict[str, Record]: ...

    # -- maintenance --
    def counts(self) -> dict[str, int]: ...
    def size_bytes(self) -> int: ...
    def iter_texts(self, batch: int) -> Iterator[list[tuple[str, str]]]:
        """Every embedded record as (id, text), in batches, for re-embedding."""
        ...

    def set_vectors(self, ids: list[str], vectors: np.ndarray) -> None: ...
    def close(self) -> None: ...

    # -- consolidation (see halls.consolidate) --
    def try_lock_consolidation(self) -> bool:
        """Take this store's consolidation lock without waiting; False if held elsewhere."""
        ...

    def unlock_consolidation(self) -> None: ...
    def consolidation_locked(self) -> bool: ...
    def short_for_consolidation(self) -> tuple[list[ShortEntry], list[str | None], np.ndarray]:
        """Every short-term entry, oldest first, with the fact it was consolidated into."""
        ...

    def facts_with_vectors(self, status: str) -> tuple[list[LongFact], np.ndarray]: ...
    def open_loops_with_vectors(self) -> tuple[list[OpenLoop], np.ndarray]: ...
    def journal_since(self, since: float | None) -> list[JournalEvent]: ...
    def briefs_since(self, since: float | None) -> list[Brief]: ...
    def save_run(self, run: Run) -> None: ...
    def get_run(self, id: str) -> Run | None: ...
    def list_runs(self, limit: int, offset: int) -> list[Run]:
        """Newest first."""
        ...

    def last_applied_run(self) -> Run | None: ...
    def runs_after(self, run: Run) -> list[str]: ...
    def fail_stale_runs(self, now: float) -> int: ...
    def apply_changes(self, changes: Sequence[Change], run: Run) -> None:
        """Apply every change and save the run record in one transaction."""
        ...

    def purge(
        self,
        facts: Sequence[str],
        short: Sequence[str],
        journal: Sequence[str],
        values: Sequence[str],
        flags: Sequence[str],
    ) -> None:
        """Delete for real: rows, vectors, full-text rows, edges, every copy of ``values``.

        Settles ``flags``; afterwards the bytes are gone from the backend's files.
        """
        ...

    # -- recall context --
    def around(self, ids: list[str], radius: int, filt: SearchFilter) -> list[Written]:
        """The records written up to ``radius`` places before or after each of ``ids``.

        The ids themselves are included; every record returned passes
        ``filt``, and carries its write position and vector so that recall
        can score it and tell which records were written next to which.
        """
        ...

    def term_counts(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        """How many searchable records there are, and how many of them hold each term.

        A term is matched as ``text_search`` matches it (same stemming), over
        every searchable record, whatever its tier or status.
        """
        ...


@dataclass(frozen=True, slots=True)
class Written:
    """A record as written: its write position (increasing per store) and vector."""

    id: str
    tier: str
    position: int
    occurred_at: float
    vector: np.ndarray
