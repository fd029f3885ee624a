"""The Store contract, the journal's full text (``JournalIndex``): every backend passes it.

Scores are checked against FTS5 itself: a private in-memory FTS5 table with
the same tokenizer, holding the same events, gives the expected BM25.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from halls.models import JournalEvent, SearchFilter
from halls.store import Store
from halls.store.memindex.terms import TOKENIZER
from store_contract import ALL, T0, axis, journal, opened, short, store

__all__ = ["opened", "store"]  # fixtures, imported for pytest


def event(content: str, when: float = 0.0, **extra: object) -> JournalEvent:
    return journal(content, when).model_copy(update=extra)


def fts5_scores(texts: dict[str, str], terms: list[str]) -> dict[str, float]:
    """What FTS5's bm25() gives each text for the OR of ``terms`` (higher is better)."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(c, tokenize = '{TOKENIZER}')")
    ids = list(texts)
    db.executemany(
        "INSERT INTO t(rowid, c) VALUES (?, ?)", [(n, texts[i]) for n, i in enumerate(ids)]
    )
    query = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    rows = db.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", (query,)).fetchall()
    db.close()
    return {ids[r]: -s for r, s in rows}


def test_journal_search_scores_as_fts5(store: Store) -> None:
    """Best first, each score FTS5's BM25 over the searchable events (private ones uncounted)."""
    events = [
        event("the flamingo budget flamingo meeting ran long"),
        event("we talked about the flamingo once, among many other unrelated words today"),
        event("nothing of interest here at all"),
        event("e-mail the vendor about the budget"),
        event("the flamingo secret is pelican", visibility="private"),
        event("flamingo budget numbers", visibility="summary"),
    ]
    store.add_journal(events)
    searchable = {e.id: e.content for e in events if e.visibility != "private"}
    for terms in (["flamingo"], ["flamingo", "budget"], ["e-mail", "budgets"]):
        found = store.journal_search(terms, ALL, 10)
        expected = fts5_scores(searchable, terms)
        assert {m.id for m in found} == set(expected), terms
        assert [m.score for m in found] == sorted((m.score for m in found), reverse=True)
        for m in found:
            assert m.tier == "journal"
            assert m.score == pytest.approx(expected[m.id], rel=1e-9, abs=1e-12), terms
    assert store.journal_search(["pelican"], ALL, 10) == []
    assert store.journal_search([], ALL, 10) == []


def test_journal_search_never_finds_a_private_event(store: Store) -> None:
    """A private event is not found by any of its words; full and summary ones are."""
    hidden = event("the vault combination is 4417 orchid", visibility="private")
    shown = event("orchid delivery arrives Tuesday")
    summary = event("orchid invoice disputed", visibility="summary")
    store.add_journal([hidden, shown, summary])
    assert {m.id for m in store.journal_search(["orchid"], ALL, 10)} == {shown.id, summary.id}
    for word in ("vault", "combination", "4417"):
        assert store.journal_search([word], ALL, 10) == []
    # Still in the journal itself, whole.
    assert store.get_journal(hidden.id) == hidden


def test_journal_search_applies_topic_and_time(store: Store) -> None:
    """topic, since and until filter by the event's own; category and tiers do not apply."""
    early = event("harbour crane inspection", when=0.0, topic="ops")
    late = event("harbour crane repainted", when=100.0, topic="paint")
    store.add_journal([early, late])
    ids = lambda f: {m.id for m in store.journal_search(["harbour"], f, 10)}  # noqa: E731
    assert ids(ALL) == {early.id, late.id}
    assert ids(SearchFilter(topic="ops")) == {early.id}
    assert ids(SearchFilter(since=T0 + 50)) == {late.id}
    assert ids(SearchFilter(until=T0 + 50)) == {early.id}
    assert ids(SearchFilter(tiers=("short",))) == {early.id, late.id}
    assert len(store.journal_search(["harbour"], ALL, 1)) == 1


def test_journal_search_leaves_the_other_tiers_statistics_alone(store: Store) -> None:
    """Journal events count in none of text_search's BM25 statistics, and are never its hits."""
    a, b = short("walrus sighting at the pier"), short("a quiet day")
    store.add_short([a, b], np.stack([axis(0), axis(1)]))
    before = store.text_search(["walrus"], ALL, 10)
    store.add_journal([event("walrus walrus walrus"), event("the walrus again")])
    after = store.text_search(["walrus"], ALL, 10)
    assert after == before and [m.id for m in after] == [a.id]
    assert store.term_counts(["walrus"]) == (2, {"walrus": 1})


def test_journal_search_forgets_a_purged_event(store: Store) -> None:
    """A purged event (by id, or by a value it holds) is gone from journal_search at once."""
    one, two = event("gannet colony count 41"), event("gannet colony count 57 SSN 078-05-1120")
    store.add_journal([one, two])
    store.purge(facts=[], short=[], journal=[one.id], values=["078-05-1120"], flags=[])
    assert store.journal_search(["gannet"], ALL, 10) == []
    assert not store.holds("078-05-1120")
