"""An exact in-memory vector index over a store's float32 vectors.

Exact search is a matrix-vector product: about 4 ms for 100k x 384 on two
cores, so no approximate index is needed at the sizes one SQLite file holds.
The index mirrors the ``docs`` table by rowid and is refreshed incrementally:
new rows (a larger max rowid) are appended; any deletion or re-embedding
bumps a generation counter in the database, which triggers a full reload.
That also catches writes made by another process (the CLI beside a server).

Rows live in buffers with spare capacity (grown by half each time), so that
appending a batch copies the batch, not the whole matrix: a search after
every write stays cheap at 100k rows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

import numpy as np
from threadpoolctl import ThreadpoolController

# One BLAS thread for the product: a second one saves a millisecond at 100k
# rows on an idle machine, but spins after each call and doubled the CPU cost
# of a search (and its latency, under load) on a shared 2-core machine.
_BLAS = ThreadpoolController()


class VectorIndex:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._size = 0
        self._rowid_buf = np.zeros(0, dtype=np.int64)
        self._matrix_buf = np.zeros((0, dim), dtype=np.float32)
        self._generation: int | None = None
        self._max_rowid = 0
        self._lock = threading.Lock()

    def refresh(
        self,
        generation: int,
        max_rowid: int,
        load: Callable[[int], Iterable[tuple[int, bytes]]],
    ) -> None:
        """Bring the index up to date; ``load(after)`` yields (rowid, blob) > after."""
        with self._lock:
            if generation != self._generation:
                # New buffers, not cleared ones: a search still scoring the
                # old matrix keeps its own view of it.
                self._size = 0
                self._rowid_buf = np.zeros(0, dtype=np.int64)
                self._matrix_buf = np.zeros((0, self.dim), dtype=np.float32)
                self._max_rowid = 0
                self._generation = generation
            if max_rowid <= self._max_rowid:
                return
            rows = list(load(self._max_rowid))
            if not rows:
                self._max_rowid = max_rowid
                return
            ids = np.fromiter((r for r, _ in rows), dtype=np.int64, count=len(rows))
            blob = b"".join(b for _, b in rows)
            mat = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), self.dim)
            self._append(ids, mat)
            self._max_rowid = int(ids.max())

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
            self._rowid_buf, self._matrix_buf = rowid_buf, matrix_buf
        self._rowid_buf[n : n + grow] = ids
        self._matrix_buf[n : n + grow] = mat
        self._size = n + grow

    def __len__(self) -> int:
        return self._size

    def scores(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All (rowids, cosine scores); the caller picks the best."""
        with self._lock:
            rowids, matrix = self._rowid_buf[: self._size], self._matrix_buf[: self._size]
        with _BLAS.limit(limits=1, user_api="blas"):
            return rowids, matrix @ query.astype(np.float32)

    @staticmethod
    def top(scores: np.ndarray, k: int) -> np.ndarray:
        """Indices of the k best scores, best first."""
        k = min(k, len(scores))
        if k <= 0:
            return np.zeros(0, dtype=np.int64)
        part = np.argpartition(-scores, k - 1)[:k]
        return part[np.argsort(-scores[part], kind="stable")]
