"""Copy named stores from one backend to another (``halls migrate``).

Everything goes through the ``Store`` protocol, so any backend can be the
source or the target: every tier with its vectors, in the source's write
order (neighbours and episodes count places on it), each record as it is
(a fact's status, retired included, its pin and category), each record's
recalls (access count and last access: its reinforcement), the edges with
their times and order, the journal in append order, briefs, forget flags,
run records with their actions, and the meta values halls keeps (the
embedder fingerprint, the next consolidation time).

A copy adds what the target lacks, by id, and nothing else: run it again
and it copies nothing. It is not a sync: a record already in the target is
left as it is. A target store whose embedder fingerprint differs from the
source's is refused (its vectors would not compare).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from halls.config import StorageSettings
from halls.consolidate.due import NEXT_DUE
from halls.errors import EmbedderMismatch
from halls.models import Edge, LongFact, OpenLoop, Run, ShortEntry
from halls.service.stores import FINGERPRINT_KEY
from halls.store import Store, check_store_name, open_backend
from halls.store import changes as ch

# The meta values halls writes (the protocol has no listing of keys).
META_KEYS = (FINGERPRINT_KEY, NEXT_DUE)
KINDS = ("short", "near", "long", "recalls", "edges", "journal", "briefs", "flags", "runs", "meta")
_PAGE = 1000
_BATCH = 500

Progress = Callable[[str, int, int], None]
"""progress(store, done, total): records copied (or counted) so far in that store."""


@dataclass(frozen=True)
class Place:
    """Where stores live: a backend's settings and its data directory."""

    storage: StorageSettings
    data_dir: Path


