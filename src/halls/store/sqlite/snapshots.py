"""The SQLite store's in-memory indexes kept across a restart, beside its file.

Each mirror (vectors, full text) is written to ``<store>.sqlite3-vectors``
and ``<store>.sqlite3-text`` (``memindex/persist.py``) when its store
closes, and in the background once it has grown by half since its last
snapshot (at most once a minute); a restart maps the file back and catches
up from the store's change log as every refresh does (rows after the
snapshot's last, deletions after its last). A file is used only if its label fits the store as it is
(same vector generation, nothing past the store's rows or deletions, the
deletion log still reaching back to it), its checksums hold (the float32
vectors' checked in the background, ``Persisted.load``) and a sample of its
rows equals the store's; anything else is discarded and the mirror rebuilt
from the rows.

Deleted means gone from these files too: after every write transaction
(``Database.after_commit``) and after catching up, a file older than the
store's last deletion is unlinked; a snapshot holds only the rows alive at
its label, and one whose store deleted rows while it was being written is
unlinked at once. (Unlinked, not overwritten: a process may have it
mapped, ``persist.py``.)

An encrypted store (SQLCipher) keeps no snapshot: the files would hold its
vectors and words in the clear.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from halls.store.memindex import persist
from halls.store.memindex.vectors import Snapshot

log = logging.getLogger(__name__)

SUFFIXES = ("-vectors", "-text")
# A mirror this much larger than its last snapshot is written again in the
# background (at least this many rows more, or half as many as it had).
_SAVE_ROWS = 10_000
# Rows of a snapshot compared with the store's before it is used.
_SAMPLE = 16
# And not more often than this (seconds): a deletion discards the file, and
# rewriting it after each of a stream of deletions would write the whole
# index each time (a restart meanwhile rebuilds from the rows, as before).
_SAVE_EVERY = 60.0
# One writer thread for every store: snapshots are written one at a time.
_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="halls-snapshot")
_CHECKS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="halls-snapshot-check")


class Mirror(Protocol):
    def export(
        self, unless: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None: ...
    def restore(self, label: dict[str, Any], arrays: dict[str, np.ndarray]) -> None: ...
    def __len__(self) -> int: ...


Check = Callable[[dict[str, Any], dict[str, np.ndarray], Snapshot], bool]
"""check(label, arrays, now): whether a sample of the snapshot's rows equals the store's."""


def _room(name: str, rows: int) -> int:
    """Room for half as many rows again (a hole in the file) where the mirror appends."""
    grows = name not in ("positions", "counts", "offsets", "terms")
    return max(rows + rows // 2, 1024) if grows else rows


def fits(label: dict[str, Any], now: Snapshot) -> bool:
    """Whether a mirror labelled ``label`` can be caught up to the store as it is ``now``."""
    deleted = int(label["deleted"])
    return (
        int(label["generation"]) == now.generation
        and deleted <= now.deleted
        and int(label["max_rowid"]) <= now.max_rowid
        and (deleted == now.deleted or not now.unseen(deleted))
    )


class Persisted:
    """One mirror's snapshot file: read once, written when the mirror is ahead of it."""

    def __init__(self, path: Path | None, kind: str) -> None:
        self.path = path  # None: this store keeps no snapshot
        self.kind = kind
        self._saved: dict[str, Any] | None = None  # the label of the file we wrote or read
        self._seen: tuple[int, int, int] | None = None  # the file (inode, mtime, deleted) checked
        self._writing = threading.Lock()
        self.loaded = 0  # rows restored from the file (0: rebuilt), for tests and benchmarks
        self.closed = False
        self.checked: Future[bool] | None = None  # the background check of a file read
        self._pending = False  # a background write is queued or running
        self._last_write = -_SAVE_EVERY

    def load(
        self,
        mirror: Mirror,
        now: Snapshot,
        check: Check,
        expect: dict[str, Any],
        corrupt: Callable[[], None] = lambda: None,
    ) -> bool:
        """Restore ``mirror`` from the file if it can be trusted; discard it if not.

        The float32 vectors (three quarters of the bytes, read only to rescore
        a few hundred rows a search) are checked in the background: summing
        1.5 GB at 1M rows took 0.6-1.5 s on a busy 2-core machine. If they
        fail, the file is discarded and ``corrupt`` drops the mirror, which
        the next search rebuilds from the rows.
        """
        if self.path is None or not self.path.exists():
            return False
        found = persist.read(self.path, later=("matrix",))
        ok = found is not None
        if found is not None:
            label, arrays, left = found
            ok = (
                all(label.get(k) == v for k, v in expect.items())
                and fits(label, now)
                and check(label, arrays, now)
            )
            if ok:
                try:
                    mirror.restore(label, arrays)
                except (ValueError, KeyError, TypeError):
                    ok = False
        if not ok:
            log.warning("ignored the %s snapshot of a store: rebuilding it", self.kind)
            persist.discard(self.path)
            return False
        assert found is not None
        self._saved = found[0]
        self.loaded = int(found[0]["rows"])
        if left:
            self.checked = _CHECKS.submit(self._check_later, label, arrays, left, corrupt)
        return True

    def _check_later(
        self,
        label: dict[str, Any],
        arrays: dict[str, np.ndarray],
        left: dict[str, int],
        corrupt: Callable[[], None],
    ) -> bool:
        rows = int(label["rows"])
        if all(persist.checksum(arrays[k][:rows]) == want for k, want in left.items()):
            return True
        log.warning("the %s snapshot of a store failed its check: rebuilding it", self.kind)
        if self.path is not None and persist.label_of(self.path) == label:
            persist.discard(self.path)
        self._saved = None
        corrupt()
        return False

    def after_refresh(self, mirror: Mirror, now: Snapshot, current: Callable[[], Snapshot]) -> None:
        """Drop a file that holds rows deleted since; write one in the background when behind."""
        self.stale(now.deleted)
        if self.path is None:
            return
        saved = 0 if self._saved is None else int(self._saved["rows"])
        if len(mirror) - saved < max(_SAVE_ROWS, saved // 2) or self._pending:
            return
        if time.monotonic() - self._last_write < _SAVE_EVERY:
            return
        self._pending = True
        _WRITER.submit(self._save_quietly, mirror, current)

    def stale(self, deleted: int) -> None:
        """Discard the file if it was written before the store's last deletion, ``deleted``."""
        if self.path is None:
            return
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return
        if self._seen is not None and self._seen[:2] == (st.st_ino, st.st_mtime_ns):
            label_deleted: int | None = self._seen[2]
        else:
            label = persist.label_of(self.path)
            label_deleted = None if label is None else int(label.get("deleted", -1))
            if label_deleted is not None:
                self._seen = (st.st_ino, st.st_mtime_ns, label_deleted)
        if label_deleted is None or label_deleted < deleted:
            persist.discard(self.path)
            self._saved = None

    def _save_quietly(self, mirror: Mirror, current: Callable[[], Snapshot]) -> None:
        try:
            self.save(mirror, current)
        except Exception:  # a cache: a failed write is logged, never raised into a search
            log.exception("could not write the %s snapshot of a store", self.kind)
        finally:
            self._last_write = time.monotonic()
            self._pending = False

    def save(self, mirror: Mirror, current: Callable[[], Snapshot], blocking: bool = False) -> bool:
        """Write the mirror's live rows, unless the file already holds this state.

        False when the store deleted rows the mirror has not caught up with:
        nothing is left on disk then.
        """
        if self.path is None or not self._writing.acquire(blocking=blocking):
            return True
        try:
            if self.closed and not blocking:
                return True  # a background write queued before the store closed
            exported = mirror.export(self._saved if self.path.exists() else None)
            if exported is None:
                return True  # never refreshed, or the file holds this state
            label, arrays = exported
            persist.write(self.path, label, arrays, _room)
            self._seen = None
            # A deletion committed while the mirror was read: the file may
            # hold the row. Checked after the rename, so that whichever of
            # this and the deleting process's own check comes last sees both.
            if current().deleted != label["deleted"]:
                persist.discard(self.path)
                self._saved = None
                return False
            self._saved = label
            return True
        finally:
            self._writing.release()


def sample(rows: int) -> np.ndarray:
    """Up to ``_SAMPLE`` positions of ``rows``: the first, the last and some between."""
    if rows == 0:
        return np.zeros(0, dtype=np.int64)
    picks = np.random.default_rng().integers(0, rows, _SAMPLE - 2)
    return np.unique(np.concatenate([[0, rows - 1], picks]))
