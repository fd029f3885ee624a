"""An exact in-memory vector index over a store's float32 vectors.

A search scans an int8 copy of the matrix, then rescores in float32 the rows
that can still be in the top k: the same rows and the same scores as a
float32 product, for a quarter of its memory traffic. At 100k x 384 a
float32 product reads 150 MB per query and is memory-bound; a float16 copy
read 75 MB (~6.4 ms on one core of a plain AVX2 machine); the int8 copy
reads 38 MB with NumKong's integer kernels (~2.8 ms; exact integer sums).

Why the result is exact. Each row x is stored as ``s * xi + ex``: xi the
int8 row (``rint(x / s)``, s = max|x| / 127, one scale per row) and ex
what rounding left; the query q likewise as ``t * qi + eq``. Then

    x.q = s t (xi.qi) + s (xi.eq) + t (ex.qi) + ex.eq

and by Cauchy-Schwarz the last three terms are at most
``s |xi| |eq| + |ex| (t |qi| + |eq|)`` (Euclidean norms), a bound ``eps``
per row from two numbers kept per row (``s |xi|`` and ``|ex|``) and three
per query, plus a margin for rounding (``_ROUNDING``). Every row's true score
lies within ``eps`` of ``approx = s t (xi.qi)``; if the k-th best lower
bound ``approx - eps`` is T, no row whose upper bound ``approx + eps`` is
below T can be in the top k, and every other row is rescored in float32.
On MiniLM vectors eps is ~0.013, and ~400 of 100k rows are rescored.

The index mirrors the ``docs`` table by rowid and is refreshed incrementally:
new rows (a larger max rowid) are appended; deletions are logged in their
own table (rows gone stay in the matrix until a quarter are gone: searches
drop them with the ids they read); re-embedding bumps a generation counter,
which triggers a full reload. That also catches writes made by another
process (the CLI beside a server).

Rows live in buffers with spare capacity (grown by half each time), so that
appending a batch copies the batch, not the whole matrix: a search after
every write stays cheap at 100k rows.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from itertools import islice
from typing import Any

import numkong
import numpy as np
from threadpoolctl import ThreadpoolController

# One BLAS thread for the float32 products: a second one saves a millisecond
# at 100k rows on an idle machine, but spins after each call and doubled the
# CPU cost of a search (and its latency, under load) on a shared 2-core machine.
_BLAS = ThreadpoolController()

# A margin for rounding, relative to |x| |q|: the rescored scores are
# rounded once to float32 (2^-24), the bound's own terms in float64; 5e-5 is
# also above the worst float32 rounding of a 384-term sum (d x 2^-24).
_ROUNDING = 5e-5
# From this many rows the scan is split over two threads (below, a thread
# hand-off costs more than half a scan saves).
_SPLIT_ROWS = 16_384
_SCAN_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="halls-scan")
# Decided at run time from the cores this process may use: with one, the
# second half would only queue behind the first.
_CORES_TO_SPLIT = len(os.sched_getaffinity(0)) > 1 if hasattr(os, "sched_getaffinity") else True
# Rows read from SQLite per slice when loading.
_LOAD_ROWS = 8192


def locate(ids: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where ``rows`` sit in the ascending ``ids``: (mask of rows found, their positions)."""
    if len(ids) == 0:
        return np.zeros(len(rows), dtype=bool), np.zeros(0, dtype=np.int64)
    pos = np.minimum(np.searchsorted(ids, rows), len(ids) - 1)
    found = ids[pos] == rows
    return found, pos[found]


@dataclass(frozen=True)
class Snapshot:
    """Where a store's search rows stand: read in one statement, before loading."""

    generation: int  # bumped by re-embedding: every vector may have changed
    deleted: int  # the last entry of the deletion log (0: none yet)
    oldest: int  # its oldest entry kept (older ones are trimmed)
    max_rowid: int

    def unseen(self, seen: int | None) -> bool:
        """Whether an index that read the log up to ``seen`` missed trimmed entries."""
        return seen is None or seen < self.oldest - 1


Gone = Callable[[int, int], np.ndarray]
"""gone(after, upto): the rowids deleted by log entries after ``after``, up to ``upto``."""