@dataclass
class Copied:
    """Per kind, how many were (or, in a dry run, would be) copied."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _pages(read: Callable[[int, int], list]) -> Iterator:
    offset = 0
    while page := read(_PAGE, offset):
        yield from page
        offset += len(page)


def migrate_stores(
    source: Place,
    target: Place,
    stores: Sequence[str] | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> dict[str, Copied]:
    """Copy ``stores`` (all of the source's when None) from source to target."""
    src_backend = open_backend(source.storage, source.data_dir)
    dst_backend = open_backend(target.storage, target.data_dir)
    try:
        names = [check_store_name(n) for n in stores] if stores else src_backend.names()
        out = {}
        for name in names:
            src = src_backend.open(name, False)
            try:
                if dry_run and not dst_backend.exists(name):
                    out[name] = _copy(src, None, progress)
                    continue
                dst = dst_backend.open(name, True)
                try:
                    out[name] = _copy(src, dst, progress, dry_run)
                finally:
                    dst.close()
            finally:
                src.close()
        return out
    finally:
        src_backend.close()
        dst_backend.close()


def _copy(
    src: Store, dst: Store | None, progress: Progress | None, dry_run: bool = False
) -> Copied:
    """Copy what ``dst`` lacks (``dst`` None: an empty target); a dry run writes nothing."""
    done = Copied()
    ours, theirs = src.get_meta(FINGERPRINT_KEY), dst and dst.get_meta(FINGERPRINT_KEY)
    if ours and theirs and ours != theirs:
        raise EmbedderMismatch(
            f"store '{src.name}' exists in the target with another embedder ({theirs}, not {ours})"
        )
    write = None if dry_run else dst
    total = sum(src.counts().values())
    step = 0

    def tick(kind: str, n: int) -> None:
        nonlocal step
        done.counts[kind] += n
        step += n
        if progress:
            progress(src.name, min(step, total), total)

    # Records of the three searchable tiers, in the source's write order.
    short = {e.id: (e, into) for e, into in zip(*src.short_for_consolidation()[:2], strict=True)}
    loops = {lp.id: lp for lp in _pages(lambda lim, off: src.list_loops(None, lim, off))}
    facts = {f.id: f for f in _pages(lambda lim, off: src.list_facts(None, lim, off))}
    ids = [*short, *loops, *facts]
    have = set(dst.get_records(ids)) if dst else set()
    ordered = [i for i in src.vectors(ids) if i not in have]
    runs = list(_pages(src.list_runs))
    # Read before any write. Changes go in without a run record (an import's
    # way): the runs themselves are copied below, and a store imported from an
    # archive may hold consolidated records with no run at all.
    new_runs = [r for r in reversed(runs) if dst is None or dst.get_run(r.id) != r]
    edges = _edges(src, ids, facts)
    stamped = {
        e.key
        for e in edges
        if e.kind == "derived_from"
        and e.src in facts
        and e.created_at == facts[e.src].created_at.timestamp()
    }
    for start in range(0, len(ordered), _BATCH):
        chunk = ordered[start : start + _BATCH]
        vectors = src.vectors(chunk)
        # Recalls go with the records they are of (a record already in the
        # target keeps its own): reinforce adds to a new record's zero.
        recalls = src.retention(chunk)
        if write:
            _write_records(write, chunk, vectors, short, loops, facts, runs, stamped)
            write.reinforce({i: (r.access_count, r.last_accessed) for i, r in recalls.items()})
        for i in chunk:
            tick("short" if i in short else "near" if i in loops else "long", 1)
        tick("recalls", len(recalls))

    # Edges a fact did not make when it was added (later confirmations), with
    # their own times, in the order the source holds them.
    if dst is None:  # a dry run into no store: each new fact makes its stamped edges
        theirs_edges = set(stamped)
    else:
        theirs_edges = {e.key for e in _all_edges(dst, ids)}
        if dry_run:  # the facts this copy would add would make their stamped edges
            theirs_edges |= {k for k in stamped if k[0] not in have}
    missing = tuple(e for e in edges if e.key not in theirs_edges)
    if missing and write:
        write.apply_changes([ch.AddEdges(missing)], None)
    tick("edges", len(missing))

    journal = list(_pages(src.list_journal))[::-1]  # append order
    held = {e.id for e in _pages(dst.list_journal)} if dst else set()
    new_journal = [e for e in journal if e.id not in held]
    for start in range(0, len(new_journal), _BATCH):
        if write:
            write.add_journal(new_journal[start : start + _BATCH])
    tick("journal", len(new_journal))

    held = {b.id for b in _pages(dst.list_briefs)} if dst else set()
    for brief in reversed(list(_pages(src.list_briefs))):
        if brief.id not in held:
            if write:
                write.add_brief(brief)
            tick("briefs", 1)
    held = {f.id for f in dst.list_flags(None)} if dst else set()
    for flag in src.list_flags(None):
        if flag.id not in held:
            if write:
                write.add_flag(flag)
            tick("flags", 1)
    for run in new_runs:
        if write:
            write.save_run(run)
        tick("runs", 1)
    for key in META_KEYS:
        value = src.get_meta(key)
        if value is not None and (dst is None or dst.get_meta(key) != value):
            if write:
                write.set_meta(key, value)
            tick("meta", 1)
    return done


def _write_records(
    dst: Store,
    chunk: list[str],
    vectors: dict[str, np.ndarray],
    short: dict[str, tuple[ShortEntry, str | None]],
    loops: dict[str, OpenLoop],
    facts: dict[str, LongFact],
    runs: list[Run],
    stamped: set[tuple[str, str, str]],
) -> None:
    """Write one chunk in order; consecutive short entries go in one batch.

    A fact is added with the sources whose edges it made itself (stamped
    with its creation); the others follow as edges with their own times.
    """
    pending: list[str] = []

    def flush() -> None:
        if not pending:
            return
        entries = [short[i] for i in pending]
        if any(into for _, into in entries):
            # The fact an entry was consolidated into only a change can set.
            changes = [ch.RestoreShort(e, vectors[e.id], into) for e, into in entries]
            dst.apply_changes(changes, None)
        else:
            dst.add_short([e for e, _ in entries], np.stack([vectors[i] for i in pending]))
        pending.clear()

    for i in chunk:
        if i in short:
            pending.append(i)
            continue
        flush()
        if i in loops:
            dst.add_loop(loops[i], vectors[i])
        else:
            f = facts[i]
            own = [s for s in f.derived_from if (f.id, s, "derived_from") in stamped]
            dst.add_fact(f.model_copy(update={"derived_from": own}), vectors[i])
    flush()


def _edges(src: Store, ids: list[str], facts: dict[str, LongFact]) -> list[Edge]:
    """Every stored edge of the source's records; a fact's sources in its order."""
    found = [e for e in _all_edges(src, ids) if e.kind != "supersedes"]
    by_key = {e.key: e for e in found}
    out: list[Edge] = []
    for f in facts.values():
        for s in f.derived_from:
            e = by_key.pop((f.id, s, "derived_from"), None)
            if e is not None:
                out.append(e)
    return out + [e for e in found if e.key in by_key]


def _all_edges(src: Store, ids: list[str]) -> list[Edge]:
    # Every edge halls makes starts at a record: a fact (its sources), an
    # entry or a fact (the names it mentions), a memory (its co-recalls).
    out: list[Edge] = []
    for start in range(0, len(ids), _BATCH):
        out += src.edges(ids[start : start + _BATCH])
    seen: set[tuple[str, str, str]] = set()
    return [e for e in out if not (e.key in seen or seen.add(e.key))]  # type: ignore[func-returns-value]
