"""The Store contract, records and search: every backend must pass this suite.

Fixtures and builders live in ``store_contract`` (shared with
``test_store_contract_runs``); ``test_every_protocol_method_has_a_contract_test``
there keeps the suite complete.
"""

from __future__ import annotations

import numpy as np
import pytest

from halls.errors import AlreadyExists, NotFound
from halls.models import Brief, ForgetFlag, Retention, Scope, SearchFilter, new_id
from halls.scopes import TURN_KEY
from halls.store import Store
from halls.store.base import ScopeStep, ScopeTurn
from store_contract import (
    ALL,
    DIM,
    T0,
    WITH_HIDDEN,
    Opened,
    at,
    axis,
    fact,
    journal,
    loop,
    opened,
    short,
    store,
    text_ids,
    vec,
    vec_ids,
)

__all__ = ["opened", "store"]  # fixtures, imported for pytest


# -- meta --


def test_meta_missing_set_overwrite(store: Store) -> None:
    """get_meta is None for an unknown key; set_meta inserts and then overwrites."""
    assert store.get_meta("embedder") is None
    store.set_meta("embedder", "a:8")
    store.set_meta("embedder", "b:8")
    store.set_meta("other", "x")
    assert store.get_meta("embedder") == "b:8"
    assert store.get_meta("other") == "x"


# -- short-term --


def test_short_round_trip_keeps_every_field(store: Store) -> None:
    """An added entry reads back equal, metadata verbatim (nesting, unicode, null)."""
    meta = {"a": [1, 2.5, None, True], "nested": {"k": "välue ✓"}, "empty": {}}
    e = short(
        "Chad prefers absolute paths",
        topic="prefs",
        when=5.5,
        source="chat",
        pinned=True,
        metadata=meta,
    )
    e = e.model_copy(update={"expires_at": at(100)})
    store.add_short([e], np.stack([axis(0)]))
    got = store.get_short(e.id)
    assert got == e
    assert got is not None and got.metadata == meta


def test_importance_round_trips_on_every_tier(store: Store) -> None:
    """Importance (or its absence) reads back on each tier, by id and in get_records,
    and update_short and update_fact change it."""
    e, unset = short("critical note", importance=1.0), short("plain note")
    store.add_short([e, unset], np.stack([axis(0), axis(1)]))
    n = loop("raise it").model_copy(update={"importance": 0.75})
    store.add_loop(n, axis(2))
    f = fact("a low fact").model_copy(update={"importance": 0.25})
    store.add_fact(f, axis(3))
    got = store.get_records([e.id, unset.id, n.id, f.id])
    assert {i: getattr(r, "importance", "?") for i, r in got.items()} == {
        e.id: 1.0,
        unset.id: None,
        n.id: 0.75,
        f.id: 0.25,
    }
    assert store.update_short(e.model_copy(update={"importance": None}), None)
    store.update_fact(f.model_copy(update={"importance": 0.5}))
    assert (store.get_short(e.id) or e).importance is None
    assert (store.get_loop(n.id) or n).importance == 0.75
    assert (store.get_fact(f.id) or f).importance == 0.5


def test_scope_round_trips_on_every_tier(store: Store) -> None:
    """A record's work scope (or none) reads back on each tier, by id, in lists and in
    get_records; update_fact changes a fact's."""
    e, unset = short("scoped note", scope="web/fix-login"), short("plain note")
    store.add_short([e, unset], np.stack([axis(0), axis(1)]))
    n = loop("raise it").model_copy(update={"scope": "web/billing"})
    store.add_loop(n, axis(2))
    f = fact("a scoped fact").model_copy(update={"scope": "web/fix-login"})
    store.add_fact(f, axis(3))
    j = journal("a scoped event").model_copy(update={"scope": "web/x"})
    store.add_journal([j])
    got = store.get_records([e.id, unset.id, n.id, f.id])
    assert {i: r.scope for i, r in got.items()} == {
        e.id: "web/fix-login",
        unset.id: None,
        n.id: "web/billing",
        f.id: "web/fix-login",
    }
    assert [x.scope for x in store.list_journal(10, 0)] == ["web/x"]
    assert (store.get_journal(j.id) or j).scope == "web/x"
    store.update_fact(f.model_copy(update={"scope": None}))
    assert (store.get_fact(f.id) or f).scope is None
    assert [x.scope for x in store.list_loops(None, 10, 0)] == ["web/billing"]


