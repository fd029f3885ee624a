"""The Store protocol: everything the service needs from a backend, and no more.

One Store object is one named store (one SQLite file, or one schema in
PostgreSQL). The service composes records and vectors; the store persists
them, answers the two primitive searches (full text and dense) with filters
applied, and never ranks across them — fusion lives in ``halls.recall``.
Domain code never asks which backend it runs on; one contract suite
(``tests/test_store_contract.py``) runs against every implementation.
"""

from __future__ import annotations

from collections.abc import Iterator
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
    SearchFilter,
    ShortEntry,
)


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
