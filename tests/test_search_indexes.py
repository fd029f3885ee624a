"""The in-memory accelerators of the SQLite store: same answers as SQLite and float32."""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from halls.bench import corpus
from halls.embed import Embedder
from halls.embed.local import LocalEmbedder, packaged_model_path, traced_encoder
from halls.models import SearchFilter, ShortEntry, new_id, to_datetime
from halls.recall import query_terms
from halls.store.memindex.terms import TOKENS, tokenised_rows
from halls.store.memindex.vectors import Bound, Scan, Snapshot, VectorIndex
from halls.store.sqlite import SQLiteStore
from halls.store.sqlite.search import _fts_query

# Varied lengths, repeated words (term frequency > 1), accents, stems, and
# words held by most rows (idf floored) as well as by one.
EXTRA = [
    "the cat sat on the cat mat with the other cat",
    "cat",
    "Zoë met José at the Café Müller; naïve about ﬁsh and fish and fishing",
    "RUNNING runs runner ran: the run-book's steps, 2023-10-13, run run run",
    "don't won't can't O'Brien’s flooring floors floored " * 6,
]


def _no_deletions(after: int, upto: int) -> np.ndarray:
    raise AssertionError("the deletion log read with no deletion")


def _entries(texts: list[str]) -> list[ShortEntry]:
    now = to_datetime(time.time())
    return [
        ShortEntry(id=new_id("short"), content=t, created_at=now, occurred_at=now) for t in texts
    ]


def _fts5_ranking(db: sqlite3.Connection, terms: list[str], k: int) -> list[tuple[int, float]]:
    sql = (
        "SELECT rowid, -bm25(docs_fts) AS s FROM docs_fts WHERE docs_fts MATCH ? "
        "ORDER BY s DESC LIMIT ?"
    )
    return db.execute(sql, (_fts_query(terms), k)).fetchall()


def _same_ranking(got: tuple[np.ndarray, np.ndarray], want: list[tuple[int, float]]) -> None:
    """Equal rows and scores, best first; rows tied at the cut may differ."""
    rowids, scores = got
    assert len(rowids) == len(want)
    assert np.allclose(scores, [s for _, s in want], rtol=1e-9, atol=0)
    cut = want[-1][1] if want else 0.0
    strict = {r for r, s in want if not np.isclose(s, cut, rtol=1e-9)}
    assert strict <= set(rowids.tolist())


def _store_with(tmp_path: Path, texts: list[str]) -> SQLiteStore:
    store = SQLiteStore(tmp_path / "s.sqlite3", "s")
    rng = np.random.default_rng(1)
    store.add_short(_entries(texts), rng.standard_normal((len(texts), 8)).astype(np.float32))
    return store


def test_text_index_ranks_exactly_as_fts5_bm25(tmp_path: Path) -> None:
    """Every query's best rows and BM25 scores equal FTS5's bm25(), as rows come and go."""
    texts = corpus.memories(random.Random(5), 600) + EXTRA
    store = _store_with(tmp_path, texts)
    try:
        db = store._db.reader()
        queries = corpus.questions(random.Random(6), 60) + EXTRA + ["cat fish", "run", "the"]

        def check() -> None:
            index = store._search._text_index()
            assert index.live == db.execute("SELECT COUNT(*) FROM docs_fts").fetchone()[0]
            for q in queries:
                terms = query_terms(q) or q.split()
                tokens = TOKENS.of(terms)
                if any(len(tokens[t]) != 1 for t in terms):
                    continue
                for k in (5, 100):
                    got = index.search([tokens[t][0] for t in terms], k)
                    _same_ranking(got, _fts5_ranking(db, terms, k))

        check()
        # Appended in batches (an incremental refresh each), then deletions:
        # a new generation rebuilds the index from scratch.
        for start in range(0, 90, 30):
            more = corpus.memories(random.Random(start), 30)
            store.add_short(_entries(more), np.ones((30, 8), dtype=np.float32))
            check()
        # Deletions: a few are marked dead in place (the statistics leave
        # them out, as FTS5's do); past a quarter, the index is rebuilt.
        ids = [r[0] for r in db.execute("SELECT item_id FROM docs ORDER BY random()")]
        for i in ids[:50]:
            store.delete_short(i)
        check()
        assert len(store._search._text_index()) == store._search._text_index().live + 50
        more = corpus.memories(random.Random(99), 20)
        store.add_short(_entries(more), np.ones((20, 8), dtype=np.float32))
        check()
        for i in ids[50:250]:
            store.delete_short(i)
        check()
        assert len(store._search._text_index()) == store._search._text_index().live
    finally:
        store.close()


