"""The Store protocol: everything the service needs from a backend, and no more.

One Store object is one named store (one SQLite file, or the rows of one
store id in PostgreSQL's shared tables). The service composes records and
vectors; the store persists them, answers the two primitive searches (full
text and dense) with filters applied, and never ranks across them: fusion
lives in ``halls.recall``.

``Store`` is the union of six small protocols, one per concern, so that a
caller (and a new backend) can see which part it uses:

- ``Records``: each tier's records, edges, meta, work scopes;
- ``SearchIndex``: the recall primitives over the searchable tiers;
- ``JournalIndex``: full text over the journal, asked for by name only;
- ``RunLog``: consolidation run records;
- ``Consolidation``: a run's lock, inputs, changes and the purge;
- ``Maintenance``: counts, sizes, re-embedding, closing.

What every backend guarantees (and ``tests/test_store_contract.py`` checks,
against each backend through ``halls.store.open_backend``):

- Times are unix seconds (``datetime`` in records), always given by the
  caller: a store never reads its own clock.
- Nothing backend-shaped leaves a store: no row addresses, no planner hints,
  no driver exceptions. A failure is a ``HallsError``: a duplicate id is
  ``AlreadyExists``, anything else the backend cannot do
  ``StoreUnavailable``.
- Every write method is atomic and durable on return.
- The searchable tiers are short, near and long; a record is *active*
  (visible to a default search) when it is a short entry not consolidated
  into a fact, an open loop, or a fact that is not superseded.
- Deleting a record (any method, any tier) deletes the edges touching it,
  and a deleted fact's neighbours lose their supersession link to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, Protocol, TypeGuard

import numpy as np

from halls.models import (
    Brief,
    Edge,
    ForgetFlag,
    JournalEvent,
    LongFact,
    Match,
    OpenLoop,
    Record,
    Retention,
    Run,
    Scope,
    SearchFilter,
    ShortEntry,
    Written,
)
from halls.store.changes import Change

# Given the store's turn count and its scopes (every open one and each one
# named), the new turn count and the scopes to write (halls.scopes).
ScopeStep = Callable[[int, dict[str, Scope]], tuple[int, list[Scope]]]


class ScopeTurn(NamedTuple):
    """A write's turn of the work scopes, taken in the write's own transaction (one
    commit, and no write without its turn): the scopes it wrote for, and the step."""

    names: Sequence[str]
    step: ScopeStep


class Records(Protocol):
    """The records of each tier, their edges, and the store's meta values.

    Lists are newest first by id (ids sort by creation) unless said otherwise,
    and take ``limit``/``offset``. A record read back equals the one written.
    """

    name: str

    def get_meta(self, key: str) -> str | None:
        """The value set for ``key``, or None."""
        ...

    def set_meta(self, key: str, value: str) -> None:
        """Set (or overwrite) ``key``."""
        ...

    def add_short(
        self,
        entries: list[ShortEntry],
        vectors: np.ndarray,
        edges: Sequence[Edge] = (),
        turn: ScopeTurn | None = None,
    ) -> None:
        """Insert all entries, and ``edges`` (their associations), atomically (all
        or none), committed on return; with ``turn``, take it in the same
        transaction (as ``update_scopes``).

        An id already stored (or twice in the batch) is ``AlreadyExists``
        and nothing is written; a ``supersedes`` edge is ``InvalidInput``.
        """
        ...

    def get_short(self, id: str) -> ShortEntry | None: ...
    def list_short(self, limit: int, offset: int) -> list[ShortEntry]: ...
    def delete_short(self, id: str) -> bool:
        """Delete the entry, its search rows and its edges; False if it was not there.

        No byte of it may stay in the backend's files once this returns, beyond
        what the backend's own vacuum reclaims (docs/reliability.md, Deletion).
        """
        ...

    def update_short(self, entry: ShortEntry, vector: np.ndarray | None) -> bool:
        """Overwrite content, topic, pinned, metadata and expires_at; False if it was not there.

        With a ``vector`` (the content changed) the entry is searched by its new
        words and vector at once; its reinforcement is kept.
        """
        ...

    def add_loop(self, loop: OpenLoop, vector: np.ndarray, turn: ScopeTurn | None = None) -> None:
        """Insert the loop (and take ``turn``, as ``add_short``)."""
        ...

    def get_loop(self, id: str) -> OpenLoop | None: ...
    def list_loops(self, status: str | None, limit: int, offset: int) -> list[OpenLoop]:
        """Loops of that status (all when None)."""
        ...

    def update_loop(self, loop: OpenLoop) -> None:
        """Overwrite status, closed_at, expires_at and topic; only an open loop is active."""
        ...

    def delete_loop(self, id: str) -> bool:
        """Delete the loop, its search rows and its edges, as ``delete_short``."""
        ...

    def add_fact(self, fact: LongFact, vector: np.ndarray) -> None:
        """Insert a fact; each of ``fact.derived_from`` becomes a ``derived_from``
        edge stamped ``fact.created_at``."""
        ...

    def get_fact(self, id: str) -> LongFact | None:
        """The fact; its ``derived_from`` is read from its ``derived_from`` edges,
        oldest edge first (the edges are the one truth of a fact's sources)."""
        ...

    def list_facts(
        self, status: str | None, limit: int, offset: int, category: str | None = None
    ) -> list[LongFact]:
        """Facts newest first, of that status and category (any when None)."""
        ...

    def update_fact(self, fact: LongFact) -> None:
        """Overwrite the mutable fields; ``derived_from`` is ignored (edges change
        through ``AddEdges``/``RemoveEdges``)."""
        ...

    def fact_chain(self, id: str) -> list[LongFact]:
        """The supersession chain through ``id`` (``supersedes`` back,
        ``superseded_by`` forward), oldest first, ``id`` included, in one query;
        empty when there is no such fact. A link to a missing fact ends the chain."""
        ...

    def add_journal(self, events: list[JournalEvent], turn: ScopeTurn | None = None) -> None:
        """Append events (atomically; and take ``turn``, as ``add_short``)."""
        ...

    def get_journal(self, id: str) -> JournalEvent | None:
        """The event, or None (deletion of one event: ``Consolidation.purge``)."""
        ...

    def list_journal(self, limit: int, offset: int) -> list[JournalEvent]:
        """Newest appended first."""
        ...

    def add_brief(self, brief: Brief) -> None: ...
    def get_brief(self, id: str) -> Brief | None:
        """The brief, or None (a run's inputs name briefs; the viewer shows their text)."""
        ...

    def list_briefs(self, limit: int, offset: int) -> list[Brief]: ...
    def add_flag(self, flag: ForgetFlag) -> None: ...
    def list_flags(self, status: str | None) -> list[ForgetFlag]:
        """Flags of that status (all when None), oldest first."""
        ...

    def get_records(self, ids: list[str]) -> dict[str, Record]:
        """The short entries, loops and facts among ``ids`` (by id prefix); absent ones skipped."""
        ...

    def reinforce(self, touches: Mapping[str, tuple[int, float]]) -> None:
        """Record recalls: ``{id: (times, when)}`` adds ``times`` to the record's
        access count and raises its last access to ``when``. Ids of records that
        are not (or no longer) searchable are ignored."""
        ...

    def retention(self, ids: Sequence[str]) -> dict[str, Retention]:
        """The reinforcement of those ``ids`` that were ever reinforced."""
        ...

    def edges(self, ids: Sequence[str], kinds: Sequence[str] | None = None) -> list[Edge]:
        """Every edge with ``src`` or ``dst`` among ``ids`` (of ``kinds``, when
        given), oldest first; each edge once. ``supersedes`` edges are the
        facts' ``supersedes`` links (time: the newer fact's ``created_at``)."""
        ...

    def adjacent(self, ids: Sequence[str], kinds: Sequence[str], limit: int) -> list[Edge]:
        """The stored edges of ``kinds`` with ``src`` or ``dst`` among ``ids``, for
        each (id, kind) that has at most ``limit`` of them (counting both
        directions); an (id, kind) with more gives none. Each edge once, in no
        set order. A read costs at most ``limit + 1`` rows per id and kind
        whatever a node's degree: how association spreading bounds its fan-out.
        ``ids`` may name graph nodes that are no record (a name's ``e_`` node).
        ``supersedes`` is ``InvalidInput`` (read those through ``edges``)."""
        ...

    def list_scopes(self, status: str | None, limit: int, offset: int) -> list[Scope]:
        """Work scopes of that status (all when None), the last written for first
        (``last_turn`` descending, then by name)."""
        ...

    def update_scopes(self, names: Sequence[str], step: ScopeStep) -> list[Scope]:
        """In one transaction, serialised with every other write to the store: read
        the turn count (meta ``scope_turn``, 0 when unset) and the open scopes
        and those of ``names``; call ``step``; store the turn count and upsert the
        scopes it returns (by name), which are returned. An error ``step`` raises
        leaves everything as it was."""
        ...


class SearchIndex(Protocol):
    """The recall primitives over the searchable tiers (short, near, long).

    Every method applies ``SearchFilter`` exactly: tiers, ``include_superseded``
    (else active records only), topic equality, and ``since <= occurred_at <=
    until``. A record deleted is gone from every method at once.
    """

    def text_search(self, terms: list[str], filt: SearchFilter, limit: int) -> list[Match]:
        """Best first by BM25 over records matching any term; ``score`` higher is better.

        BM25 as FTS5 computes it (k1 = 1.2, b = 0.75, IDF ln((N - n + 0.5) /
        (n + 0.5)), N and n counted over every searchable record whatever the
        filter), with the score negated so that higher is better. Words are
        tokenised as FTS5's ``porter unicode61 remove_diacritics 2``: case-
        and diacritic-folded, porter-stemmed. A term is a word, never an
        operator: ``"AND"``, quotes, ``*`` or ``NEAR`` are plain text. A term
        of several tokens matches them as a phrase.
        """
        ...

    def vector_search(self, vector: np.ndarray, filt: SearchFilter, limit: int) -> list[Match]:
        """Best first by cosine similarity (vectors are unit length), exact:
        the score is the dot product; no approximate index may drop a row
        that passes the filter."""
        ...

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of searchable records, in write order.

        Ids not (or no longer) stored are absent.
        """
        ...

    def neighbours(self, ids: Sequence[str], radius: int, filt: SearchFilter) -> list[Written]:
        """The records written up to ``radius`` places before or after each of ``ids``.

        Places are counted on the store's write sequence (``Written.seq``: it
        grows with every searchable record written and is never reused),
        gaps left by deleted records included. The ids themselves are
        included; every record returned passes ``filt``.
        """
        ...

    def term_counts(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        """How many searchable records there are, and how many of them hold each term.

        A term is matched as ``text_search`` matches it (same stemming), over
        every searchable record, whatever its tier or status.
        """
        ...


class JournalIndex(Protocol):
    """Full text over the journal's events, kept apart from ``SearchIndex``.

    Apart, so that the journal's many raw turns count in none of the
    searchable tiers' BM25 statistics: a default search ranks as if the
    journal were not searchable. Events are not embedded (an append stays
    cheap).
    """

    def journal_search(self, terms: list[str], filt: SearchFilter, limit: int) -> list[Match]:
        """Best first by BM25 over the journal's events matching any term.

        Scored, tokenised and matched as ``text_search`` (FTS5's BM25 and
        tokenizer), with N and n counted over the searchable events. A
        ``private`` event is never found (it is not indexed); a ``summary``
        one is found by its content. ``filt``'s topic, since and until apply
        (by the event's ``occurred_at``); its tiers, category and
        ``include_superseded`` do not. Matches carry the tier ``journal``.
        """
        ...


class RunLog(Protocol):
    """Consolidation run records, with their actions in order."""

    def save_run(self, run: Run) -> None:
        """Insert or overwrite the run (its actions replaced whole)."""
        ...

    def get_run(self, id: str) -> Run | None: ...
    def list_runs(self, limit: int, offset: int) -> list[Run]:
        """Newest first (by ``started_at``, then id)."""
        ...

    def last_applied_run(self) -> Run | None:
        """The newest run that is ``done`` and not an operator purge."""
        ...

    def runs_after(self, run: Run) -> list[str]:
        """Ids of applied (``done``, non-operator) runs that started after ``run``, oldest first."""
        ...

    def fail_stale_runs(self, now: float) -> int:
        """Mark runs left ``running`` (a crash) as failed at ``now``; how many."""
        ...


class Consolidation(Protocol):
    """What a consolidation run needs: its lock, its inputs, its changes, the purge."""

    def try_lock_consolidation(self) -> bool:
        """Take this store's consolidation lock without waiting; False if held elsewhere.

        Held elsewhere includes another handle on the same store, in this
        process or another (PostgreSQL: an advisory lock).
        """
        ...

    def unlock_consolidation(self) -> None:
        """Release the lock this handle holds."""
        ...

    def consolidation_locked(self) -> bool:
        """Whether any handle holds the lock now."""
        ...

    def short_for_consolidation(self) -> tuple[list[ShortEntry], list[str | None], np.ndarray]:
        """Every short-term entry, oldest first, with the fact it was consolidated into."""
        ...

    def facts_with_vectors(self, status: str) -> tuple[list[LongFact], np.ndarray]:
        """The facts of ``status`` by id, and their vectors (one row each)."""
        ...

    def open_loops_with_vectors(self) -> tuple[list[OpenLoop], np.ndarray]:
        """The open loops by id, and their vectors."""
        ...

    def journal_since(self, since: float | None) -> list[JournalEvent]:
        """Events created at or after ``since`` (all when None), in append order."""
        ...

    def briefs_since(self, since: float | None) -> list[Brief]:
        """Briefs created at or after ``since`` (all when None), oldest first."""
        ...

    def apply_changes(self, changes: Sequence[Change], run: Run | None) -> None:
        """Apply every change and save the run record (if any) in one transaction.

        A change that fails (e.g. ``AlreadyExists``) rolls back all of them
        and the run record. See ``halls.store.changes`` for each change.
        Without a run (``None``: an import writing records with their
        consolidation state and edges) no run record is written.
        """
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

        Records holding one of ``values`` anywhere (short, journal, long,
        near) go too; briefs, flag reasons and earlier run records keep
        ``[purged]`` in its place. Settles ``flags`` (``done``). Afterwards
        ``holds(value)`` is False for each purged content and value: the
        bytes are gone from the backend's files (checkpoint, vacuum).
        """
        ...


class Maintenance(Protocol):
    def counts(self) -> dict[str, int]:
        """Rows per kind: short, near, long, journal, briefs, forget_flags."""
        ...

    def index_bytes(self) -> int:
        """About how many bytes this store's in-memory search indexes hold (0 if none).

        Cheap (no I/O): the registry sums it over open stores after every call.
        """
        ...

    def size_bytes(self) -> int:
        """What the store occupies on disk (or in its database)."""
        ...

    def holds(self, value: str) -> bool:
        """Whether the bytes of ``value`` are anywhere in what the backend stores
        (files, WAL, index): the check that proves a purge."""
        ...

    def iter_texts(self, batch: int) -> Iterator[list[tuple[str, str]]]:
        """Every embedded record as (id, text), in batches, for re-embedding."""
        ...

    def set_vectors(self, ids: list[str], vectors: np.ndarray) -> None:
        """Replace the vectors of those records (re-embedding); searches see them at once."""
        ...

    def close(self) -> None:
        """Release connections; the handle is not used afterwards."""
        ...


class Store(Records, SearchIndex, JournalIndex, RunLog, Consolidation, Maintenance, Protocol):
    """One named store: every concern above."""


class FileBackup(Protocol):
    """What a store whose data lives in files may offer besides ``Store``: a
    consistent copy of them, taken while the store serves (``halls backup``).
    Not part of ``Store``: a backend without it says so, and export works on any."""

    def backup(self, target: Path) -> None:
        """Copy the whole store, consistent as of one instant, into the file ``target``."""
        ...


def offers_file_backup(store: object) -> TypeGuard[FileBackup]:
    """Whether ``store`` offers ``FileBackup``, asked by looking the method up.

    Not ``isinstance`` against a runtime-checkable protocol: since Python 3.12
    that looks attributes up statically (``inspect.getattr_static``), so it
    never sees what the registry's store handles forward through
    ``__getattr__``, and every store would be refused its backup.
    """
    return callable(getattr(store, "backup", None))
