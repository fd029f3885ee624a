"""An exact in-memory vector index over a store's float32 vectors.

A search scans a half-precision (float16) copy of the matrix, then rescores
the rows that can still be in the top k with the float32 vectors: the same
rows and the same scores as a float32 product, for half the memory traffic.
At 100k x 384 a float32 product reads 150 MB per query and is memory-bound
(3 ms idle, 5-6 ms while the full-text search runs on the other core); the
float16 scan reads 75 MB with SIMD kernels (NumKong, float32 accumulators).

Why the result is exact: rounding unit vectors to float16 moves a cosine by
at most ``eps`` (below, a safe bound on 2u + u^2 + the float32 sum's own
error, u = 2^-11). If the k-th best approximate score is A, every row of the
true top k scores at least A - 2 eps approximately, so rescoring every row
above that line finds them all.

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
from itertools import islice

import numkong
import numpy as np
from threadpoolctl import ThreadpoolController

# One BLAS thread for the float32 products: a second one saves a millisecond
# at 100k rows on an idle machine, but spins after each call and doubled the
# CPU cost of a search (and its latency, under load) on a shared 2-core machine.
_BLAS = ThreadpoolController()

# Bound on |float16 cosine - float32 cosine| for unit vectors (2u + u^2 is
# 9.8e-4; the float32 accumulation and float16 subnormals add ~5e-5), with
# margin. Scaled by the norms when vectors are not unit length.
_HALF_EPS = 1.25e-3
# Beyond this norm a float16 copy could overflow (max 65504): scan float32.
_HALF_MAX_NORM = 64.0
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
        self._half_buf = np.zeros((0, dim), dtype=np.float16)
        self._max_norm = 0.0
        self._generation: int | None = None
        self._deleted: int | None = None
        self._dead = 0
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
                    dead = gone(self._deleted or 0, snapshot.deleted)
                    self._dead += len(locate(self._rowid_buf[: self._size], dead)[1])
                    if self._dead > self._size // 4:
                        self._generation = None  # mostly deleted rows: reload
                self._deleted = snapshot.deleted
            if generation != self._generation:
                # New buffers, not cleared ones: a search still scoring the
                # old matrix keeps its own view of it.
                self._size = 0
                self._rowid_buf = np.zeros(0, dtype=np.int64)
                self._matrix_buf = np.zeros((0, self.dim), dtype=np.float32)
                self._half_buf = np.zeros((0, self.dim), dtype=np.float16)
                self._max_norm = 0.0
                self._max_rowid = 0
                self._dead = 0
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


    @property
    def nbytes(self) -> int:
        """The bytes the index holds in memory (its buffers, spare capacity included)."""
        return self._rowid_buf.nbytes + self._matrix_buf.nbytes + self._half_buf.nbytes
    def _append(self, ids: np.ndarray, mat: np.ndarray) -> None:
        n, grow = self._size, len(ids)
        if n + grow > len(self._rowid_buf):
            # Readers hold views of the old buffers (rows [:n] never change
            # in place), so growing copies into new ones instead of resizing.
            capacity = max(n + grow, n + n // 2, 1024)
            rowid_buf = np.empty(capacity, dtype=np.int64)
            matrix_buf = np.empty((capacity, self.dim), dtype=np.float32)
            half_buf = np.empty((capacity, self.dim), dtype=np.float16)
            rowid_buf[:n] = self._rowid_buf[:n]
            matrix_buf[:n] = self._matrix_buf[:n]
            half_buf[:n] = self._half_buf[:n]
            self._rowid_buf, self._matrix_buf, self._half_buf = rowid_buf, matrix_buf, half_buf
        self._rowid_buf[n : n + grow] = ids
        self._matrix_buf[n : n + grow] = mat
        norms = np.linalg.norm(mat, axis=1)
        top = max(self._max_norm, float(norms.max()))
        if np.isfinite(top) and top <= _HALF_MAX_NORM:
            self._half_buf[n : n + grow] = mat
            self._max_norm = top
        else:
            self._max_norm = np.inf  # no float16 scan for this generation
        self._size = n + grow

    def __len__(self) -> int:
        return self._size

    def scan(self, query: np.ndarray) -> Scan:
        """Score every row against ``query``; pick the best with ``Scan.best``."""
        with self._lock:
            n, max_norm = self._size, self._max_norm
            rowids, matrix = self._rowid_buf[:n], self._matrix_buf[:n]
            half = self._half_buf[:n]
        query = np.ascontiguousarray(query, dtype=np.float32)
        q_norm = float(np.linalg.norm(query))
        if (
            n == 0
            or max_norm > _HALF_MAX_NORM
            or not np.isfinite(q_norm)
            or q_norm > _HALF_MAX_NORM
        ):
            with _BLAS.limit(limits=1, user_api="blas"):
                return Scan(rowids, matrix, query, matrix @ query, 0.0)
        eps = _HALF_EPS * max(q_norm, 1.0) * max(max_norm, 1.0)
        return Scan(rowids, matrix, query, _half_scores(query, half), eps)

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
        """Indices of the k best scores, best first."""
        k = min(k, len(scores))
        if k <= 0:
            return np.zeros(0, dtype=np.int64)
        part = np.argpartition(-scores, k - 1)[:k]
        return part[np.argsort(-scores[part], kind="stable")]


def _half_scores(query: np.ndarray, half: np.ndarray) -> np.ndarray:
    """float16 dot products of every row with ``query``, on two threads when it pays.

    The scan is memory-bound and one core reads ~30 GB/s here: two threads,
    each over half the rows, take 1.4 instead of 2.6 ms at 100k. By the time
    a search scans, its full-text half is done, so the second core is free.
    """
    q = query.astype(np.float16)[None, :]
    if len(half) < _SPLIT_ROWS or not _CORES_TO_SPLIT:
        return np.asarray(numkong.cdist(q, half, metric="dot", threads=1)).reshape(-1)
    mid = len(half) // 2
    upper = _SCAN_POOL.submit(numkong.cdist, q, half[mid:], metric="dot", threads=1)
    lower = np.asarray(numkong.cdist(q, half[:mid], metric="dot", threads=1)).reshape(-1)
    return np.concatenate([lower, np.asarray(upper.result()).reshape(-1)])


@dataclass(frozen=True)
class Scan:
    """One query's approximate scores over a snapshot of the index."""

    rowids: np.ndarray
    matrix: np.ndarray
    query: np.ndarray
    approx: np.ndarray
    eps: float  # 0: the scores are exact

    def best(self, k: int, positions: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(positions, exact scores) of the k best rows (among ``positions``), best first."""
        approx = self.approx if positions is None else self.approx[positions]
        if self.eps == 0.0 or k >= len(approx):
            chosen = VectorIndex.top(approx, k) if self.eps == 0.0 else np.arange(len(approx))
        else:
            line = approx[np.argpartition(-approx, k - 1)[k - 1]] - 2 * self.eps
            chosen = np.flatnonzero(approx >= line)
        where = chosen if positions is None else positions[chosen]
        if self.eps == 0.0:
            return where, approx[chosen]
        exact = self.matrix[where] @ self.query
        order = VectorIndex.top(exact, k)
        return where[order], exact[order]
