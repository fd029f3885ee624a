"""An in-memory BM25 index mirroring ``docs_fts``: FTS5's ranking, without its cost.

FTS5's ``bm25()`` reads each matching row's document size from a table and
walks its position lists, about 0.4 us a match: a five-word question whose
words are held by 25,000 memories of a 100k store spent ~9 ms ranking them,
the longest step of a search. Here the same postings (the tokens FTS5
indexes, through the same tokenizer) live in numpy arrays, and the same
formula (FTS5's bm25 with k1 = 1.2, b = 0.75: idf = ln((N - n + 0.5) /
(n + 0.5)), floored at 1e-6, and document length over the average) is one
vectorised pass per word: the same rows and scores, 8.4 -> 1.0 ms for
that question.

The index follows the store the way ``VectorIndex`` does: ``docs_fts`` rows
are only ever appended (rowid AUTOINCREMENT) or deleted. New rows are
tokenised and appended on refresh; a deletion (its own counter) marks the
rows gone as dead, and they leave every statistic as they leave FTS5's;
past a quarter dead, or on a new generation, the index is rebuilt. Words FTS5 would read as phrases
(several tokens, e.g. "e-mail") are left to FTS5 by the caller.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from halls.store.memindex.terms import tokenised_rows
from halls.store.memindex.vectors import Gone, Snapshot, locate

# FTS5's bm25() constants (fts5_aux.c); changing them would break parity.
K1 = 1.2
B = 0.75
_MIN_IDF = 1e-6
# A word's postings are kept in chunks, one per refresh that added rows
# holding it; past this many they are merged so a query concatenates few.
_MAX_CHUNKS = 8
# What one word's entry costs beside its arrays (dict slot, key, tuples,
# two array headers): an estimate, for the memory budget of open stores.
_TERM_OVERHEAD = 300


class TextIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reset(None)

    def _reset(self, generation: int | None) -> None:
        self._generation = generation
        self._deleted: int | None = None
        self._max_rowid = 0
        self._size = 0
        self._rowid_buf = np.zeros(0, dtype=np.int64)
        self._length_buf = np.zeros(0, dtype=np.float64)
        self._tokens = 0
        # Rows deleted since the last full load stay in the arrays, marked
        # dead: the statistics and the postings read skip them.
        self._alive: np.ndarray | None = None
        self._dead = 0
        self._dead_tokens = 0
        # Tuples, not lists: tuples of arrays drop out of the garbage
        # collector's sight, and a 100k store has ~30k words.
        self._postings: dict[str, tuple[tuple[np.ndarray, np.ndarray], ...]] = {}
        self._posting_bytes = 0
        # The postings read back from a snapshot, looked up as they are asked
        # for (a dict of 300k tuples of views took longer than the read).
        self._base: Base | None = None

    @property
    def nbytes(self) -> int:
        """About how many bytes the index holds in memory."""
        alive = self._alive.nbytes if self._alive is not None else 0
        return (
            self._rowid_buf.nbytes
            + self._length_buf.nbytes
            + alive
            + self._posting_bytes
            + _TERM_OVERHEAD * len(self._postings)
            + (0 if self._base is None else self._base.nbytes)
        )

    def refresh(
        self,
        snapshot: Snapshot,
        load: Callable[[int], Iterable[tuple[int, str]]],
        gone: Gone,
    ) -> None:
        """Bring the index up to date with the store.

        ``load(after)`` yields (rowid, text) of the rows after a rowid;
        ``gone`` reads the deletion log (see ``Snapshot``).
        """
        with self._lock:
            if snapshot.generation != self._generation:
                # New containers, not cleared ones: a search still reading
                # the old arrays keeps its own view of them.
                self._reset(snapshot.generation)
            if snapshot.deleted != self._deleted:
                if self._size and snapshot.unseen(self._deleted):
                    self._reset(snapshot.generation)  # the log no longer reaches back
                elif self._size:
                    self._mark_dead(gone(self._deleted or 0, snapshot.deleted))
                    if self._dead > self._size // 4:
                        self._reset(snapshot.generation)  # mostly dead: reload
                self._deleted = snapshot.deleted
            max_rowid = snapshot.max_rowid
            if max_rowid <= self._max_rowid:
                return
            rows = list(load(self._max_rowid))
            if rows:
                self._append(rows)
            self._max_rowid = max(max_rowid, self._max_rowid)

    def _mark_dead(self, rows: np.ndarray) -> None:
        n = self._size
        pos = locate(self._rowid_buf[:n], rows)[1]
        alive = np.ones(n, dtype=bool) if self._alive is None else self._alive.copy()
        pos = pos[alive[pos]]  # each row dies once
        alive[pos] = False
        self._alive = alive  # a new array: readers keep the mask they took
        self._dead += len(pos)
        self._dead_tokens += int(self._length_buf[pos].sum())

    def _append(self, rows: list[tuple[int, str]]) -> None:
        rowids = np.fromiter((r for r, _ in rows), dtype=np.int64, count=len(rows))
        start, grow = self._size, len(rows)
        terms, docs, counts = tokenised_rows(rows)
        # Positions of the new rows: they follow every known row.
        positions = (start + np.searchsorted(rowids, docs)).astype(np.int32)
        lengths = np.bincount(positions - start, weights=counts, minlength=grow)
        if start + grow > len(self._rowid_buf):
            # Readers hold views of the old buffers: grow into new ones.
            capacity = max(start + grow, start + start // 2, 1024)
            rowid_buf = np.empty(capacity, dtype=np.int64)
            length_buf = np.empty(capacity, dtype=np.float64)
            rowid_buf[:start] = self._rowid_buf[:start]
            length_buf[:start] = self._length_buf[:start]
            self._rowid_buf, self._length_buf = rowid_buf, length_buf
        self._rowid_buf[start : start + grow] = rowids
        self._length_buf[start : start + grow] = lengths
        postings = dict(self._postings)  # copy-on-write: readers keep the old dict
        for term, (lo, hi) in terms.items():
            chunk = (positions[lo:hi], counts[lo:hi].astype(np.int32))
            self._posting_bytes += 8 * (hi - lo)  # an int32 position and count each
            chunks = (*postings.get(term, ()), chunk)
            if len(chunks) > _MAX_CHUNKS:
                merged = (
                    np.concatenate([c[0] for c in chunks]),
                    np.concatenate([c[1] for c in chunks]),
                )
                chunks = (merged,)
            postings[term] = chunks
        self._postings = postings
        self._tokens += int(counts.sum())
        if self._alive is not None:
            self._alive = np.concatenate([self._alive, np.ones(grow, dtype=bool)])
        self._size = start + grow

    def __len__(self) -> int:
        """Rows held, deleted ones still marked dead included."""
        return self._size

    @property
    def live(self) -> int:
        """Rows held that are still in the store."""
        return self._size - self._dead

    def search(self, tokens: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """(rowids, scores) of the k best rows for tokens OR'ed, best first.

        Scores are FTS5's bm25() with the sign flipped (higher is better).
        """
        view = self.view()
        return view.rank([view.postings(t) for t in tokens], k)

    def view(self) -> View:
        """The index as it is now; a refresh meanwhile leaves the view as it was."""
        with self._lock:
            return self._view()

    def _view(self) -> View:
        n, total = self._size, self._tokens - self._dead_tokens
        alive = self._alive if self._dead else None
        return View(
            self._rowid_buf[:n],
            self._length_buf[:n],
            self._postings,
            alive,
            n - (self._dead if alive is not None else 0),
            total,
            self._base,
        )

    def export(
        self, unless: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
        """(label, arrays) of the live rows, for ``persist.write``; None if never
        refreshed, or if the label would be ``unless``'s (the file holds this state)."""
        with self._lock:
            if self._generation is None:
                return None
            label: dict[str, Any] = {
                "kind": "text",
                "generation": self._generation,
                "deleted": self._deleted or 0,
                "max_rowid": self._max_rowid,
                "tokens": self._tokens - self._dead_tokens,
            }
            if unless is not None and all(unless.get(k) == v for k, v in label.items()):
                return None
            view = self._view()
        keep = view.alive
        rowids, lengths = view.rowids, view.lengths
        if keep is not None:
            rowids, lengths = rowids[keep], lengths[keep]
            moved = np.cumsum(keep, dtype=np.int64).astype(np.int32) - 1
        terms = sorted({*view._postings, *(view.base.terms if view.base else ())})
        kept: list[str] = []
        positions: list[np.ndarray] = []
        counts: list[np.ndarray] = []
        if any("\n" in t for t in terms):
            return None  # never from FTS5's tokenizer (a separator), but the file splits on it
        for term in terms:
            pos, tf = view.postings(term)  # the live rows only
            if len(pos):
                kept.append(term)
                positions.append(pos if keep is None else moved[pos])
                counts.append(tf)
        offsets = np.zeros(len(kept) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in positions], out=offsets[1:])
        label["rows"] = len(rowids)
        arrays = {
            "rowids": rowids,
            "lengths": lengths,
            "positions": np.concatenate(positions) if positions else np.zeros(0, np.int32),
            "counts": np.concatenate(counts) if counts else np.zeros(0, np.int32),
            "offsets": offsets,
            "terms": np.frombuffer("\n".join(kept).encode(), dtype=np.uint8),
        }
        return label, arrays

    def restore(self, label: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        """Take the state ``export`` gave (rowids and lengths with room past ``label['rows']``)."""
        n = int(label["rows"])
        rowids, lengths = arrays["rowids"], arrays["lengths"]
        base = Base(arrays)
        if len(rowids) < n or len(lengths) != len(rowids):
            raise ValueError("the snapshot does not fit the index")
        if len(base.positions) and int(base.positions.max()) >= n:
            raise ValueError("the snapshot's postings point past its rows")
        with self._lock:
            self._reset(int(label["generation"]))
            self._rowid_buf, self._length_buf = rowids, lengths
            self._size, self._tokens = n, int(label["tokens"])
            self._deleted = int(label["deleted"])
            self._max_rowid = int(label["max_rowid"])
            self._base = base
            self._posting_bytes = 0


class Base:
    """Postings read back from a snapshot: one slice of two arrays per term."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.positions = arrays["positions"].astype(np.int32, copy=False)
        self.counts = arrays["counts"].astype(np.int32, copy=False)
        self.offsets = arrays["offsets"].astype(np.int64, copy=False)
        text = arrays["terms"].tobytes().decode()
        self.terms = text.split("\n") if text else []
        if len(self.offsets) != len(self.terms) + 1 or len(self.positions) != len(self.counts):
            raise ValueError("the snapshot's postings are inconsistent")
        if len(self.offsets) and (self.offsets[0] != 0 or self.offsets[-1] != len(self.positions)):
            raise ValueError("the snapshot's postings are inconsistent")
        if np.any(np.diff(self.offsets) < 0) or (len(self.positions) and self.positions.min() < 0):
            raise ValueError("the snapshot's postings are inconsistent")
        self._slot = dict(zip(self.terms, range(len(self.terms)), strict=True))

    @property
    def nbytes(self) -> int:
        arrays = (self.positions, self.counts, self.offsets)
        return sum(a.nbytes for a in arrays) + 100 * len(self.terms)

    def get(self, token: str) -> tuple[np.ndarray, np.ndarray] | None:
        slot = self._slot.get(token)
        if slot is None:
            return None
        lo, hi = int(self.offsets[slot]), int(self.offsets[slot + 1])
        return self.positions[lo:hi], self.counts[lo:hi]


Postings = tuple[np.ndarray, np.ndarray]
"""(positions in the view, how often each row holds the term or phrase)."""


@dataclass(frozen=True)
class View:
    """One consistent state of a ``TextIndex``: its rows, lengths, postings, live mask."""

    rowids: np.ndarray
    lengths: np.ndarray
    _postings: dict[str, tuple[tuple[np.ndarray, np.ndarray], ...]]
    alive: np.ndarray | None
    rows: int  # live rows: FTS5's N
    total: int  # live tokens
    base: Base | None = None  # postings read from a snapshot, before every chunk

    def postings(self, token: str) -> Postings:
        """The live rows holding ``token``, and how often each does."""
        chunks = self._postings.get(token, ())
        first = None if self.base is None else self.base.get(token)
        if first is not None:
            chunks = (first, *chunks)
        if not chunks:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
        if len(chunks) == 1:
            pos, tf = chunks[0]
        else:
            pos = np.concatenate([c[0] for c in chunks])
            tf = np.concatenate([c[1] for c in chunks])
        if self.alive is not None:
            live = self.alive[pos]
            pos, tf = pos[live], tf[live]
        return pos, tf

    def holding_all(self, tokens: Sequence[str]) -> np.ndarray:
        """Positions of the live rows that hold every one of ``tokens`` (a phrase's candidates)."""
        found: np.ndarray | None = None
        for token in dict.fromkeys(tokens):
            pos = self.postings(token)[0]
            found = pos if found is None else np.intersect1d(found, pos, assume_unique=True)
            if len(found) == 0:
                break
        return np.zeros(0, dtype=np.int32) if found is None else np.sort(found)

    def rank(
        self, terms: Sequence[Postings], k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(rowids, scores) of the k best rows for the terms OR'ed, best first.

        One term is one FTS5 phrase (a word, or several tokens in a row):
        its IDF counts the rows holding it, its frequency the times a row
        does. ``allowed`` (positions) keeps the others out of the result,
        not out of the statistics, as FTS5 ranks before a join filters.
        """
        rows, n = self.rows, len(self.rowids)
        if rows == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        # FTS5 counts only the rows there now: N, the average length and
        # every word's row count leave the dead out.
        # The length norm only where a term is held: the same floats as over
        # every row, for the rows that need it.
        average = self.total / rows
        scores = np.zeros(n, dtype=np.float64)
        for pos, tf in terms:
            held = len(pos)
            if not held:
                continue
            idf = math.log((rows - held + 0.5) / (held + 0.5))
            idf = idf if idf > 0.0 else _MIN_IDF
            norm = K1 * (1.0 - B + B * self.lengths[pos] / average)
            # A term's positions are distinct, so the fancy-index add is exact.
            scores[pos] += idf * (tf * (K1 + 1.0)) / (tf + norm)
        if allowed is not None:
            kept = np.zeros(n, dtype=bool)
            kept[allowed] = True
            scores[~kept] = 0.0
        # On a boolean mask: numpy's nonzero over float64 is ~6x slower (100k rows).
        matched = np.flatnonzero(scores != 0.0)
        if len(matched) > k:
            part = np.argpartition(-scores[matched], k - 1)[:k]
            matched = matched[part]
        order = matched[np.argsort(-scores[matched], kind="stable")]
        return self.rowids[order], scores[order]