def test_text_search_uses_fts5_for_phrases_and_filters_the_index_hits(tmp_path: Path) -> None:
    """A word FTS5 reads as a phrase still matches; inactive rows stay out of the index path."""
    store = _store_with(tmp_path, ["send the e-mail to Rosa", "email Rosa later", "unrelated"])
    try:
        assert [len(TOKENS.of(["e-mail"])["e-mail"])] == [2]
        found = store.text_search(["e-mail", "rosa"], SearchFilter(), 5)
        assert len(found) == 2 and found[0].score > found[1].score
        db = store._db.reader()
        want = _fts5_ranking(db, ["email", "rosa"], 5)
        got = store.text_search(["email", "rosa"], SearchFilter(), 5)
        assert [m.score for m in got] == pytest.approx([s for _, s in want], rel=1e-9)
    finally:
        store.close()


def test_tokenised_rows_count_each_word_per_row() -> None:
    """Postings list each row once per word, with how often the row holds it."""
    terms, docs, counts = tokenised_rows([(3, "Cats and cat"), (7, "a CAT"), (9, "")])
    lo, hi = terms["cat"]
    assert docs[lo:hi].tolist() == [3, 7] and counts[lo:hi].tolist() == [2, 1]
    lo, hi = terms["and"]
    assert docs[lo:hi].tolist() == [3] and counts[lo:hi].tolist() == [1]
    assert sum(counts.tolist()) == 5  # every token of every row, as FTS5 counts them


