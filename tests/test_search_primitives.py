"""The SQLite store's search primitives after their speed-ups: same answers as before."""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np

from halls.bench import corpus
from halls.embed import Embedder
from halls.models import OpenLoop, SearchFilter, ShortEntry, new_id, to_datetime
from halls.recall import query_terms
from halls.store.memindex.terms import TOKENIZER
from halls.store.memindex.vectors import Snapshot, VectorIndex
from halls.store.sqlite import SQLiteStore


def _rows(start: int, n: int, dim: int) -> list[tuple[int, bytes]]:
    rng = np.random.default_rng(start)
    return [(start + i, rng.standard_normal(dim).astype(np.float32).tobytes()) for i in range(n)]


def _exact(index: VectorIndex, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows a scan sees and their float32 scores against a vector of ones."""
    scan = index.scan(np.ones(dim, dtype=np.float32))
    return scan.rowids, scan.matrix @ np.ones(dim, dtype=np.float32)


def test_vector_index_appends_in_batches_and_reloads_on_a_new_generation() -> None:
    """Growing the index batch by batch equals one load, in order; deletions and a new
    generation (re-embedding) are followed."""
    dim = 8
    all_rows = _rows(1, 5000, dim)
    index = VectorIndex(dim)
    views = []

    def nothing_gone(after: int, upto: int) -> np.ndarray:
        raise AssertionError("the deletion log read with no deletion")

    for upto in range(250, 5001, 250):
        index.refresh(
            Snapshot(0, 0, 1, upto),
            lambda after, upto=upto: [r for r in all_rows if after < r[0] <= upto],
            nothing_gone,
        )
        views.append(_exact(index, dim))
    rowids, scores = _exact(index, dim)
    expected = np.frombuffer(b"".join(b for _, b in all_rows), dtype=np.float32).reshape(-1, dim)
    assert len(index) == 5000
    assert rowids.tolist() == list(range(1, 5001))
    assert np.allclose(scores, expected.sum(axis=1), atol=1e-4)
    # A view taken before the buffers grew still holds its own rows, unchanged.
    early_ids, early_scores = views[0]
    assert early_ids.tolist() == list(range(1, 251))
    assert np.allclose(early_scores, expected[:250].sum(axis=1), atol=1e-4)
    # A few deletions (log entries 1..100): the rows stay (searches drop them
    # by id), no reload.
    log = np.arange(1, 5001)  # entry i deleted row i

    def reload(after: int) -> list[tuple[int, bytes]]:
        raise AssertionError("no reload for a few deletions")

    index.refresh(Snapshot(0, 100, 1, 5000), reload, lambda a, u: log[a:u])
    assert len(index) == 5000
    # Past a quarter of the rows deleted: reloaded without them.
    kept = [r for r in all_rows if r[0] > 1300]
    index.refresh(
        Snapshot(0, 1300, 1, 5000),
        lambda after: [r for r in kept if r[0] > after],
        lambda a, u: log[a:u],
    )
    assert _exact(index, dim)[0].tolist() == [r[0] for r in kept]
    # The log trimmed past what the index read: reloaded.
    kept = [r for r in kept if r[0] > 1400]
    index.refresh(
        Snapshot(0, 1400, 1350, 5000),
        lambda after: [r for r in kept if r[0] > after],
        lambda a, u: log[a:u],
    )
    assert _exact(index, dim)[0].tolist() == [r[0] for r in kept]
    # Re-embedding bumps the generation: everything is reloaded from scratch.
    changed = [(rowid, (np.frombuffer(b, np.float32) * 2).tobytes()) for rowid, b in kept]
    index.refresh(
        Snapshot(1, 1400, 1350, 5000),
        lambda after: [r for r in changed if r[0] > after],
        lambda a, u: log[a:u],
    )
    assert np.allclose(_exact(index, dim)[1], 2 * expected[1400:].sum(axis=1), atol=1e-4)


def test_text_search_skips_inactive_best_matches(tmp_path: Path, embedder: Embedder) -> None:
    """When the best full-text matches are closed loops, the search widens to active ones."""
    store = SQLiteStore(tmp_path / "s.sqlite3", "s")
    try:
        now = to_datetime(time.time())
        vector = embedder.embed(["renew the passport"])[0]
        loops = []
        for n in range(150):
            # Shorter intents rank higher in BM25: make the closed ones the best.
            intent = "renew passport" if n < 140 else f"renew the passport before trip number {n}"
            loop = OpenLoop(id=new_id("near"), intent=intent, created_at=now, occurred_at=now)
            store.add_loop(loop, vector)
            loops.append(loop)
        for loop in loops[:140]:
            store.update_loop(loop.model_copy(update={"status": "done", "closed_at": now}))
        open_ids = {loop.id for loop in loops[140:]}
        found = store.text_search(["passport"], SearchFilter(), 8)
        assert len(found) == 8
        assert {m.id for m in found} <= open_ids
        assert [m.score for m in found] == sorted((m.score for m in found), reverse=True)
        # Superseded/closed records included on request: now the closed ones lead.
        everything = store.text_search(["passport"], SearchFilter(include_superseded=True), 8)
        assert {m.id for m in everything} <= {loop.id for loop in loops[:140]}
        # The joined path (a tier filter) agrees with the two-phase one.
        joined = store.text_search(["passport"], SearchFilter(tiers=("near",)), 10)
        assert {m.id for m in joined} == open_ids
        assert {m.id for m in store.text_search(["passport"], SearchFilter(), 10)} == open_ids
    finally:
        store.close()


def test_vector_search_is_consistent_while_rows_are_added(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Searches running beside batch writes see every acknowledged row and no torn ones."""
    from halls.models import ShortEntry

    store = SQLiteStore(tmp_path / "v.sqlite3", "v")
    try:
        now = to_datetime(time.time())
        texts = [f"note {n} about the garden shed" for n in range(40)]
        vectors = embedder.embed(texts)
        errors: list[BaseException] = []
        written = 0

        def write() -> None:
            nonlocal written
            for start in range(0, 40, 8):
                entries = [
                    ShortEntry(id=new_id("short"), content=t, created_at=now, occurred_at=now)
                    for t in texts[start : start + 8]
                ]
                store.add_short(entries, vectors[start : start + 8])
                written = start + 8

        writer = threading.Thread(target=write)
        writer.start()
        while writer.is_alive():
            try:
                seen = written
                found = store.vector_search(vectors[0], SearchFilter(), 100)
                assert len(found) >= seen
            except BaseException as exc:  # surfaced below, in the test thread
                errors.append(exc)
                break
        writer.join()
        assert errors == []
        assert len(store.vector_search(vectors[0], SearchFilter(), 100)) == 40
    finally:
        store.close()


def test_term_counts_equal_a_count_per_term_over_full_text(tmp_path: Path) -> None:
    """term_counts (FTS5 vocabulary) equals a COUNT of full-text matches per term, after edits."""
    store = SQLiteStore(tmp_path / "s.sqlite3", "s")
    try:
        now = to_datetime(time.time())
        rng = random.Random(3)
        texts = corpus.memories(rng, 300) + [
            "Zoë met José at the Café Müller; they're naïve about ﬁsh",
            "RUNNING runs runner ran: the run-book's steps, 2023-10-13",
            "don't won't can't O'Brien’s flooring floors floored",
        ]
        entries = [
            ShortEntry(id=new_id("short"), content=t, created_at=now, occurred_at=now)
            for t in texts
        ]
        unit = np.random.default_rng(3).standard_normal((len(texts), 8)).astype(np.float32)
        store.add_short(entries, unit)
        words = sorted({w for t in texts for w in query_terms(t, limit=1000)})
        words += ["cafe", "ZOË", "they're", "o'brien", "run-book", '"', "*", "absent", "naive"]
        db = store._db.reader()

        def check(expected_total: int) -> None:
            total, df = store.term_counts(words)
            assert total == db.execute("SELECT COUNT(*) FROM docs").fetchone()[0]
            assert total == expected_total
            for word in words:
                quoted = '"' + word.replace('"', '""') + '"'
                sql = "SELECT COUNT(*) FROM docs_fts WHERE docs_fts MATCH ?"
                assert df[word] == db.execute(sql, (quoted,)).fetchone()[0], word
            assert df["flooring"] == 1 and df["cafe"] == df["café"] > 0

        check(len(texts))
        # Counts read before are not reused once the store changed: through
        # the store's writer, or through another connection (another process).
        for entry in entries[:40]:
            store.delete_short(entry.id)
        check(len(texts) - 40)
        store.add_short(entries[:2], unit[:2])
        check(len(texts) - 38)
        other = sqlite3.connect(tmp_path / "s.sqlite3")
        with other:
            other.execute("DELETE FROM docs WHERE item_id = ?", (entries[0].id,))
        other.close()
        check(len(texts) - 39)
        assert store.term_counts(["absent"]) == (len(texts) - 39, {"absent": 0})
        # The words are tokenized as docs_fts tokenizes: the same tokenizer.
        schema = db.execute("SELECT sql FROM sqlite_master WHERE name = 'docs_fts'").fetchone()[0]
        assert f"tokenize = '{TOKENIZER}'" in schema
    finally:
        store.close()