def _scope(name: str, turn: int, status: str = "open") -> Scope:
    return Scope(name=name, status=status, opened_at=at(turn), last_turn=turn)  # type: ignore[arg-type]


def test_update_scopes_counts_turns_and_upserts(store: Store) -> None:
    """update_scopes hands the step the turn count (0 at first) with the open scopes and
    those named, stores what it returns, and list_scopes reads them by status, the last
    written for first."""
    seen: list[tuple[int, set[str]]] = []

    def step(new: list[Scope]) -> ScopeStep:
        def run(turn: int, scopes: dict[str, Scope]) -> tuple[int, list[Scope]]:
            seen.append((turn, set(scopes)))
            return turn + 1, new

        return run

    assert store.list_scopes(None, 10, 0) == []
    a, b = _scope("web/a", 1), _scope("web/b", 2)
    assert store.update_scopes(["web/a"], step([a, b])) == [a, b]
    assert seen[-1] == (0, set())
    assert store.get_meta(TURN_KEY) == "1"
    closed = b.model_copy(
        update={
            "status": "closed",
            "closed_at": at(9),
            "closed_because": "switched",
            "elsewhere": 3,
        }
    )
    store.update_scopes([], step([closed, _scope("web/c", 3, "closed")]))
    # The open ones, without naming them.
    assert seen[-1] == (1, {"web/a", "web/b"})
    store.update_scopes(["web/c"], step([]))
    assert seen[-1] == (2, {"web/a", "web/c"})
    assert store.get_meta(TURN_KEY) == "3"
    assert store.list_scopes(None, 10, 0) == [_scope("web/c", 3, "closed"), closed, a]
    assert store.list_scopes("open", 10, 0) == [a]
    assert store.list_scopes("closed", 1, 1) == [closed]


def test_update_scopes_that_fails_changes_nothing(store: Store) -> None:
    """An error raised by the step leaves the turn count and the scopes as they were."""
    store.update_scopes(["web/a"], lambda turn, scopes: (turn + 1, [_scope("web/a", 1)]))

    def failing(turn: int, scopes: dict[str, Scope]) -> tuple[int, list[Scope]]:
        raise NotFound("no scope web/z")

    with pytest.raises(NotFound):
        store.update_scopes(["web/z"], failing)
    assert store.get_meta(TURN_KEY) == "1"
    assert store.list_scopes(None, 10, 0) == [_scope("web/a", 1)]


def test_a_write_takes_its_turn_in_its_own_transaction(store: Store) -> None:
    """add_short, add_loop and add_journal take a turn with the write; a write refused
    (a duplicate id) takes none."""

    def opening(name: str) -> ScopeTurn:
        return ScopeTurn([name], lambda turn, scopes: (turn + 1, [_scope(name, turn + 1)]))

    e = short("scoped note", scope="web/a")
    store.add_short([e], np.stack([axis(0)]), (), opening("web/a"))
    store.add_loop(loop("raise it"), axis(1), opening("web/b"))
    store.add_journal([journal("an event")], opening("web/c"))
    store.add_journal([journal("no turn")])
    assert store.get_meta(TURN_KEY) == "3"
    with pytest.raises(AlreadyExists):
        store.add_short([e], np.stack([axis(0)]), (), opening("web/d"))
    assert store.get_meta(TURN_KEY) == "3"
    assert [x.name for x in store.list_scopes(None, 10, 0)] == ["web/c", "web/b", "web/a"]


def test_short_get_missing_and_delete(store: Store) -> None:
    """get of an unknown id is None; delete is True once, then False; the entry is gone."""
    e = short("to be deleted")
    store.add_short([e], np.stack([axis(0)]))
    assert store.get_short(new_id("short")) is None
    assert store.delete_short(e.id) is True
    assert store.delete_short(e.id) is False
    assert store.get_short(e.id) is None


def test_list_short_newest_first_with_limit_offset(store: Store) -> None:
    """list_short pages newest first: limit caps, offset skips."""
    entries = [short(f"entry {i}", when=i) for i in range(5)]
    store.add_short(entries, np.stack([axis(i) for i in range(5)]))
    newest_first = [e.id for e in reversed(entries)]
    assert [e.id for e in store.list_short(10, 0)] == newest_first
    assert [e.id for e in store.list_short(2, 0)] == newest_first[:2]
    assert [e.id for e in store.list_short(2, 3)] == newest_first[3:5]
    assert store.list_short(10, 5) == []


