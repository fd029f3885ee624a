"""Words as the SQLite store's full-text index tokenises them, for every backend.

The tokenizer is FTS5's ``porter unicode61 remove_diacritics 2`` (case-
and diacritic-folded, porter-stemmed: "flooring" is indexed as "floor").
SQLite does not expose its tokenizers to Python; a private in-memory FTS5
table with the same tokenizer does. Python's ``sqlite3`` is always there,
so the PostgreSQL store tokenises through it too: its in-memory BM25 index
(``memindex.bm25``) then holds the very postings ``docs_fts`` would, and
both backends rank alike. ``Tokens`` caches each word's tokens (a word
always tokenises the same way); ``tokenised_rows`` turns rows into
postings, ``token_sequences`` into their tokens in order (for phrases).
"""

from __future__ import annotations

import sqlite3
import threading

import numpy as np

# Must stay the tokenizer of docs_fts (sqlite.schema.m001_initial); a test
# compares the two.
TOKENIZER = "porter unicode61 remove_diacritics 2"

# Words cached at most; the vocabulary of a store's searches is far smaller.
_CACHE_LIMIT = 50_000


def tokenizer_db(check_same_thread: bool = True) -> sqlite3.Connection:
    """A private in-memory FTS5 table ``t`` with docs_fts's tokenizer, and its
    vocabularies: ``ti`` ('instance': every token occurrence) and ``tr`` ('row')."""
    db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=check_same_thread)
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(c, tokenize = '{TOKENIZER}')")
    db.execute("CREATE VIRTUAL TABLE ti USING fts5vocab(t, 'instance')")
    db.execute("CREATE VIRTUAL TABLE tr USING fts5vocab(t, 'row')")
    return db


class Tokens:
    """The indexed tokens of words, as ``docs_fts`` would index them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[str, ...]] = {}
        self._db: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        return tokenizer_db(check_same_thread=False)

    def of(self, words: list[str]) -> dict[str, tuple[str, ...]]:
        """Each word's tokens, in order (none for a word of separators only)."""
        out: dict[str, tuple[str, ...]] = {}
        for w in words:
            # get(), not a test then a read: another thread may clear the cache.
            known = self._cache.get(w)
            if known is not None:
                out[w] = known
        missing = list(dict.fromkeys(w for w in words if w not in out))
        if not missing:
            return out
        with self._lock:
            if self._db is None:
                self._db = self._connect()
            db = self._db
            db.execute("BEGIN")
            try:
                db.executemany(
                    "INSERT INTO t(rowid, c) VALUES (?, ?)", list(enumerate(missing, start=1))
                )
                found = db.execute("SELECT doc, offset, term FROM ti").fetchall()
            finally:
                # Nothing is kept: the table only lends its tokenizer.
                db.execute("ROLLBACK")
            if len(self._cache) + len(missing) > _CACHE_LIMIT:
                self._cache.clear()
            parts: dict[int, list[tuple[int, str]]] = {}
            for doc, offset, term in found:
                parts.setdefault(doc, []).append((offset, term))
            for n, word in enumerate(missing, start=1):
                tokens = tuple(t for _, t in sorted(parts.get(n, [])))
                self._cache[word] = tokens
                out[word] = tokens
        return out


TOKENS = Tokens()


def tokenised_rows(
    rows: list[tuple[int, str]],
) -> tuple[dict[str, tuple[int, int]], np.ndarray, np.ndarray]:
    """The postings of ``rows`` (rowid, text), tokenised as ``docs_fts`` does.

    Returns (term -> (lo, hi) slice, docs, counts): for each term, in
    ``docs[lo:hi]`` the rowids holding it (ascending) and in ``counts[lo:hi]``
    how often each holds it. A private in-memory FTS5 table with the same
    tokenizer does the tokenising: its 'instance' vocabulary lists every
    occurrence ordered by term, then row, and its 'row' vocabulary how many
    occurrences each term has, in the same order.
    """
    db = tokenizer_db()
    try:
        db.execute("BEGIN")  # one transaction: FTS5 flushes its index per commit
        db.executemany("INSERT INTO t(rowid, c) VALUES (?, ?)", rows)
        db.execute("COMMIT")
        per_term = db.execute("SELECT term, cnt FROM tr").fetchall()
        cur = db.execute("SELECT doc FROM ti")
        total = sum(c for _, c in per_term)
        doc = np.fromiter((r[0] for r in cur), dtype=np.int64, count=total)
    finally:
        db.close()
    if not per_term:
        return {}, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ends = np.cumsum([c for _, c in per_term])
    starts = ends - [c for _, c in per_term]
    # One posting per (term, row): a new one where the term or the row changes.
    new = np.zeros(total, dtype=bool)
    new[starts] = True
    new[1:] |= doc[1:] != doc[:-1]
    first = np.flatnonzero(new)
    counts = np.diff(np.append(first, total))
    bounds = np.append(np.searchsorted(first, starts), len(first)).tolist()
    terms = {term: (bounds[i], bounds[i + 1]) for i, (term, _) in enumerate(per_term)}
    return terms, doc[first], counts


def token_sequences(rows: list[tuple[int, str]]) -> dict[int, tuple[str, ...]]:
    """Each row's (rowid, text) tokens in text order, as ``docs_fts`` indexes them."""
    db = tokenizer_db()
    try:
        db.execute("BEGIN")
        db.executemany("INSERT INTO t(rowid, c) VALUES (?, ?)", rows)
        found = db.execute("SELECT doc, offset, term FROM ti").fetchall()
        db.execute("ROLLBACK")
    finally:
        db.close()
    parts: dict[int, list[tuple[int, str]]] = {}
    for doc, offset, term in found:
        parts.setdefault(doc, []).append((offset, term))
    return {doc: tuple(t for _, t in sorted(p)) for doc, p in parts.items()}
