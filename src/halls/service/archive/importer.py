"""Import: an archive read twice, checked whole before anything is written.

The first pass checks all of it (the passphrase, every chunk's
authentication, the checksum and counts, every record's shape, the
embedder); a damaged, altered or wrongly-unlocked archive is refused there,
before anything is written. The second writes, in batches, settling each
record whose id the store already holds by the ``on_conflict`` policy.
Searchable records are written in their original write order, so that
recall's neighbours (counted on the write sequence) and search results come
out as they were.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from halls.embed import Embedder, fingerprint
from halls.errors import Conflict, EmbedderMismatch, InvalidArchive, InvalidInput, StoreNotFound
from halls.models import (
    Brief,
    Edge,
    ForgetFlag,
    JournalEvent,
    LongFact,
    OpenLoop,
    Record,
    Retention,
    Run,
    ShortEntry,
    check_id,
    check_run_id,
)
from halls.service.archive.format import SEARCHABLE, decode_vector, read_archive
from halls.service.archive.progress import Ticker
from halls.service.stores import Stores
from halls.storable import READ_DEPTH, problem
from halls.store import changes as ch
from halls.store.base import Store

# Records per write.
_BATCH = 256


@dataclass
class ImportReport:
    """What an import did (or, dry, would do), per record kind."""

    store: str
    dry_run: bool
    reembedded: bool
    archive: dict[str, int]
    added: dict[str, int] = field(default_factory=dict)
    replaced: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "dry_run": self.dry_run,
            "reembedded": self.reembedded,
            "archive": self.archive,
            "added": self.added,
            "replaced": self.replaced,
            "kept": self.kept,
        }


def _bump(counts: dict[str, int], kind: str, n: int = 1) -> None:
    if n == 0:
        return
    counts[kind] = counts.get(kind, 0) + n


def _changed_at(item: Any) -> tuple[float, ...]:
    """When a record last changed, as far as it says: keep-newer compares these."""
    if isinstance(item, LongFact):
        return (max(item.created_at, item.last_confirmed).timestamp(),)
    if isinstance(item, OpenLoop):
        return ((item.closed_at or item.created_at).timestamp(),)
    if isinstance(item, Run):
        times = [t for t in (item.started_at, item.finished_at, item.reverted_at) if t]
        return (max(times).timestamp(),)
    if isinstance(item, ForgetFlag):
        # A settled flag is newer than the same flag pending.
        return (float(item.status == "done"), item.created_at.timestamp())
    return (item.created_at.timestamp(),)


@dataclass
class _Item:
    kind: str
    value: Any
    # Empty for records that are not searchable.
    vector: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    consolidated_into: str | None = None
    retention: Retention | None = None

    @property
    def id(self) -> str:
        return str(self.value.id)


_MODELS: dict[str, type[Any]] = {
    "journal": JournalEvent,
    "short": ShortEntry,
    "near": OpenLoop,
    "long": LongFact,
    "brief": Brief,
    "flag": ForgetFlag,
    "run": Run,
}
# The id kind each record kind must carry (runs have their own id check).
_ID_KIND = {k: k for k in ("journal", "short", "near", "long", "brief", "flag")}


def _parse(obj: dict[str, Any], line: int, dim: int | None) -> _Item:
    """One archive line as a checked record; ``InvalidArchive`` if it is not one."""
    kind = obj["kind"]
    try:
        if kind == "edge":
            e = obj["edge"]
            edge = Edge(str(e["src"]), str(e["dst"]), str(e["kind"]), float(e["created_at"]))
            if edge.kind == "supersedes":
                raise ValueError("supersedes edges are the facts' own links")
            return _Item(kind, edge)
        model = _MODELS.get(kind)
        if model is None:
            raise InvalidArchive(f"line {line} of the archive is of an unknown kind {kind!r}")
        wrong = problem(obj["record"], READ_DEPTH)
        if wrong is not None:
            # Imported, it would be skipped by every read: refused whole instead.
            raise InvalidArchive(f"line {line} of the archive: its {kind} record {wrong}")
        value = model.model_validate(obj["record"])
        if kind in _ID_KIND:
            check_id(value.id, _ID_KIND[kind])
        else:
            check_run_id(value.id)
        item = _Item(kind, value)
        if kind in SEARCHABLE:
            if dim is None:
                raise ValueError("no vector dimension in the header")
            item.vector = decode_vector(obj["vector"], dim)
            into = obj.get("consolidated_into")
            item.consolidated_into = None if into is None else check_id(str(into), "long")
            kept = obj.get("retention")
            if kept is not None:
                item.retention = Retention(int(kept["access_count"]), float(kept["last_accessed"]))
        return item
    except InvalidArchive:
        raise
    except (ValidationError, InvalidInput, KeyError, TypeError, ValueError):
        raise InvalidArchive(f"line {line} of the archive is not a valid {kind} record") from None


def items(lines: Iterator[dict[str, Any]], header: dict[str, Any]) -> Iterator[_Item]:
    """The records after the header, each parsed and checked."""
    dim = (header.get("embedder") or {}).get("dim")
    for n, obj in enumerate(lines, start=2):
        yield _parse(obj, n, dim if isinstance(dim, int) else None)


def verify(
    path: Path, passphrase: str | None, reembed: bool, embedder: Callable[[], Embedder]
) -> tuple[dict[str, Any], dict[str, int]]:
    """Read the whole archive once, checking everything; nothing is written."""
    counts: dict[str, int] = {}
    with open(path, "rb") as source:
        lines = read_archive(source, passphrase)
        header = next(lines)
        _check_embedder(header, reembed, embedder)
        seen: set[str] = set()
        for item in items(lines, header):
            _bump(counts, item.kind)
            if item.kind != "edge":
                if item.id in seen:
                    raise InvalidArchive(f"the archive holds {item.id} twice")
                seen.add(item.id)
    return header, counts


def _check_embedder(
    header: dict[str, Any], reembed: bool, embedder: Callable[[], Embedder]
) -> None:
    theirs = (header.get("embedder") or {}).get("fingerprint")
    if theirs is None or reembed:
        return
    mine = fingerprint(embedder())
    if theirs != mine:
        raise EmbedderMismatch(
            f"the archive's vectors come from {theirs} but the configured embedder is "
            f"{mine}; import with reembed (--reembed) to embed its records again"
        )


def target(stores: Stores, name: str, overwrite: bool, dry_run: bool) -> Store | None:
    """The store to import into (None: a dry run into a store that does not exist yet)."""
    try:
        s = stores.open(name)
    except StoreNotFound:
        if dry_run:
            return None
        return stores.embedded(name, create=True)
    held = sum(s.counts().values()) + len(s.list_runs(1, 0))
    if held and not overwrite:
        raise Conflict(
            f"store '{name}' already holds records; import with overwrite (--overwrite) "
            "to merge the archive into it (records already there: --on-conflict)"
        )
    return s if dry_run else stores.embedded(name)


class Importer:
    """The writing pass of an import, in batches, settling conflicts by policy."""

    def __init__(
        self,
        s: Store | None,
        report: ImportReport,
        on_conflict: str,
        reembed: bool,
        embedder: Callable[[], Embedder],
        tick: Ticker,
    ) -> None:
        self.s = s
        self.report = report
        self.policy = on_conflict
        self.reembed = reembed
        self.embedder = embedder
        self.tick = tick
        self.dry = report.dry_run
        self._journal_ids: set[str] | None = None
        self._brief_ids: set[str] | None = None
        self._flags: dict[str, ForgetFlag] | None = None
        # Entries folded into a fact, and the facts no longer active: the
        # sources of a superseded fact leave search (as a run leaves them).
        self._folded: dict[str, str] = {}
        self._stale: set[str] = set()

    def run(self, items: Iterator[_Item]) -> None:
        batch: list[_Item] = []
        for item in items:
            if batch and (item.kind != batch[0].kind or len(batch) >= _BATCH):
                self._flush(batch)
                batch = []
            batch.append(item)
            if item.kind == "short" and item.consolidated_into:
                self._folded[item.id] = item.consolidated_into
            elif item.kind == "long" and item.value.status == "superseded":
                self._stale.add(item.id)
        if batch:
            self._flush(batch)
        hide = tuple(e for e, f in self._folded.items() if f in self._stale)
        if hide and self.s is not None and not self.dry:
            self.s.apply_changes([ch.HideShort(hide, True)], None)

    def _wins(self, existing: Any, imported: Any) -> bool:
        if self.policy == "keep-imported":
            return True
        if self.policy == "keep-newer":
            return _changed_at(imported) > _changed_at(existing)
        return False

    def _flush(self, batch: list[_Item]) -> None:
        kind = batch[0].kind
        if kind in SEARCHABLE:
            self._searchable(batch)
        elif kind == "journal":
            self._journal(batch)
        elif kind == "edge":
            self._edges(tuple(i.value for i in batch))
        elif kind == "brief":
            self._briefs(batch)
        elif kind == "flag":
            self._flag(batch)
        elif kind == "run":
            self._runs(batch)
        self.tick(len(batch))

    def _edges(self, edges: tuple[Edge, ...]) -> None:
        # An edge already there (same ends and kind) is the same association:
        # kept, not added (re-importing an archive adds nothing).
        there = (
            {e.key for e in self.s.edges(sorted({e.src for e in edges}))}
            if self.s is not None
            else set()
        )
        new = tuple(e for e in edges if e.key not in there)
        _bump(self.report.kept, "edge", len(edges) - len(new))
        _bump(self.report.added, "edge", len(new))
        if new and not self.dry and self.s is not None:
            self.s.apply_changes([ch.AddEdges(new)], None)

    def _journal(self, batch: list[_Item]) -> None:
        if self._journal_ids is None:
            self._journal_ids = (
                {e.id for e in self.s.journal_since(None)} if self.s is not None else set()
            )
        new = [i.value for i in batch if i.id not in self._journal_ids]
        # The journal is append-only: an event already there is the same event.
        _bump(self.report.kept, "journal", len(batch) - len(new))
        _bump(self.report.added, "journal", len(new))
        if new and not self.dry and self.s is not None:
            self.s.add_journal(new)

    def _searchable(self, batch: list[_Item]) -> None:
        kind = batch[0].kind
        s = self.s
        existing: dict[str, Record] = s.get_records([i.id for i in batch]) if s else {}
        current = s.retention(list(existing)) if s and existing else {}
        if self.reembed:
            texts = [i.value.intent if kind == "near" else i.value.content for i in batch]
            for item, vec in zip(batch, self.embedder().embed(texts), strict=True):
                item.vector = vec
        changes: list[ch.Change] = []
        direct: list[Callable[[], Any]] = []
        touches: dict[str, tuple[int, float]] = {}
        for item in batch:
            old = existing.get(item.id)
            kept = item.retention
            if old is not None:
                if not self._wins(old, item.value):
                    _bump(self.report.kept, kind)
                    continue
                _bump(self.report.replaced, kind)
                self._replace(item, changes, direct)
                have = current.get(item.id)
                if kept is not None:
                    more = kept.access_count - (have.access_count if have else 0)
                    touches[item.id] = (max(0, more), kept.last_accessed)
                continue
            _bump(self.report.added, kind)
            if kept is not None:
                touches[item.id] = (kept.access_count, kept.last_accessed)
            if kind == "short":
                changes.append(ch.RestoreShort(item.value, item.vector, item.consolidated_into))
            elif kind == "long":
                # Sources come from the archive's edges, each with its own time.
                fact = item.value.model_copy(update={"derived_from": []})
                changes.append(ch.AddFact(fact, item.vector))
            else:
                direct.append(_add_loop(s, item))
        if self.dry or s is None:
            return
        # Loops have no Change of their own: they go first, in order, so that
        # a batch (one kind) keeps the archive's write order.
        for call in direct:
            call()
        if changes:
            s.apply_changes(changes, None)
        if touches:
            s.reinforce(touches)

    def _replace(
        self, item: _Item, changes: list[ch.Change], direct: list[Callable[[], Any]]
    ) -> None:
        s = self.s
        assert s is not None or self.dry
        value = item.value
        if item.kind == "short":
            direct.append(lambda: s.update_short(value, item.vector))  # type: ignore[union-attr]
            changes.append(ch.MarkShort((value.id,), item.consolidated_into))
        elif item.kind == "long":
            changes.append(ch.SetFact(value))
        else:
            direct.append(lambda: s.update_loop(value))  # type: ignore[union-attr]

    def _briefs(self, batch: list[_Item]) -> None:
        if self._brief_ids is None:
            self._brief_ids = (
                {b.id for b in self.s.briefs_since(None)} if self.s is not None else set()
            )
        for item in batch:
            # A brief is never edited: one already there is the same brief.
            if item.id in self._brief_ids:
                _bump(self.report.kept, "brief")
                continue
            _bump(self.report.added, "brief")
            if not self.dry and self.s is not None:
                self.s.add_brief(item.value)

    def _flag(self, batch: list[_Item]) -> None:
        if self._flags is None:
            self._flags = {f.id: f for f in self.s.list_flags(None)} if self.s is not None else {}
        changes: list[ch.Change] = []
        for item in batch:
            old = self._flags.get(item.id)
            if old is None:
                _bump(self.report.added, "flag")
                if not self.dry and self.s is not None:
                    self.s.add_flag(item.value)
            elif self._wins(old, item.value):
                _bump(self.report.replaced, "flag")
                changes.append(ch.SetFlag(item.id, item.value.status))
            else:
                _bump(self.report.kept, "flag")
        if changes and not self.dry and self.s is not None:
            self.s.apply_changes(changes, None)

    def _runs(self, batch: list[_Item]) -> None:
        for item in batch:
            run = item.value.model_copy(update={"store": self.report.store})
            old = self.s.get_run(run.id) if self.s is not None else None
            if old is not None and not self._wins(old, run):
                _bump(self.report.kept, "run")
                continue
            _bump(self.report.replaced if old is not None else self.report.added, "run")
            if not self.dry and self.s is not None:
                self.s.save_run(run)


def _add_loop(s: Store | None, item: _Item) -> Callable[[], None]:
    return lambda: s.add_loop(item.value, item.vector)  # type: ignore[union-attr]