def test_add_short_batch_is_all_or_nothing(opened: Opened, store: Store) -> None:
    """A batch that fails part way (a duplicate id) leaves no entry, row or index trace."""
    first = short("already here alpha")
    store.add_short([first], np.stack([axis(0)]))
    batch = [short("brand new bravo"), first.model_copy(update={"content": "dup charlie"})]
    with pytest.raises(AlreadyExists):
        store.add_short(batch, np.stack([axis(1), axis(2)]))
    assert store.get_short(batch[0].id) is None
    assert [e.id for e in store.list_short(10, 0)] == [first.id]
    assert store.counts()["short"] == 1
    assert text_ids(store, ["bravo"]) == []
    assert text_ids(store, ["charlie"]) == []
    assert vec_ids(store, axis(1)) == [first.id]


def test_add_short_duplicate_inside_one_batch_leaves_nothing(opened: Opened, store: Store) -> None:
    """Two entries with one id in the same batch: the whole batch is refused."""
    a = short("one")
    with pytest.raises(AlreadyExists):
        store.add_short([a, a], np.stack([axis(0), axis(1)]))
    assert store.counts()["short"] == 0
    assert vec_ids(store, axis(0)) == []


# -- near-term --


def test_loops_add_get_list_update_delete(store: Store) -> None:
    """Loops round-trip, list by status newest first, update status, delete."""
    a, b = loop("email Dana the report", topic="work"), loop("renew the passport")
    a = a.model_copy(
        update={
            "trigger_type": "time",
            "trigger_value": "2030-01-01T00:00:00+00:00",
            "expires_at": at(1000),
            "metadata": {"p": 1},
        }
    )
    store.add_loop(a, axis(0))
    store.add_loop(b, axis(1))
    assert store.get_loop(a.id) == a
    assert store.get_loop(new_id("near")) is None
    assert [x.id for x in store.list_loops("open", 10, 0)] == [b.id, a.id]
    assert [x.id for x in store.list_loops(None, 1, 1)] == [a.id]

    done = a.model_copy(update={"status": "done", "closed_at": at(50)})
    store.update_loop(done)
    assert store.get_loop(a.id) == done
    assert [x.id for x in store.list_loops("open", 10, 0)] == [b.id]
    assert [x.id for x in store.list_loops("done", 10, 0)] == [a.id]

    assert store.delete_loop(b.id) is True
    assert store.delete_loop(b.id) is False
    assert store.get_loop(b.id) is None


def test_closed_loop_is_hidden_unless_include_superseded(store: Store) -> None:
    """A loop that is no longer open drops out of default search, as superseded facts do."""
    a = loop("water the ficus plant")
    store.add_loop(a, axis(3))
    assert text_ids(store, ["ficus"]) == [a.id]
    store.update_loop(a.model_copy(update={"status": "cancelled", "closed_at": at(1)}))
    assert text_ids(store, ["ficus"]) == []
    assert vec_ids(store, axis(3)) == []
    assert text_ids(store, ["ficus"], WITH_HIDDEN) == [a.id]
    assert vec_ids(store, axis(3), WITH_HIDDEN) == [a.id]


# -- long-term --


def test_facts_add_get_list_by_status_update(store: Store) -> None:
    """Facts round-trip with every field and list by status newest first."""
    a = fact("Dana works in Lisbon", topic="people").model_copy(
        update={
            "category": "bio",
            "evidence_count": 4,
            "derived_from": ["s_x", "s_y"],
            "metadata": {"why": "consolidated"},
        }
    )
    b = fact("Dana works in Porto", status="demoted")
    store.add_fact(a, axis(0))
    store.add_fact(b, axis(1))
    assert store.get_fact(a.id) == a
    assert store.get_fact(new_id("long")) is None
    assert [f.id for f in store.list_facts(None, 10, 0)] == [b.id, a.id]
    assert [f.id for f in store.list_facts("active", 10, 0)] == [a.id]
    assert [f.id for f in store.list_facts("demoted", 10, 0)] == [b.id]

    newer = a.model_copy(update={"evidence_count": 5, "last_confirmed": at(99), "topic": "moved"})
    store.update_fact(newer)
    assert store.get_fact(a.id) == newer


