"""The Memory service on a real SQLite data directory and the real embedding model."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from halls import (
    Conflict,
    InvalidInput,
    InvalidStoreName,
    Memory,
    NewShort,
    NotFound,
    Settings,
    StoreNotFound,
)
from halls.embed import Embedder
from halls.models import VISIBILITIES, LongFact, new_id, to_datetime
from halls.store.sqlite import SQLiteStore

T0 = 1_750_000_000.0
DAY = 86400.0


class Clock:
    """A settable clock for Memory(clock=...)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def timed(tmp_path: Path, embedder: Embedder, clock: Clock) -> Iterator[Memory]:
    """The service with an injected clock."""
    with Memory(Settings(data_dir=tmp_path / "timed"), embedder=embedder, clock=clock) as m:
        yield m


def ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.id for h in hits]


# -- remember --


def test_remember_stamps_times_from_the_clock(timed: Memory, clock: Clock) -> None:
    """created_at and occurred_at default to the clock; expires_at = created + ttl."""
    e = timed.remember("Chad prefers absolute paths", topic="prefs", source="chat",
                       metadata={"k": [1, "ü"]})  # fmt: skip
    assert e.created_at == e.occurred_at == to_datetime(T0)
    assert e.expires_at == to_datetime(T0 + timed.settings.short.ttl_seconds)
    assert e.expires_at - e.created_at == timedelta(seconds=691200)  # type: ignore[operator]
    assert timed.get_short(e.id) == e
    clock.now += 60
    later = timed.remember("another")
    assert later.created_at == to_datetime(T0 + 60)


def test_ttl_comes_from_settings(tmp_path: Path, embedder: Embedder) -> None:
    """short.ttl_seconds sets how long an unpinned entry lives."""
    settings = Settings(data_dir=tmp_path / "d", short={"ttl_seconds": 3600})
    with Memory(settings, embedder=embedder, clock=lambda: T0) as m:
        assert m.remember("x").expires_at == to_datetime(T0 + 3600)


def test_pinned_entries_never_expire(timed: Memory) -> None:
    """A pinned entry has no expires_at."""
    e = timed.remember("the wifi is called halls-5g", pinned=True)
    assert e.pinned is True and e.expires_at is None
    assert timed.get_short(e.id).expires_at is None