def test_vector_scan_finds_the_float32_best_rows_and_scores() -> None:
    """The int8 scan plus exact rescoring returns the float32 top k, ties included."""
    rng = np.random.default_rng(4)
    dim = 48
    base = rng.standard_normal((60_000, dim)).astype(np.float32)
    base[1000:1010] = base[5]  # exact ties around a likely top row
    # 300 rows within int8's rounding of each other around one direction:
    # their int8 order is noise, so only the rescoring finds the true best.
    base[2000:2300] = base[9] + 2e-3 * rng.standard_normal((300, dim)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    index = VectorIndex(dim)
    rows = [(i + 1, v.tobytes()) for i, v in enumerate(base)]
    index.refresh(Snapshot(0, 0, 1, len(rows)), lambda after: rows[after:], _no_deletions)
    noisy = base[77] + 0.3 * rng.standard_normal(dim).astype(np.float32)
    for query in [base[5], noisy, base[9]]:
        rowids, exact = np.arange(1, len(base) + 1), base @ query
        want = VectorIndex.top(exact, 50)
        pos, scores = index.scan(query).best(50)
        assert np.allclose(scores, exact[want], rtol=0, atol=1e-6)
        cut = exact[want][-1]
        assert set(rowids[want][exact[want] > cut + 1e-6].tolist()) <= set(rowids[pos].tolist())
        # Restricted to some rows (a selective filter), the same holds.
        some = np.arange(0, len(rowids), 3)
        pos, scores = index.scan(query).best(20, some)
        want = some[VectorIndex.top(exact[some], 20)]
        assert np.allclose(scores, exact[want], rtol=0, atol=1e-6)
        assert set(pos.tolist()) <= set(some.tolist())


def _bound_ratio(row: np.ndarray, query: np.ndarray) -> float:
    """|true score - approximate score| / eps for one row and query."""
    index = VectorIndex(len(row))
    index.refresh(Snapshot(0, 0, 1, 1), lambda after: [(1, row.tobytes())][after:], _no_deletions)
    scan = index.scan(query)
    assert scan.bound is not None
    true = float(row.astype(np.float64) @ query.astype(np.float64))
    return abs(true - float(scan.approx[0])) / float(scan.bound.at(np.array([0]))[0])


def test_int8_error_bound_is_reached_by_aligned_rounding() -> None:
    """Rows and queries whose rounding errors all point one way come within 1% of
    the bound (so a bound any tighter would be wrong), and never past it."""
    dim = 64
    sign = np.where(np.random.default_rng(1).random(dim) < 0.5, -1.0, 1.0)
    # The query's rounding along a row of equal-magnitude codes: the s |xi| |eq| term.
    row = (127 / 1024 * sign).astype(np.float32)  # codes +-127, nothing left over
    query = (sign * (60.49 / 128)).astype(np.float32)
    query[0] = sign[0] * 127 / 128  # sets the query's scale to 1/128
    first = _bound_ratio(row, query)
    # The row's rounding along a query of equal-magnitude codes: the |ex| t |qi| term.
    second = _bound_ratio(query, row)
    assert 0.98 < first <= 1.0 and 0.98 < second <= 1.0


def test_rescoring_keeps_every_row_whose_bound_reaches_the_line() -> None:
    """A row whose approximate score is low but whose bound reaches the k-th best
    lower bound is rescored, and wins if its true score is best."""
    matrix = np.array([[1.0, 0.0], [0.7, 0.0], [0.69, 0.0], [0.1, 0.0]], np.float32)
    query = np.array([1.0, 0.0], np.float32)
    approx = np.array([0.5, 0.7, 0.69, 0.1])  # row 0 looks worse than it is...
    eps = np.array([0.5, 0.01, 0.01, 0.01])  # ...within its error bound
    zero = np.zeros(4)
    bound = Bound(eps, zero, zero, np.array([0.5, 0.0, 0.0]), query=1.0, row=0.0)
    scan = Scan(np.arange(1, 5), matrix, query, approx, bound)
    pos, scores = scan.best(1)
    assert pos.tolist() == [0] and scores.tolist() == [1.0]
    assert scan.best(2, np.array([1, 2, 3]))[0].tolist() == [1, 2]


def test_vector_scan_is_exact_on_real_embeddings(embedder: Embedder) -> None:
    """On the shipped model's vectors (duplicates included), the int8 scan returns
    exactly the float32-rounded top k in the same order, filtered or not."""
    rng = random.Random(2)
    texts = corpus.memories(rng, 1500)
    vectors = embedder.embed(texts + texts[:100])  # 100 exact duplicates: tied scores
    rows = [(i + 1, v.tobytes()) for i, v in enumerate(vectors)]
    index = VectorIndex(vectors.shape[1])
    index.refresh(Snapshot(0, 0, 1, len(rows)), lambda after: rows[after:], _no_deletions)
    some = np.arange(0, len(rows), 3)
    for query in embedder.embed(corpus.questions(rng, 20)):
        exact = (vectors.astype(np.float64) @ query.astype(np.float64)).astype(np.float32)
        pos, scores = index.scan(query).best(100)
        want = VectorIndex.top(exact, 100)
        assert pos.tolist() == want.tolist() and scores.tolist() == exact[want].tolist()
        pos, scores = index.scan(query).best(10, some)
        assert pos.tolist() == some[VectorIndex.top(exact[some], 10)].tolist()


def test_vector_scan_is_exact_for_long_short_and_zero_vectors() -> None:
    """Each row has its own int8 scale: very long, very short and zero rows score exactly."""
    index = VectorIndex(4)
    vectors = np.array(
        [[1e5, 0, 0, 0], [0, 2e5, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [3e-6, 1e-7, 0, 0]],
        dtype=np.float32,
    )
    rows = [(i + 1, v.tobytes()) for i, v in enumerate(vectors)]
    index.refresh(Snapshot(0, 0, 1, 5), lambda after: rows[after:], _no_deletions)
    scan = index.scan(np.array([1, 1, 0, 0], dtype=np.float32))
    pos, scores = scan.best(5)
    assert scan.bound is not None
    assert pos.tolist() == [1, 0, 2, 4, 3]
    exact = vectors[[1, 0, 2, 4, 3]].astype(np.float64) @ np.float64([1, 1, 0, 0])
    assert scores.tolist() == exact.astype(np.float32).tolist()
    zero = index.scan(np.zeros(4, np.float32)).best(2)
    assert zero[1].tolist() == [0.0, 0.0] and zero[0].tolist() == [0, 1]  # ties by position


def test_vector_scan_falls_back_to_float32_for_vectors_that_are_not_finite() -> None:
    """A row that is not finite (no int8 scale) turns the scan to float32 for the generation."""
    index = VectorIndex(2)
    vectors = np.array([[1, 0], [np.inf, 0], [0, 1]], dtype=np.float32)
    rows = [(i + 1, v.tobytes()) for i, v in enumerate(vectors)]
    index.refresh(Snapshot(0, 0, 1, 3), lambda after: rows[after:], _no_deletions)
    scan = index.scan(np.array([1, 1], dtype=np.float32))
    assert scan.bound is None
    pos, scores = scan.best(2)
    assert pos.tolist() == [1, 0] and scores.tolist() == [np.inf, 1.0]


def test_int8_error_bound_holds_row_by_row() -> None:
    """|float32 score - approximate score| <= eps for every row, on varied rows and queries."""
    rng = np.random.default_rng(8)
    dim = 384
    rows = rng.standard_normal((5000, dim)).astype(np.float32)
    rows[:1000] *= rng.uniform(1e-3, 1e3, (1000, 1)).astype(np.float32)  # any length
    rows[1000:1100, 7] = 50.0  # one huge component: a coarse scale for the rest
    rows[1100:1200] = rng.choice([-1.0, 0.0, 1.0], (100, dim)).astype(np.float32)
    rows[1200] = 0.0
    index = VectorIndex(dim)
    batches = [(i + 1, v.tobytes()) for i, v in enumerate(rows)]
    for upto in (700, 2900, 5000):  # appended in several refreshes
        part = batches[:upto]
        index.refresh(Snapshot(0, 0, 1, upto), lambda after, p=part: p[after:], _no_deletions)
    worst = 0.0
    for query in [rows[3], rows[1050], rng.standard_normal(dim).astype(np.float32) * 1e-4]:
        scan = index.scan(query)
        assert scan.bound is not None
        eps = scan.bound.at(np.arange(len(rows)))
        assert (eps <= scan.bound.ceiling).all()
        error = np.abs(rows.astype(np.float64) @ query.astype(np.float64) - scan.approx)
        assert (error <= eps).all()
        float32 = np.abs((rows @ query).astype(np.float64) - scan.approx)
        assert (float32 <= eps).all()
        some = eps > 0  # a zero row's score is exact
        worst = max(worst, float((error[some] / eps[some]).max()))
    assert worst > 0.05  # the bound is not vacuous


def test_vector_lookup_is_empty_for_another_generation() -> None:
    """Stored vectors come from the index only for its own generation and rows."""
    index = VectorIndex(2)
    rows = [
        (4, np.array([1, 0], np.float32).tobytes()),
        (9, np.array([0, 1], np.float32).tobytes()),
    ]
    index.refresh(
        Snapshot(3, 0, 1, 9), lambda after: [r for r in rows if r[0] > after], _no_deletions
    )
    known, vectors = index.lookup(np.array([9, 5, 4, 12]), 3)
    assert known.tolist() == [True, False, True, False]
    assert vectors.tolist() == [[0, 1], [1, 0]]
    assert not index.lookup(np.array([4]), 4)[0].any()


def test_traced_query_encoder_gives_the_eager_vector(torch_embedder: LocalEmbedder) -> None:
    """A single text takes the traced graph, and its vector is the eager model's."""
    embedder = torch_embedder
    assert embedder._single is not None
    texts = ["hi", "What did Rosa say about Terraform?", "word " * 400]
    traced = np.stack([embedder.embed([t])[0] for t in texts])
    single = embedder._single
    try:
        embedder._single = None
        eager = np.stack([embedder.embed([t])[0] for t in texts])
    finally:
        embedder._single = single
    assert np.all(np.sum(traced * eager, axis=1) > 0.99999)


@pytest.mark.torch
def test_traced_encoder_declines_other_poolings() -> None:
    """A model pooling otherwise than by the mean keeps the eager path."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Pooling, Transformer

    inner = Transformer(str(packaged_model_path()))
    model = SentenceTransformer(modules=[inner, Pooling(384, "cls")], device="cpu")
    tokenize = getattr(model, "preprocess", None) or model.tokenize
    assert traced_encoder(model, tokenize, low=False) is None


def test_stored_vectors_come_from_the_index_or_the_rows_and_skip_deleted_ones(
    tmp_path: Path,
) -> None:
    """Neighbour vectors: from the index when current, else the rows; a row gone from both
    has none."""
    texts = [f"note {n} about the garden" for n in range(6)]
    store = _store_with(tmp_path, texts)
    try:
        db = store._db.reader()
        rows = [r[0] for r in db.execute("SELECT rowid FROM docs ORDER BY rowid")]
        blobs = dict(db.execute("SELECT rowid, vec FROM docs").fetchall())
        from_blobs = store._search._vectors_of(rows)  # no index yet: every vector from its row
        store.vector_search(np.ones(8, dtype=np.float32), SearchFilter(), 3)  # builds it
        more = _entries(["a later note", "another"])
        store.add_short(more, np.full((2, 8), 2.0, dtype=np.float32))  # not in the index yet
        later = db.execute("SELECT MAX(rowid) FROM docs").fetchone()[0]
        assert store._search._vectors_of([later])[later].tolist() == [2.0] * 8  # from its row
        store.delete_short(
            db.execute("SELECT item_id FROM docs WHERE rowid = ?", (rows[0],)).fetchone()[0]
        )
        # rows[0] is deleted but still in the index (marked dead there); a row
        # deleted before the index read it is in neither.
        other = sqlite3.connect(tmp_path / "s.sqlite3")
        with other:
            other.execute("DELETE FROM docs WHERE rowid = ?", (later,))
        other.close()
        found = store._search._vectors_of([*rows[1:], later])
        assert set(from_blobs) == set(rows)
        assert all(np.array_equal(from_blobs[r], np.frombuffer(blobs[r], np.float32)) for r in rows)
        assert set(found) == set(rows[1:])
        assert all(np.array_equal(found[r], from_blobs[r]) for r in rows[1:])
        assert store._search._vectors_of([later]) == {}
    finally:
        store.close()


def test_an_edit_that_rewrites_a_row_is_read_at_its_new_place(tmp_path: Path) -> None:
    """An edit that re-embeds a memory writes its row anew (another rowid): after searches
    have read it, what is read next is the new row, whether this store or another process
    made the edit."""
    texts = [f"note {n} about the garden" for n in range(8)]
    store = _store_with(tmp_path, texts)
    try:
        db = store._db.reader()
        filt = SearchFilter()
        ids = [m.id for m in store.text_search(["garden"], filt, 8)]  # ids and rowids read
        assert len(ids) == 8 and set(store.vectors(ids)) == set(ids)
        first, second = ids[0], ids[1]
        place = dict(db.execute("SELECT item_id, rowid FROM docs").fetchall())
        edited = store.get_short(first).model_copy(update={"content": "the gate is painted"})
        assert store.update_short(edited, np.full(8, 3.0, dtype=np.float32))
        moved = db.execute("SELECT rowid FROM docs WHERE item_id = ?", (first,)).fetchone()[0]
        assert moved != place[first]
        assert store.vectors([first])[first].tolist() == [3.0] * 8
        around = store.neighbours([first], 0, filt)
        assert [(w.id, w.seq) for w in around] == [(first, moved)]
        # Another process (the CLI beside a server) rewrites the second one.
        other = SQLiteStore(tmp_path / "s.sqlite3", "s")
        again = other.get_short(second).model_copy(update={"content": "a new hedge"})
        assert other.update_short(again, np.full(8, 5.0, dtype=np.float32))
        other.close()
        assert store.vectors([second])[second].tolist() == [5.0] * 8
        [w] = store.neighbours([second], 0, filt)
        assert w.id == second and w.seq > moved and w.vector.tolist() == [5.0] * 8
    finally:
        store.close()