def test_fact_status_decides_default_visibility(store: Store) -> None:
    """Superseded facts leave default search; active and demoted ones stay; the change is live."""
    active = fact("the office cat is named Pixel")
    demoted = fact("the office cat is named Pickle", status="demoted")
    store.add_fact(active, axis(0))
    store.add_fact(demoted, vec(1, 0.2))
    assert set(text_ids(store, ["cat"])) == {active.id, demoted.id}

    old = active.model_copy(update={"status": "superseded", "superseded_by": demoted.id})
    store.update_fact(old)
    assert text_ids(store, ["cat"]) == [demoted.id]
    assert vec_ids(store, axis(0)) == [demoted.id]
    assert set(text_ids(store, ["cat"], WITH_HIDDEN)) == {active.id, demoted.id}
    assert vec_ids(store, axis(0), WITH_HIDDEN) == [active.id, demoted.id]

    store.update_fact(old.model_copy(update={"status": "active", "superseded_by": None}))
    assert set(text_ids(store, ["cat"])) == {active.id, demoted.id}


def test_fact_added_superseded_is_hidden(store: Store) -> None:
    """A fact stored already superseded is searchable only with include_superseded."""
    f = fact("the wifi password changed", status="superseded")
    store.add_fact(f, axis(2))
    assert text_ids(store, ["wifi"]) == []
    assert text_ids(store, ["wifi"], WITH_HIDDEN) == [f.id]


def test_retired_fact_leaves_search_and_pinned_reads_back(store: Store) -> None:
    """A retired fact is history (found only with hidden ones); pinned survives a round trip."""
    f = fact("the release train leaves on Tuesdays")
    store.add_fact(f, axis(3))
    store.update_fact(f.model_copy(update={"status": "retired"}))
    assert text_ids(store, ["release"]) == [] and vec_ids(store, axis(3)) == []
    assert text_ids(store, ["release"], WITH_HIDDEN) == [f.id]
    store.update_fact(f.model_copy(update={"pinned": True}))
    back = store.get_fact(f.id)
    assert back is not None and back.pinned and back.status == "active"
    assert text_ids(store, ["release"]) == [f.id]
    pinned_new = fact("the on-call phone is the red one").model_copy(update={"pinned": True})
    store.add_fact(pinned_new, axis(4))
    assert store.get_fact(pinned_new.id).pinned  # type: ignore[union-attr]


def test_facts_by_category_in_lists_and_search(store: Store) -> None:
    """list_facts and a search filter select by category; other tiers have none."""
    pref = fact("Chad prefers tabs over spaces").model_copy(update={"category": "preference"})
    dec = fact("the team chose tabs for Go code").model_copy(update={"category": "decision"})
    plain = fact("tabs are four columns wide here")
    store.add_fact(pref, axis(0))
    store.add_fact(dec, vec(1, 0.1))
    store.add_fact(plain, vec(1, 0.2))
    store.add_short([short("tabs everywhere, says Chad")], np.stack([vec(1, 0.3)]))
    assert [f.id for f in store.list_facts(None, 10, 0, "preference")] == [pref.id]
    assert [f.id for f in store.list_facts("active", 10, 0, "decision")] == [dec.id]
    assert store.list_facts("superseded", 10, 0, "decision") == []
    assert len(store.list_facts(None, 10, 0)) == 3
    only = SearchFilter(category="preference")
    assert text_ids(store, ["tabs"], only) == [pref.id]
    assert vec_ids(store, axis(0), only) == [pref.id]
    assert store.get_fact(dec.id).category == "decision"  # type: ignore[union-attr]


# -- reinforcement, edits --


def test_reinforce_adds_counts_and_keeps_the_latest_time(opened: Opened, store: Store) -> None:
    """reinforce adds to the count and raises the last access; unknown ids are ignored."""
    a, b = short("the standup is at nine"), short("the retro is on Fridays")
    store.add_short([a, b], np.stack([axis(0), axis(1)]))
    f = fact("the team uses trunk-based development")
    store.add_fact(f, axis(2))
    assert store.retention([a.id, b.id, f.id]) == {}
    store.reinforce({a.id: (2, T0 + 50), f.id: (1, T0 + 10), "s_" + "0" * 26: (5, T0)})
    store.reinforce({a.id: (1, T0 + 20)})  # an older time never lowers the last access
    got = store.retention([a.id, b.id, f.id, "s_" + "0" * 26])
    assert got == {a.id: Retention(3, T0 + 50), f.id: Retention(1, T0 + 10)}
    store.reinforce({})
    other = opened.open()  # another process sees it
    try:
        assert other.retention([a.id]) == {a.id: Retention(3, T0 + 50)}
    finally:
        opened.close(other)
    assert store.delete_short(a.id)
    assert store.retention([a.id]) == {}