def test_occurred_at_is_parsed_and_kept(timed: Memory) -> None:
    """occurred_at accepts ISO-8601 or unix seconds; created_at stays the clock time."""
    a = timed.remember("iso", occurred_at="2024-01-02T03:04:05Z")
    b = timed.remember("unix", occurred_at=1704164645)
    assert a.occurred_at == b.occurred_at == to_datetime(1704164645)
    assert a.created_at == to_datetime(T0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"content": ""}, "content"),
        ({"content": "   "}, "content"),
        ({"content": "x" * 32769}, "content"),
        ({"content": "ok", "occurred_at": "last tuesday"}, "occurred_at"),
        ({"content": "ok", "store": "Bad Name"}, "store name"),
        ({"content": "ok", "store": "../escape"}, "store name"),
    ],
)
def test_remember_refuses_bad_input(memory: Memory, kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    """Bad content, time or store name is InvalidInput and stores nothing."""
    with pytest.raises(InvalidInput) as info:
        memory.remember(**kwargs)
    assert message in info.value.message
    assert memory.list_short() == []


def test_remember_many_keeps_input_order(memory: Memory) -> None:
    """A batch returns entries in input order, with ids sortable in that order."""
    items = [NewShort(content=f"note number {i}", topic="batch") for i in range(20)]
    out = memory.remember_many(items)
    assert [e.content for e in out] == [i.content for i in items]
    assert [e.id for e in out] == sorted(e.id for e in out)
    assert [e.id for e in memory.list_short(limit=20)] == [e.id for e in reversed(out)]


def test_remember_many_is_all_or_nothing(memory: Memory) -> None:
    """One bad item refuses the batch, names the item, and stores nothing."""
    items = [NewShort(content="fine"), NewShort(content=""), NewShort(content="fine too")]
    with pytest.raises(InvalidInput) as info:
        memory.remember_many(items)
    assert "items[1].content" in info.value.message
    bad_time = [NewShort(content="a"), NewShort(content="b", occurred_at="soon")]
    with pytest.raises(InvalidInput, match=r"items\[1\]\.occurred_at"):
        memory.remember_many(bad_time)
    assert memory.list_short() == []
    assert memory.stats()["counts"]["short"] == 0


def test_remember_many_batch_bounds(memory: Memory) -> None:
    """An empty batch and a batch over 1000 items are refused."""
    with pytest.raises(InvalidInput):
        memory.remember_many([])
    with pytest.raises(InvalidInput, match="1000"):
        memory.remember_many([NewShort(content="x")] * 1001)
    assert memory.list_short() == []


def test_remembered_is_searchable_at_once(memory: Memory) -> None:
    """A memory is found by a paraphrase right after remember returns."""
    memory.remember("The staging database lives on host db-stage-2")
    memory.remember("Lunch on Fridays is usually pizza")
    hits = memory.search("where is the staging DB hosted?")
    assert hits[0].content == "The staging database lives on host db-stage-2"
    assert hits[0].score_detail["relevance"] > 0


# -- listing, deleting --


def test_get_and_delete_short(memory: Memory) -> None:
    """get/delete by id; unknown ids are NotFound, malformed ones InvalidInput."""
    e = memory.remember("to delete")
    memory.delete_short(e.id)
    with pytest.raises(NotFound):
        memory.get_short(e.id)
    with pytest.raises(NotFound):
        memory.delete_short(e.id)
    with pytest.raises(InvalidInput):
        memory.get_short("n_" + e.id[2:])
    assert memory.search("to delete") == []


def test_list_paging_is_validated(memory: Memory) -> None:
    """limit must be 1..1000 and offset >= 0."""
    for kwargs in ({"limit": 0}, {"limit": 1001}, {"offset": -1}):
        with pytest.raises(InvalidInput):
            memory.list_short(**kwargs)


# -- stores --


def test_default_store_is_created_on_read(memory: Memory) -> None:
    """Reading the default store on a fresh data dir works and creates it."""
    assert memory.stores() == []
    assert memory.list_short() == []
    assert memory.search("anything at all") == []
    assert memory.stores() == ["default"]


def test_reading_a_missing_store_is_store_not_found(memory: Memory) -> None:
    """Reads of a named store that was never written raise StoreNotFound and create nothing."""
    for call in (
        lambda: memory.list_short(store="nope"),
        lambda: memory.search("x", store="nope"),
        lambda: memory.stats(store="nope"),
        lambda: memory.list_loops(store="nope"),
        lambda: memory.list_long(store="nope"),
        lambda: memory.list_journal(store="nope"),
    ):
        with pytest.raises(StoreNotFound) as info:
            call()
        assert "nope" in info.value.message
        assert "/" not in info.value.message
    assert "nope" not in memory.stores()


def test_first_write_creates_a_store_and_stores_are_isolated(memory: Memory) -> None:
    """A write creates its store; a search in one store never returns another's memory."""
    a = memory.remember("the launch code phrase is blue falcon", store="alice")
    memory.remember("bob likes green tea", store="bob")
    assert memory.stores() == ["alice", "bob"]
    assert ids(memory.search("launch code phrase", store="alice")) == [a.id]
    assert "blue falcon" not in " ".join(
        h.content for h in memory.search("launch code", store="bob")
    )
    with pytest.raises(NotFound):
        memory.get_short(a.id, store="bob")


def test_store_names_are_validated(memory: Memory) -> None:
    """Names outside [a-z0-9][a-z0-9_-]{0,63} are InvalidStoreName; nothing is created."""
    for bad in ("Upper", "-lead", "_lead", "a" * 65, "a b", "a/b", "..", "é", "default\n"):
        with pytest.raises(InvalidStoreName):
            memory.create_store(bad)
        with pytest.raises(InvalidStoreName):
            memory.remember("x", store=bad)
    for good in ("a", "0", "a" * 64, "my-store_2"):
        assert memory.create_store(good) == good
    assert sorted(memory.stores()) == sorted(["a", "0", "a" * 64, "my-store_2"])
    assert sorted(p.name for p in memory.settings.data_dir.iterdir() if p.suffix == ".sqlite3") == \
        sorted(f"{n}.sqlite3" for n in memory.stores())  # fmt: skip


def test_created_store_is_empty_and_readable(memory: Memory) -> None:
    """stores create makes an empty, readable store with the embedder fingerprint set."""
    memory.create_store("fresh")
    assert memory.list_short(store="fresh") == []
    stats = memory.stats(store="fresh")
    assert stats["counts"]["short"] == 0
    assert stats["embedder"] == "all-MiniLM-L6-v2/onnx-int8-v3:384"


# -- search --


def test_search_filters(timed: Memory, clock: Clock) -> None:
    """tiers, topic and since/until restrict hits; bad filters are InvalidInput."""
    old = timed.remember("deploy the billing service", topic="ops", occurred_at=T0 - 10 * DAY)
    new = timed.remember("deploy the search service", topic="dev", occurred_at=T0 - DAY)
    loop = timed.add_loop("deploy the mail service on monday", topic="ops")
    q = "deploy service"
    assert set(ids(timed.search(q, n_results=10))) == {old.id, new.id, loop.id}
    assert ids(timed.search(q, tiers=["near"])) == [loop.id]
    assert set(ids(timed.search(q, tiers=["short"], n_results=10))) == {old.id, new.id}
    assert set(ids(timed.search(q, topic="ops", n_results=10))) == {old.id, loop.id}
    assert ids(timed.search(q, tiers=["short"], since=T0 - 2 * DAY)) == [new.id]
    # The filter leaves one weak match (cosine 0.52, and no BM25 in a store of
    # three memories): its relevance is below the default; this is about the filter.
    until = timed.search(q, until="2025-06-08T00:00:00Z", n_results=10, min_relevance=0)
    assert ids(until) == [old.id]
    assert len(timed.search(q, n_results=1)) == 1
    for bad in ({"tiers": ["diary"]}, {"n_results": 0}, {"n_results": 101},
                {"since": "whenever"}):  # fmt: skip
        with pytest.raises(InvalidInput):
            timed.search(q, **bad)
    with pytest.raises(InvalidInput):
        timed.search("  ")


def test_search_hits_carry_score_detail(memory: Memory) -> None:
    """Every hit has score and the parts it is the product of, best first."""
    memory.remember("Dana's birthday is on the 3rd of May")
    memory.remember("The car needs new tyres")
    hits = memory.search("when is Dana's birthday", n_results=2)
    assert [h.tier for h in hits] == ["short", "short"]
    assert hits[0].score >= hits[1].score
    d = hits[0].score_detail
    assert d["bm25_rank"] == 1 and d["dense_rank"] == 1 and d["relevance"] == 1.0
    # Bonuses (feedback, context, episode, speaker, time, substance) add to relevance.
    names = ("feedback", "context", "episode", "speaker", "time", "substance")
    bonus = sum(d.get(k) or 0 for k in names)
    parts = d["tier_weight"] * d["evidence"] * d["recency"]
    assert hits[0].score == pytest.approx((d["relevance"] + bonus) * parts, abs=1e-4)


def test_completed_loop_leaves_default_search(memory: Memory) -> None:
    """A completed loop is not returned by default; complete twice is Conflict."""
    loop = memory.add_loop("call the plumber about the leak")
    assert ids(memory.search("plumber leak", tiers=["near"])) == [loop.id]
    done = memory.complete_loop(loop.id)
    assert done.status == "done" and done.closed_at is not None
    assert memory.search("plumber leak", tiers=["near"]) == []
    assert ids(memory.search("plumber leak", tiers=["near"], include_superseded=True)) == [loop.id]
    with pytest.raises(Conflict):
        memory.complete_loop(loop.id)


# -- long-term: written by the consolidator, read here --


def add_facts(memory: Memory, *facts: LongFact) -> None:
    """Write facts as the consolidator would: through its own handle on the store file."""
    memory.create_store("default")
    other = SQLiteStore(memory.settings.data_dir / "default.sqlite3", "default")
    try:
        for f in facts:
            other.add_fact(f, memory.embedder.embed([f.content])[0])
    finally:
        other.close()


def make_fact(content: str, **extra: object) -> LongFact:
    t = to_datetime(T0)
    return LongFact(id=new_id("long"), content=content, first_seen=t, last_confirmed=t,
                    created_at=t, occurred_at=t, **extra)  # type: ignore[arg-type]  # fmt: skip


def test_get_long_returns_the_supersession_chain(memory: Memory) -> None:
    """get_long gives the fact and its whole chain oldest first, from any link."""
    a, b, c = (new_id("long") for _ in range(3))
    f1 = make_fact("Dana lives in Porto", status="superseded", superseded_by=b).model_copy(
        update={"id": a}
    )
    f2 = make_fact("Dana lives in Lisbon", status="superseded", supersedes=a,
                   superseded_by=c).model_copy(update={"id": b})  # fmt: skip
    f3 = make_fact("Dana lives in Madrid", supersedes=b).model_copy(update={"id": c})
    add_facts(memory, f1, f2, f3)
    for start in (a, b, c):
        fact, chain = memory.get_long(start)
        assert fact.id == start
        assert [f.id for f in chain] == [a, b, c]
    assert [f.id for f in memory.list_long(status="superseded")] == [b, a]
    assert ids(memory.search("where does Dana live", tiers=["long"])) == [c]
    found = ids(memory.search("where does Dana live", tiers=["long"], include_superseded=True))
    assert set(found) == {a, b, c}


def test_get_long_survives_a_cycle(memory: Memory) -> None:
    """A corrupt chain that loops back ends instead of spinning forever."""
    a, b = new_id("long"), new_id("long")
    f1 = make_fact("one", supersedes=b, superseded_by=b).model_copy(update={"id": a})
    f2 = make_fact("two", supersedes=a, superseded_by=a).model_copy(update={"id": b})
    add_facts(memory, f1, f2)
    _, chain = memory.get_long(a)
    assert sorted(f.id for f in chain) == sorted([a, b])


def test_get_long_missing_and_malformed(memory: Memory) -> None:
    """An unknown fact id is NotFound; a short id where a fact id is due is InvalidInput."""
    with pytest.raises(NotFound):
        memory.get_long(new_id("long"))
    with pytest.raises(InvalidInput):
        memory.get_long(new_id("short"))
    with pytest.raises(InvalidInput):
        memory.list_long(status="gone")


def test_flag_forget(memory: Memory, tmp_path: Path) -> None:
    """A flag on a fact is recorded (nothing deleted); a missing fact is NotFound."""
    f = make_fact("the printer is on floor 2")
    add_facts(memory, f)
    flag = memory.flag_forget(f.id, "printer moved")
    assert flag.fact_id == f.id and flag.status == "pending"
    assert memory.stats()["counts"]["forget_flags"] == 1
    assert memory.get_long(f.id)[0] == f
    with pytest.raises(NotFound):
        memory.flag_forget(new_id("long"), "no such fact")
    with pytest.raises(InvalidInput):
        memory.flag_forget(f.id, "  ")
    assert memory.stats()["counts"]["forget_flags"] == 1


# -- journal, briefs, stats --


def test_journal_redacts_before_storing(memory: Memory) -> None:
    """Journal events are stored with secrets redacted and the count recorded."""
    from halls import NewJournal

    key = "sk-" + "Z" * 30
    (event,) = memory.journal([NewJournal(content=f"my key is {key}", role="user")])
    assert key not in event.content and event.redactions == 1
    (stored,) = memory.list_journal()
    assert stored == event
    assert memory.search("my key is", n_results=5) == []


def test_journal_visibility_is_checked(memory: Memory) -> None:
    """A visibility other than full, summary or private is InvalidInput; the batch stores none."""
    from halls import NewJournal

    memory.journal([NewJournal(content="first")])
    for bad in ("secret", "", None, 1, ["private"]):
        with pytest.raises(InvalidInput, match="visibility"):
            memory.journal([NewJournal(content="fine"), NewJournal(content="x", visibility=bad)])
    assert [e.content for e in memory.list_journal()] == ["first"]
    kept = memory.journal([NewJournal(content="y", visibility=v) for v in VISIBILITIES])
    assert [e.visibility for e in kept] == ["full", "summary", "private"]


def test_brief_is_stored(memory: Memory) -> None:
    """A brief is stored; blank hints are refused."""
    memory.submit_brief("we fixed the build", promote_hints=["build uses make"])
    assert memory.stats()["counts"]["briefs"] == 1
    with pytest.raises(InvalidInput):
        memory.submit_brief("x", promote_hints=[" "])
    assert memory.stats()["counts"]["briefs"] == 1


def test_stats(memory: Memory) -> None:
    """stats counts each tier, reports size and the embedder fingerprint."""
    memory.remember("one")
    memory.remember("two")
    memory.add_loop("three")
    s = memory.stats()
    assert s["store"] == "default"
    assert s["counts"]["short"] == 2 and s["counts"]["near"] == 1 and s["counts"]["long"] == 0
    assert s["size_bytes"] > 0
    assert s["embedder"] == "all-MiniLM-L6-v2/onnx-int8-v3:384"


def test_memories_survive_a_new_memory_object(tmp_path: Path, embedder: Embedder) -> None:
    """Closing and reopening the service on the same data dir keeps everything."""
    settings = Settings(data_dir=tmp_path / "d")
    with Memory(settings, embedder=embedder) as m:
        e = m.remember("persist me across restarts", store="keep")
    with Memory(settings, embedder=embedder) as m:
        assert m.get_short(e.id, store="keep") == e
        assert ids(m.search("persist across restarts", store="keep")) == [e.id]