class VectorIndex:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._size = 0
        self._rowid_buf = np.zeros(0, dtype=np.int64)
        self._matrix_buf = np.zeros((0, dim), dtype=np.float32)
        self._int8 = _Int8Rows.empty(0, dim)
        self._finite = True
        self._generation: int | None = None
        self._deleted: int | None = None
        self._dead = 0
        # Which rows are still in the store (None: all): a snapshot leaves
        # the dead out (persist.py), searches drop them by id as before.
        self._alive: np.ndarray | None = None
        self._max_rowid = 0
        self._lock = threading.Lock()

    def refresh(
        self,
        snapshot: Snapshot,
        load: Callable[[int], Iterable[tuple[int, bytes]]],
        gone: Gone,
    ) -> None:
        """Bring the index up to date with the store.

        ``load(after)`` yields (rowid, blob) of the rows after a rowid.
        Deleted rows may stay in the matrix: searches drop them when they
        read the best rows' ids, so they only cost scan time; past a quarter
        of the rows, or when the deletion log no longer reaches back to what
        the index last read, the index is reloaded.
        """
        generation, max_rowid = snapshot.generation, snapshot.max_rowid
        with self._lock:
            if snapshot.deleted != self._deleted:
                if self._size and snapshot.unseen(self._deleted):
                    self._generation = None
                elif self._size:
                    self._mark_dead(gone(self._deleted or 0, snapshot.deleted))
                    if self._dead > self._size // 4:
                        self._generation = None  # mostly deleted rows: reload
                self._deleted = snapshot.deleted
            if generation != self._generation:
                # New buffers, not cleared ones: a search still scoring the
                # old matrix keeps its own view of it.
                self._size = 0
                self._rowid_buf = np.zeros(0, dtype=np.int64)
                self._matrix_buf = np.zeros((0, self.dim), dtype=np.float32)
                self._int8 = _Int8Rows.empty(0, self.dim)
                self._finite = True
                self._max_rowid = 0
                self._dead = 0
                self._alive = None
                self._generation = generation
            if max_rowid <= self._max_rowid:
                return
            found = iter(load(self._max_rowid))
            # In slices: a whole 100k-row store read at once held its blobs
            # twice over (the rows, then their join), ~300 MB that the
            # allocator kept after the load.
            while rows := list(islice(found, _LOAD_ROWS)):
                ids = np.fromiter((r for r, _ in rows), dtype=np.int64, count=len(rows))
                blob = b"".join(b for _, b in rows)
                mat = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), self.dim)
                self._append(ids, mat)
                self._max_rowid = int(ids.max())
            self._max_rowid = max(self._max_rowid, max_rowid)

    def _mark_dead(self, rows: np.ndarray) -> None:
        n = self._size
        pos = locate(self._rowid_buf[:n], rows)[1]
        alive = np.ones(n, dtype=bool) if self._alive is None else self._alive.copy()
        pos = pos[alive[pos]]  # each row dies once
        alive[pos] = False
        self._alive = alive  # a new array: an export keeps the mask it took
        self._dead += len(pos)

    @property
    def nbytes(self) -> int:
        """The bytes the index holds in memory (its buffers, spare capacity included)."""
        alive = 0 if self._alive is None else self._alive.nbytes
        return self._rowid_buf.nbytes + self._matrix_buf.nbytes + self._int8.nbytes + alive

    def export(
        self, unless: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
        """(label, arrays) of the live rows, for ``persist.write``; None if never
        refreshed, or if the label would be ``unless``'s (the file holds this state).

        Rows [:n] never change in place, so the arrays are read outside the lock.
        """
        with self._lock:
            if self._generation is None:
                return None
            n, alive, finite = self._size, self._alive, self._finite
            label: dict[str, Any] = {
                "kind": "vectors",
                "dim": self.dim,
                "generation": self._generation,
                "deleted": self._deleted or 0,
                "max_rowid": self._max_rowid,
                "finite": finite,
                "tops": self._int8.tops.tolist(),
            }
            if unless is not None and all(unless.get(k) == v for k, v in label.items()):
                return None
            arrays: dict[str, np.ndarray] = {
                "rowids": self._rowid_buf[:n],
                "matrix": self._matrix_buf[:n],
            }
            if finite:
                names = ("codes", "scale", "spread", "residual", "norm")
                arrays.update(zip(names, self._int8.view(n).arrays(), strict=True))
        if alive is not None:
            arrays = {k: a[alive] for k, a in arrays.items()}
        label["rows"] = len(arrays["rowids"])
        return label, arrays

    def restore(self, label: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        """Take the state ``export`` gave (arrays with room past ``label['rows']``)."""
        n = int(label["rows"])
        rowids, matrix = arrays["rowids"], arrays["matrix"]
        if matrix.shape[1:] != (self.dim,) or len(rowids) != len(matrix) or len(rowids) < n:
            raise ValueError("the snapshot does not fit the index")
        finite = bool(label["finite"])
        if finite:
            tops = np.asarray(label["tops"], dtype=np.float64)
            int8 = _Int8Rows(
                arrays["codes"],
                arrays["scale"],
                arrays["spread"],
                arrays["residual"],
                arrays["norm"],
                tops,
            )
            if any(len(a) != len(rowids) for a in int8.arrays()):
                raise ValueError("the snapshot's arrays differ in length")
        else:
            int8 = _Int8Rows.empty(len(rowids), self.dim)
        with self._lock:
            self._rowid_buf, self._matrix_buf, self._int8 = rowids, matrix, int8
            self._size, self._finite = n, finite
            self._generation = int(label["generation"])
            self._deleted = int(label["deleted"])
            self._max_rowid = int(label["max_rowid"])
            self._dead, self._alive = 0, None

    def _append(self, ids: np.ndarray, mat: np.ndarray) -> None:
        n, grow = self._size, len(ids)
        if n + grow > len(self._rowid_buf):
            # Readers hold views of the old buffers (rows [:n] never change
            # in place), so growing copies into new ones instead of resizing.
            capacity = max(n + grow, n + n // 2, 1024)
            rowid_buf = np.empty(capacity, dtype=np.int64)
            matrix_buf = np.empty((capacity, self.dim), dtype=np.float32)
            rowid_buf[:n] = self._rowid_buf[:n]
            matrix_buf[:n] = self._matrix_buf[:n]
            self._int8 = self._int8.grown(capacity, n)
            self._rowid_buf, self._matrix_buf = rowid_buf, matrix_buf
        self._rowid_buf[n : n + grow] = ids
        self._matrix_buf[n : n + grow] = mat
        if self._alive is not None:
            self._alive = np.concatenate([self._alive, np.ones(grow, dtype=bool)])
        if self._finite and np.isfinite(mat).all():
            self._int8.put(n, mat)
        else:
            self._finite = False  # no int8 scan for this generation
        self._size = n + grow

    def __len__(self) -> int:
        return self._size

    def scan(self, query: np.ndarray) -> Scan:
        """Score every row against ``query``; pick the best with ``Scan.best``."""
        with self._lock:
            n, finite = self._size, self._finite
            rowids, matrix = self._rowid_buf[:n], self._matrix_buf[:n]
            rows = self._int8.view(n)
        query = np.ascontiguousarray(query, dtype=np.float32)
        if n == 0 or not finite or not np.isfinite(query).all():
            with _BLAS.limit(limits=1, user_api="blas"):
                return Scan(rowids, matrix, query, matrix @ query, None)
        approx, bound = rows.scores(query)
        return Scan(rowids, matrix, query, approx, bound)

    def lookup(self, rowids: np.ndarray, generation: int) -> tuple[np.ndarray, np.ndarray]:
        """(known mask, float32 vectors of the known rows) for ``rowids``.

        Nothing is known when ``generation`` is not the index's: a row may
        have been re-embedded since.
        """
        with self._lock:
            n, current = self._size, self._generation == generation
            ids, matrix = self._rowid_buf[:n], self._matrix_buf[:n]
        if not current or n == 0:
            return np.zeros(len(rowids), dtype=bool), np.zeros((0, self.dim), np.float32)
        known, pos = locate(ids, rowids)
        return known, matrix[pos]

    @staticmethod
    def top(scores: np.ndarray, k: int) -> np.ndarray:
        """Indices of the k best scores, best first; equal scores in index order.

        Ties are common (the same text written twice has the same vector), and
        ``argpartition`` orders them as it happens to: breaking them by index
        makes the result depend on the scores only.
        """
        k = min(k, len(scores))
        if k <= 0:
            return np.zeros(0, dtype=np.int64)
        line = -np.partition(-scores, k - 1)[k - 1]
        reach = np.flatnonzero(scores >= line)  # ascending: the order of ties
        return reach[np.argsort(-scores[reach], kind="stable")][:k]


@dataclass(frozen=True)
class _Int8Rows:
    """The int8 copy of the rows, and per row what its error bound needs."""

    codes: np.ndarray  # int8 (rows, dim): rint(x / s)
    scale: np.ndarray  # float64: s = max|x| / 127 (0 for a zero row)
    spread: np.ndarray  # float64: s |xi|, what scales the query's rounding
    residual: np.ndarray  # float64: |ex| = |x - s xi|
    norm: np.ndarray  # float64: |x|, what scales float32's own rounding
    tops: np.ndarray  # the largest spread, residual and norm so far (only grow)

    @classmethod
    def empty(cls, capacity: int, dim: int) -> _Int8Rows:
        zeros = partial(np.zeros, capacity, dtype=np.float64)
        codes = np.zeros((capacity, dim), np.int8)
        return cls(codes, zeros(), zeros(), zeros(), zeros(), np.zeros(3))

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays())

    def grown(self, capacity: int, n: int) -> _Int8Rows:
        """A copy with room for ``capacity`` rows, its first ``n`` kept."""
        out = _Int8Rows.empty(capacity, self.codes.shape[1])
        for old, new in zip(self.arrays(), out.arrays(), strict=True):
            new[:n] = old[:n]
        out.tops[:] = self.tops
        return out

    def arrays(self) -> tuple[np.ndarray, ...]:
        return self.codes, self.scale, self.spread, self.residual, self.norm

    def put(self, at: int, mat: np.ndarray) -> None:
        """Quantise the finite rows ``mat`` into rows ``at`` onwards."""
        codes, scale, residual = _quantise(mat.astype(np.float64))
        end = at + len(mat)
        self.codes[at:end] = codes
        self.scale[at:end] = scale
        self.spread[at:end] = scale * np.linalg.norm(codes.astype(np.float64), axis=1)
        self.residual[at:end] = np.linalg.norm(residual, axis=1)
        self.norm[at:end] = np.linalg.norm(mat.astype(np.float64), axis=1)
        added = (self.spread[at:end].max(), self.residual[at:end].max(), self.norm[at:end].max())
        np.maximum(self.tops, added, out=self.tops)

    def view(self, n: int) -> _Int8Rows:
        codes, scale, spread, residual, norm = (a[:n] for a in self.arrays())
        return _Int8Rows(codes, scale, spread, residual, norm, self.tops)

    def scores(self, query: np.ndarray) -> tuple[np.ndarray, Bound]:
        """The approximate scores of every row against ``query``, and their error bounds."""
        q = query.astype(np.float64)
        (qi,), (t,), (eq,) = _quantise(q[None, :])
        eq_norm = float(np.linalg.norm(eq))
        approx = _int8_dots(qi, self.codes)  # a new array: scaled in place
        np.multiply(approx, self.scale, out=approx)
        approx *= t
        row = t * float(np.linalg.norm(qi.astype(np.float64))) + eq_norm
        rounding = _ROUNDING * float(np.linalg.norm(q))
        return approx, Bound(
            self.spread, self.residual, self.norm, self.tops, eq_norm, row, rounding
        )


@dataclass(frozen=True)
class Bound:
    """Each row's error bound for one query: spread x ``query`` + residual x ``row``
    + norm x ``rounding`` (the terms of the module docstring), computed only
    for the rows asked; ``ceiling`` bounds them all."""

    spread: np.ndarray
    residual: np.ndarray
    norm: np.ndarray
    tops: np.ndarray  # the largest spread, residual and norm of any row
    query: float
    row: float
    rounding: float = 0.0

    def rounded(self, rounding: float) -> Bound:
        return Bound(
            self.spread, self.residual, self.norm, self.tops, self.query, self.row, rounding
        )

    def at(self, rows: np.ndarray) -> np.ndarray:
        eps = self.spread[rows] * self.query
        eps += self.residual[rows] * self.row
        eps += self.norm[rows] * self.rounding
        return eps

    @property
    def ceiling(self) -> float:
        spread, residual, norm = self.tops.tolist()
        return spread * self.query + residual * self.row + norm * self.rounding


def _quantise(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(int8 codes, scale per row, residual) of float64 rows: mat = scale x codes + residual."""
    scale = np.abs(mat).max(axis=1) / 127.0
    safe = np.where(scale > 0, scale, 1.0)  # a zero row stays zeros
    codes = np.clip(np.rint(mat / safe[:, None]), -127, 127).astype(np.int8)
    return codes, scale, mat - codes.astype(np.float64) * scale[:, None]


def _int8_dots(query: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Exact integer dot products of every row with ``query``, on two threads when it pays.

    The scan is memory-bound: two threads, each over half the rows, take
    ~1.4 instead of ~2.8 ms at 100k on a plain AVX2 core. By the time a
    search scans, its full-text half is done, so the second core is free.
    """
    q = query[None, :]
    if len(codes) < _SPLIT_ROWS or not _CORES_TO_SPLIT:
        return np.asarray(numkong.cdist(q, codes, metric="dot", threads=1)).reshape(-1)
    mid = len(codes) // 2
    upper = _SCAN_POOL.submit(numkong.cdist, q, codes[mid:], metric="dot", threads=1)
    lower = np.asarray(numkong.cdist(q, codes[:mid], metric="dot", threads=1)).reshape(-1)
    return np.concatenate([lower, np.asarray(upper.result()).reshape(-1)])


@dataclass(frozen=True)
class Scan:
    """One query's approximate scores over a snapshot of the index."""

    rowids: np.ndarray
    matrix: np.ndarray
    query: np.ndarray
    approx: np.ndarray
    bound: Bound | None  # the scores' error bounds; None: the scores are exact

    def best(self, k: int, positions: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(positions, exact scores) of the k best rows (among ``positions``), best first."""
        approx = self.approx if positions is None else self.approx[positions]
        if self.bound is None:
            chosen = VectorIndex.top(approx, k)
            where = chosen if positions is None else positions[chosen]
            return where, approx[chosen]
        if k >= len(approx):
            chosen = np.arange(len(approx))
        else:
            chosen = self._candidates(approx, k, positions)
        where = chosen if positions is None else positions[chosen]
        exact = _exact(self.matrix[where], self.query)
        order = VectorIndex.top(exact, k)
        return where[order], exact[order]

    def _candidates(self, approx: np.ndarray, k: int, positions: np.ndarray | None) -> np.ndarray:
        """The rows whose upper bound reaches T, the k-th best lower bound: any
        other is beaten by k rows whatever its true score.

        Only rows within twice the largest bound of the k-th best approximate
        score can (k rows lie above it, so T is at least that score less one
        bound), and per-row bounds are computed for those alone.
        """
        assert self.bound is not None
        kth = np.partition(approx, len(approx) - k)[len(approx) - k]
        near = np.flatnonzero(approx >= kth - 2 * self.bound.ceiling)
        eps = self.bound.at(near if positions is None else positions[near])
        close = approx[near]
        lower = close - eps
        line = np.partition(lower, len(lower) - k)[len(lower) - k]
        return near[close + eps >= line]


def _exact(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The dot products rounded once to float32: summed in float64, where the
    product of two float32 numbers is exact and 384 of them add up within
    1e-13, so a row's score does not depend on which other rows were rescored
    with it (a float32 BLAS product's last bits do: its kernels block rows)."""
    return (rows.astype(np.float64) @ query.astype(np.float64)).astype(np.float32)