def test_update_short_changes_fields_and_search_at_once(store: Store) -> None:
    """New content is searched by its words and vector at once; reinforcement is kept."""
    e = short("the deploy key lives in the vault", topic="ops")
    other = short("the coffee machine is on floor two")
    store.add_short([e, other], np.stack([axis(0), axis(1)]))
    assert text_ids(store, ["vault"]) == [e.id] and vec_ids(store, axis(0))[0] == e.id
    store.reinforce({e.id: (4, T0 + 5)})

    meta = {"edited": True}
    new = e.model_copy(
        update={"content": "the deploy key lives in the keyring", "topic": "sec", "pinned": True,
                "metadata": meta, "expires_at": None}
    )  # fmt: skip
    assert store.update_short(new, axis(5))
    assert store.get_short(e.id) == new
    assert text_ids(store, ["vault"]) == [] and text_ids(store, ["keyring"]) == [e.id]
    assert vec_ids(store, axis(5))[0] == e.id and vec_ids(store, axis(0))[0] != e.id
    assert text_ids(store, ["keyring"], SearchFilter(topic="sec")) == [e.id]
    assert store.retention([e.id]) == {e.id: Retention(4, T0 + 5)}

    # Without a vector only the fields change (the topic filter follows).
    renamed = new.model_copy(update={"topic": "secrets"})
    assert store.update_short(renamed, None)
    assert text_ids(store, ["keyring"], SearchFilter(topic="secrets")) == [e.id]
    assert store.get_short(e.id) == renamed
    assert not store.update_short(short("never stored"), None)


# -- journal, briefs, flags --


def test_journal_append_and_list_newest_first(store: Store) -> None:
    """Journal events keep every field, list newest first, and are not searchable."""
    events = [journal(f"said thing {i}", when=i) for i in range(3)]
    events[0] = events[0].model_copy(
        update={"role": "user", "session_id": "sess-1", "redactions": 2, "metadata": {"k": [1]}}
    )
    store.add_journal(events[:2])
    store.add_journal(events[2:])
    assert store.list_journal(10, 0) == list(reversed(events))
    assert [e.id for e in store.list_journal(1, 1)] == [events[1].id]
    assert text_ids(store, ["said"], WITH_HIDDEN) == []
    assert store.get_journal(events[0].id) == events[0]
    assert store.get_journal(new_id("journal")) is None


def test_briefs_and_flags(store: Store) -> None:
    """Briefs list newest first; flags list by status in creation order."""
    b1 = Brief(id=new_id("brief"), summary="first", promote_hints=["a"], created_at=at(0))
    b2 = Brief(id=new_id("brief"), summary="second", completed_intents=["n_x"], created_at=at(1))
    store.add_brief(b1)
    store.add_brief(b2)
    assert store.list_briefs(10, 0) == [b2, b1]
    assert store.list_briefs(1, 1) == [b1]
    assert store.get_brief(b1.id) == b1
    assert store.get_brief(new_id("brief")) is None

    f1 = ForgetFlag(
        id=new_id("flag"),
        fact_id="l_1",
        reason="wrong",
        created_at=at(0),
        flagged_by="agent-a",
        admin=True,
    )
    f2 = ForgetFlag(id=new_id("flag"), fact_id="l_2", reason="old", status="done", created_at=at(1))
    store.add_flag(f1)
    store.add_flag(f2)
    assert store.list_flags(None) == [f1, f2]
    assert store.list_flags("pending") == [f1]
    assert store.list_flags("done") == [f2]


# -- full-text search --


def test_text_search_best_first_by_bm25(store: Store) -> None:
    """More occurrences of the term rank first; scores are positive and descending."""
    weak = short("a note about tea and many other unrelated words in a long line")
    strong = short("tea tea tea")
    other = short("coffee only")
    store.add_short([weak, strong, other], np.stack([axis(0), axis(1), axis(2)]))
    found = store.text_search(["tea"], ALL, 10)
    assert [m.id for m in found] == [strong.id, weak.id]
    assert found[0].score > found[1].score > 0
    assert {m.tier for m in found} == {"short"}


def test_text_search_matches_any_term(store: Store) -> None:
    """Terms are OR-ed: a record matching either term is found."""
    a, b, c = short("alpha here"), short("bravo here"), short("charlie here")
    store.add_short([a, b, c], np.stack([axis(0), axis(1), axis(2)]))
    assert set(text_ids(store, ["alpha", "bravo"])) == {a.id, b.id}
    assert text_ids(store, []) == []


def test_text_search_porter_stemming_and_diacritics(store: Store) -> None:
    """Porter folds prefers/preference(s)/preferred together; 'cafe' finds 'café'."""
    prefers = short("Chad prefers absolute paths")
    noun = short("the preference was noted")
    cafe = short("we met at the café downtown")
    store.add_short([prefers, noun, cafe], np.stack([axis(0), axis(1), axis(2)]))
    for word in ("preferences", "preferred", "prefer"):
        assert set(text_ids(store, [word])) == {prefers.id, noun.id}, word
    assert text_ids(store, ["cafe"]) == [cafe.id]
    # Stemming does not turn a different word into a match.
    assert text_ids(store, ["pref"]) == []


def test_term_counts_count_records_holding_each_stemmed_term(store: Store) -> None:
    """term_counts: searchable records in all, and per term how many hold it (stemmed)."""
    a, b, c = short("Marley flooring for the studio"), short("floors and a studio"), short("tea")
    store.add_short([a, b, c], np.stack([axis(0), axis(1), axis(2)]))
    store.add_loop(loop("paint the studio"), axis(3))
    total, df = store.term_counts(["studio", "flooring", "marley", "absent", '"'])
    assert total == 4
    # Porter folds "flooring" and "floors" together, as text_search does.
    assert df == {"studio": 3, "flooring": 2, "marley": 1, "absent": 0, '"': 0}
    assert store.term_counts([]) == (0, {})


def test_text_search_treats_operators_as_words(store: Store) -> None:
    """FTS syntax in terms (quotes, NOT, *, :, parentheses) is literal, never an error."""
    a = short("do NOT touch the prod database")
    store.add_short([a], np.stack([axis(0)]))
    assert text_ids(store, ["not"]) == [a.id]
    for term in ['"', "NOT", "AND", "*", "content:x", "(", "prod)"]:
        store.text_search([term], ALL, 5)  # must not raise
    assert text_ids(store, ['prod"']) == [a.id]


def test_text_search_applies_filters(store: Store) -> None:
    """Tier, topic and the occurred_at range (inclusive) filter full-text hits."""
    s1 = short("budget review", topic="work", when=10)
    s2 = short("budget holiday", topic="home", when=20)
    store.add_short([s1, s2], np.stack([axis(0), axis(1)]))
    n1 = loop("budget approval", topic="work", when=30)
    store.add_loop(n1, axis(2))
    assert set(text_ids(store, ["budget"])) == {s1.id, s2.id, n1.id}
    assert text_ids(store, ["budget"], SearchFilter(tiers=("near",))) == [n1.id]
    assert set(text_ids(store, ["budget"], SearchFilter(topic="work"))) == {s1.id, n1.id}
    window = SearchFilter(since=T0 + 10, until=T0 + 20)
    assert set(text_ids(store, ["budget"], window)) == {s1.id, s2.id}
    assert text_ids(store, ["budget"], SearchFilter(since=T0 + 20.5)) == [n1.id]
    assert text_ids(store, ["budget"], SearchFilter(tiers=())) == []


# -- dense search --


def test_vector_search_best_first_with_cosine_scores(store: Store) -> None:
    """Results come best first, scored by cosine, and limit caps them."""
    near_ = short("closest")
    mid = short("middle")
    far = short("farthest")
    vs = [vec(1, 0.1), vec(1, 1), vec(0, 1)]
    store.add_short([far, near_, mid], np.stack([vs[2], vs[0], vs[1]]))
    q = axis(0)
    found = store.vector_search(q, ALL, 10)
    assert [m.id for m in found] == [near_.id, mid.id, far.id]
    expected = [float(v @ q) for v in vs]
    assert [m.score for m in found] == pytest.approx(expected, abs=1e-5)
    assert vec_ids(store, q, limit=2) == [near_.id, mid.id]


def test_vector_search_filters(store: Store) -> None:
    """Tiers, topic, since/until and include_superseded all filter dense hits."""
    s = short("s", topic="a", when=0)
    store.add_short([s], np.stack([vec(1, 0.1)]))
    n = loop("n", topic="b", when=10)
    store.add_loop(n, vec(1, 0.2))
    f = fact("f", topic="a", when=20)
    store.add_fact(f, vec(1, 0.3))
    gone = fact("g", status="superseded", topic="a", when=30)
    store.add_fact(gone, vec(1, 0.0))
    q = axis(0)
    assert vec_ids(store, q) == [s.id, n.id, f.id]
    assert vec_ids(store, q, WITH_HIDDEN) == [gone.id, s.id, n.id, f.id]
    assert vec_ids(store, q, SearchFilter(tiers=("long", "near"))) == [n.id, f.id]
    assert vec_ids(store, q, SearchFilter(topic="a")) == [s.id, f.id]
    assert vec_ids(store, q, SearchFilter(topic="a", include_superseded=True)) == [
        gone.id,
        s.id,
        f.id,
    ]
    assert vec_ids(store, q, SearchFilter(since=T0 + 10)) == [n.id, f.id]
    assert vec_ids(store, q, SearchFilter(until=T0 + 10)) == [s.id, n.id]
    assert vec_ids(store, q, SearchFilter(topic="nope")) == []
    assert vec_ids(store, q, SearchFilter(tiers=())) == []


def test_vector_search_finds_rare_tier_behind_many_better_rows(store: Store) -> None:
    """A tier filter still finds the one match ranked below hundreds of other-tier rows."""
    crowd = [short(f"crowd {i}") for i in range(300)]
    store.add_short(crowd, np.stack([vec(1, 0.01 * (i % 7)) for i in range(300)]))
    lone = fact("lone fact")
    store.add_fact(lone, vec(0, 1))
    assert vec_ids(store, axis(0), SearchFilter(tiers=("long",)), limit=3) == [lone.id]
    assert len(vec_ids(store, axis(0), limit=3)) == 3


def test_deleted_records_leave_both_searches(store: Store) -> None:
    """After delete_short / delete_loop, neither search returns the record."""
    keep, drop = short("zebra keeper"), short("zebra dropper")
    store.add_short([keep, drop], np.stack([axis(0), vec(1, 0.1)]))
    lp = loop("zebra loop")
    store.add_loop(lp, vec(1, 0.2))
    assert set(text_ids(store, ["zebra"])) == {keep.id, drop.id, lp.id}
    assert store.delete_short(drop.id)
    assert store.delete_loop(lp.id)
    assert text_ids(store, ["zebra"], WITH_HIDDEN) == [keep.id]
    assert vec_ids(store, axis(0), WITH_HIDDEN) == [keep.id]
    assert vec_ids(store, axis(0), SearchFilter(topic=None, since=T0 - 1)) == [keep.id]


# -- records, counts, size --


def test_get_records_across_tiers(store: Store) -> None:
    """get_records returns short, near and long records by id; unknown ids are left out."""
    s = short("s")
    store.add_short([s], np.stack([axis(0)]))
    n = loop("n")
    store.add_loop(n, axis(1))
    f = fact("f")
    store.add_fact(f, axis(2))
    got = store.get_records([s.id, n.id, f.id, new_id("short"), new_id("journal"), "junk"])
    assert got == {s.id: s, n.id: n, f.id: f}
    assert store.get_records([]) == {}


def test_counts_and_size(store: Store) -> None:
    """counts() counts every table; size_bytes() is positive and grows with data."""
    assert store.counts() == {
        "short": 0,
        "near": 0,
        "long": 0,
        "journal": 0,
        "briefs": 0,
        "forget_flags": 0,
    }
    before = store.size_bytes()
    assert before > 0
    store.add_short(
        [short(f"entry {i} " + "x" * 500) for i in range(200)],
        np.stack([axis(i % DIM) for i in range(200)]),
    )
    store.add_loop(loop("l"), axis(0))
    store.add_fact(fact("f"), axis(0))
    store.add_journal([journal("j1"), journal("j2")])
    store.add_brief(Brief(id=new_id("brief"), summary="b", created_at=at(0)))
    store.add_flag(ForgetFlag(id=new_id("flag"), fact_id="l_x", reason="r", created_at=at(0)))
    assert store.counts() == {
        "short": 200,
        "near": 1,
        "long": 1,
        "journal": 2,
        "briefs": 1,
        "forget_flags": 1,
    }
    assert store.size_bytes() > before


# -- re-embedding --


def test_iter_texts_and_set_vectors(store: Store) -> None:
    """iter_texts yields every searchable record once; set_vectors changes dense results."""
    entries = [short(f"entry {i}") for i in range(5)]
    store.add_short(entries, np.stack([axis(0)] * 5))
    lp = loop("loop text")
    store.add_loop(lp, axis(0))
    f = fact("fact text")
    store.add_fact(f, axis(0))
    store.add_journal([journal("journal is not embedded")])

    batches = list(store.iter_texts(3))
    assert [len(b) for b in batches] == [3, 3, 1]
    pairs = [p for b in batches for p in b]
    expected = {e.id: e.content for e in entries} | {lp.id: "loop text", f.id: "fact text"}
    assert dict(pairs) == expected
    assert len(pairs) == len(expected)

    # Re-embed so that only the fact points along axis 5.
    ids = [i for i, _ in pairs]
    store.set_vectors(ids, np.stack([axis(5) if i == f.id else axis(1) for i in ids]))
    assert vec_ids(store, axis(5), limit=1) == [f.id]
    assert vec_ids(store, axis(1), limit=len(ids))[-1] == f.id
    assert store.vector_search(axis(5), ALL, 1)[0].score == pytest.approx(1.0)


# -- several handles, reopening --


def test_second_handle_sees_writes_deletes_and_reembeds(opened: Opened, store: Store) -> None:
    """Another handle (another process's view) sees adds, deletes and new vectors of the first."""
    other = opened.open()
    a = short("first one")
    store.add_short([a], np.stack([axis(0)]))
    # Build the other handle's vector index before the next writes.
    assert vec_ids(other, axis(0)) == [a.id]

    b = short("second one")
    store.add_short([b], np.stack([axis(1)]))
    assert vec_ids(other, axis(1), limit=1) == [b.id]
    assert other.get_short(b.id) == b
    assert text_ids(other, ["second"]) == [b.id]

    assert store.delete_short(b.id)
    assert vec_ids(other, axis(1)) == [a.id]
    assert vec_ids(other, axis(1), SearchFilter(topic=None, since=T0 - 1)) == [a.id]

    store.set_vectors([a.id], np.stack([axis(4)]))
    assert other.vector_search(axis(4), ALL, 1)[0].score == pytest.approx(1.0)

    # Deleting the newest row and adding another must not leave a stale row behind.
    c = short("third one")
    store.add_short([c], np.stack([axis(2)]))
    assert vec_ids(other, axis(2), limit=1) == [c.id]
    assert store.delete_short(c.id)
    d = short("fourth one")
    store.add_short([d], np.stack([axis(3)]))
    assert set(vec_ids(other, axis(2))) == {a.id, d.id}


def test_reopen_keeps_everything(opened: Opened, store: Store) -> None:
    """Closing and reopening (migrations run again) keeps every record, meta and index."""
    s = short("persisted short", topic="t")
    store.add_short([s], np.stack([axis(0)]))
    n = loop("persisted loop")
    store.add_loop(n, axis(1))
    f = fact("persisted fact")
    store.add_fact(f, axis(2))
    j = journal("persisted journal")
    store.add_journal([j])
    store.set_meta("embedder", "m:8")
    counts = store.counts()
    store.close()
    opened.handles.remove(store)

    for _ in range(2):
        again = opened.open()
        assert again.get_meta("embedder") == "m:8"
        assert again.counts() == counts
        assert again.get_records([s.id, n.id, f.id]) == {s.id: s, n.id: n, f.id: f}
        assert again.list_journal(5, 0) == [j]
        assert text_ids(again, ["persisted"]) != []
        assert vec_ids(again, axis(2), limit=1) == [f.id]
        again.close()
        opened.handles.remove(again)

    writable = opened.open()
    extra = short("written after reopening")
    writable.add_short([extra], np.stack([axis(3)]))
    assert writable.counts()["short"] == 2


def test_index_bytes_grow_with_what_searches_loaded(store: Store) -> None:
    """index_bytes() counts the in-memory indexes: more rows searched, more bytes."""
    store.add_short([short(f"note {i} about rivers") for i in range(50)], np.stack([axis(0)] * 50))
    assert text_ids(store, ["rivers"]) and vec_ids(store, axis(0))
    small = store.index_bytes()
    assert small > 0
    store.add_short([short(f"note {i} about lakes") for i in range(500)], np.stack([axis(1)] * 500))
    assert text_ids(store, ["lakes"]) and vec_ids(store, axis(1))
    # 500 more rows of DIM floats (float32 and float16 copies) at the least.
    assert store.index_bytes() >= small + 500 * DIM * 6
