"""Decay and reinforcement through HTTP, with an injected clock.

Recalls make a memory fade more slowly; a fact nobody uses fades until a
run retires it (revertible); a pinned fact never fades. The strength curve
itself is pure and checked here too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from clock_server import DAY, FakeClock, InProcessServer, serve
from conftest import BOTH
from halls.config import RecallSettings, Settings, StorageSettings
from halls.models import LongFact, Retention, ShortEntry, new_id
from halls.recall.strength import half_life_days, strength
from halls.service import Memory

S = {"store": "s"}
LOOK = {**S, "reinforce": "false"}  # an inspection: opening by id without a use
CFG = RecallSettings()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def started(
    tmp_path: Any, embedder: Any, clock: FakeClock, storage: StorageSettings
) -> Iterator[Callable[..., tuple[Memory, InProcessServer]]]:
    with ExitStack() as stack:

        def start(**recall: Any) -> tuple[Memory, InProcessServer]:
            settings = Settings(
                data_dir=tmp_path / "data",
                storage=storage,
                consolidator={"mode": "external"},
                recall={"reinforce_flush_seconds": 0.05, **recall},
            )
            memory = Memory(settings, embedder=embedder, clock=clock)
            return memory, stack.enter_context(serve(memory))

        yield start


def seed(memory: Memory, *facts: tuple[str, int, float]) -> list[str]:
    """Facts (content, evidence, confirmed at) written as the consolidator would."""
    s = memory._stores.embedded("s", create=True)
    ids = []
    for content, evidence, when in facts:
        at = datetime.fromtimestamp(when, tz=UTC)
        f = LongFact(
            id=new_id("long"),
            content=content,
            evidence_count=evidence,
            first_seen=at,
            last_confirmed=at,
            created_at=at,
            occurred_at=at,
        )
        s.add_fact(f, memory.embedder.embed([content])[0])
        ids.append(f.id)
    return ids


def search(c: httpx.Client, query: str, reinforce: bool = True) -> list[dict[str, Any]]:
    body = {"query": query, "n_results": 10, "reinforce": reinforce}
    r = c.post("/search", params=S, json=body)
    assert r.status_code == 200, r.text
    return list(r.json()["results"])


def wait_recalled(memory: Memory, id: str, times: int) -> None:
    """Recalls are written off the request path: wait (bounded) until they land."""
    s = memory._stores.open("s")
    deadline = time.monotonic() + 10
    while (got := s.retention([id]).get(id)) is None or got.access_count < times:
        assert time.monotonic() < deadline, f"{id} recalled {got} times, wanted {times}"
        time.sleep(0.02)


def run(c: httpx.Client) -> dict[str, Any]:
    r = c.post("/consolidate/run", params=S)
    assert r.status_code == 201, r.text
    return dict(r.json())


def two_equal_facts(memory: Memory, c: httpx.Client, clock: FakeClock) -> tuple[str, str, str]:
    """Two equally relevant facts: (the one ranked first, the other, words naming the other)."""
    t0 = clock()
    blue, green = seed(
        memory,
        ("The blue team's standup is at 9:30 in the Orion room", 2, t0),
        ("The green team's standup is at 9:30 in the Vega room", 2, t0),
    )
    first = search(c, "When is the team standup?", reinforce=False)
    winner, loser = [h["id"] for h in first if h["id"] in (blue, green)]
    rel = {h["id"]: h["score_detail"]["relevance"] for h in first}
    assert abs(rel[winner] - rel[loser]) < 0.1 * rel[winner]  # equally relevant, near enough
    return winner, loser, "blue team Orion" if loser == blue else "green team Vega"


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_a_fact_returned_by_searches_but_never_opened_gains_no_rank(started, clock) -> None:
    """Being returned is not being used (issue 52): twelve searches that return the
    second of two equally relevant facts first leave its rank and strength as they were."""
    memory, live = started()
    c = live.client
    winner, loser, loser_words = two_equal_facts(memory, c, clock)
    clock.advance(330 * DAY)
    before = {h["id"]: h for h in search(c, "When is the team standup?", reinforce=False)}
    for _ in range(12):
        assert search(c, f"{loser_words} standup room")[0]["id"] == loser  # returned first
        clock.advance(3 * DAY)
    memory._reinforcer.flush()

    after = {h["id"]: h for h in search(c, "When is the team standup?")}
    assert after[winner]["score"] > after[loser]["score"]
    d_l, d_w = after[loser]["score_detail"], after[winner]["score_detail"]
    assert d_l["strength"] == d_w["strength"] < before[loser]["score_detail"]["strength"]
    assert memory._stores.open("s").retention([loser, winner]) == {}


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_the_fact_opened_lately_outranks_the_one_untouched_for_a_year(started, clock) -> None:
    """Opening a memory by id is a use: of two equally relevant facts, the one
    opened in the last weeks wins; strength is explained."""
    memory, live = started()
    c = live.client
    winner, loser, _ = two_equal_facts(memory, c, clock)

    # Eleven months pass; then the loser is opened every third day for five weeks.
    clock.advance(330 * DAY)
    for i in range(12):
        r = c.get(f"/long/{loser}", params=S)
        assert r.status_code == 200 and r.json()["id"] == loser
        wait_recalled(memory, loser, i + 1)
        clock.advance(3 * DAY)

    after = {h["id"]: h for h in search(c, "When is the team standup?", reinforce=False)}
    assert after[loser]["score"] > after[winner]["score"]
    d_l, d_w = after[loser]["score_detail"], after[winner]["score_detail"]
    assert d_l["strength"] > 0.5 > 0.01 > d_w["strength"]
    for d in (d_l, d_w):
        assert d["recency"] == pytest.approx(1 - CFG.recency_weight * (1 - d["strength"]), abs=1e-3)
    assert memory._stores.open("s").retention([winner]) == {}

    # A short-term entry and an open loop opened by id are used too; a miss is not.
    made = c.post("/short", params=S, json={"content": "Ines reviews every schema migration"})
    loop = c.post("/near", params=S, json={"intent": "Send Ines the migration plan"})
    assert made.status_code == 201 and loop.status_code == 201, loop.text
    assert c.get(f"/short/{made.json()['id']}", params=S).status_code == 200
    assert c.get(f"/near/{loop.json()['id']}", params=S).status_code == 200
    wait_recalled(memory, made.json()["id"], 1)
    wait_recalled(memory, loop.json()["id"], 1)
    assert c.get("/short/s_" + "0" * 26, params=S).status_code == 404


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_a_faded_fact_is_retired_by_a_run_and_restored_by_its_revert(started, clock) -> None:
    """Unused for 400 days, an unpinned fact is retired (out of search); revert restores it."""
    memory, live = started()
    c = live.client
    t0 = clock()
    faded, pinned, established = seed(
        memory,
        ("Kofi's bicycle is a green Gazelle", 1, t0),
        ("Kofi's passport number is kept in the blue folder", 1, t0),
        ("Kofi is allergic to hazelnuts", 6, t0),  # confirmed often: keeps the floor
    )
    r = c.post(f"/long/{pinned}/pin", params=S)
    assert r.status_code == 200 and r.json()["pinned"] is True
    clock.advance(400 * DAY)

    ran = run(c)
    retired = [a for a in ran["actions"] if a["kind"] == "retire"]
    assert [a["target_id"] for a in retired] == [faded]
    assert "fell below 0.05" in retired[0]["reason"] and retired[0]["after"]["status"] == "retired"
    assert c.get(f"/long/{faded}", params=LOOK).json()["status"] == "retired"
    assert faded not in {h["id"] for h in search(c, "What bicycle does Kofi ride?", False)}
    listed = c.get("/long", params={**S, "status": "retired"}).json()
    assert [f["id"] for f in listed] == [faded]
    hits = {h["id"]: h for h in search(c, "Kofi's passport and allergies", False)}
    assert hits[pinned]["score_detail"]["strength"] == 1.0  # pinned: never fades
    assert hits[established]["score_detail"]["strength"] == CFG.strength_floor

    reverted = c.post(f"/consolidate/runs/{ran['id']}/revert", params=S)
    assert reverted.status_code == 200, reverted.text
    assert c.get(f"/long/{faded}", params=LOOK).json()["status"] == "active"
    assert faded in {h["id"] for h in search(c, "What bicycle does Kofi ride?", False)}

    # Unpinned, the pinned fact fades like the others and the next run retires it.
    assert c.post(f"/long/{pinned}/unpin", params=S).json()["pinned"] is False
    again = run(c)
    assert {a["target_id"] for a in again["actions"] if a["kind"] == "retire"} == {faded, pinned}


def test_pin_refuses_bad_input(started) -> None:
    """Unknown fact 404, malformed id 400, unknown store 404; nothing changes."""
    _, live = started()
    c = live.client
    c.post("/short", params=S, json={"content": "creates the store"})
    assert c.post("/long/l_" + "0" * 26 + "/pin", params=S).status_code == 404
    assert c.post("/long/bad/pin", params=S).status_code == 400
    assert c.post("/long/l_" + "0" * 26 + "/pin", params={"store": "nope"}).status_code == 404


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_context_block_reinforces_what_it_shows(started) -> None:
    """What a /context block shows the agent is in use: each memory of it is
    reinforced once, so facts injected at every session start do not fade into
    retirement (a search's hits are not: the test above)."""
    memory, live = started()
    c = live.client
    made = c.post("/short", params=S, json={"content": "Ines reviews every schema migration"})
    block = c.post("/context", params=S, json={"query": "schema migration review"}).json()
    assert made.json()["id"] in block["ids"]
    memory._reinforcer.flush()
    kept = memory._stores.open("s").retention([made.json()["id"]])
    assert kept[made.json()["id"]].access_count == 1


# -- the curve (pure) --

NOW = 1_800_000_000.0


def short_at(days_ago: float, pinned: bool = False) -> ShortEntry:
    at = datetime.fromtimestamp(NOW - days_ago * DAY, tz=UTC)
    return ShortEntry(id=new_id("short"), content="x", pinned=pinned, created_at=at, occurred_at=at)


def fact_at(days_ago: float, evidence: int = 1, status: str = "active") -> LongFact:
    at = datetime.fromtimestamp(NOW - days_ago * DAY, tz=UTC)
    return LongFact(
        id=new_id("long"),
        content="x",
        evidence_count=evidence,
        status=status,  # type: ignore[arg-type]
        first_seen=at,
        last_confirmed=at,
        created_at=at,
        occurred_at=at,
    )


def test_strength_halves_per_half_life_and_recalls_stretch_it() -> None:
    """One half-life halves it; recalls and confirmations slow the fading; pins stop it."""
    half = CFG.recency_half_life_days
    assert strength(short_at(0), None, NOW, CFG) == 1.0
    assert strength(short_at(half), None, NOW, CFG) == pytest.approx(0.5)
    assert strength(short_at(half, pinned=True), None, NOW, CFG) == 1.0
    recalled = Retention(access_count=10, last_accessed=NOW - half * DAY)
    assert strength(short_at(900), recalled, NOW, CFG) > 0.5  # from the last recall, slower
    assert half_life_days(short_at(0), recalled, CFG) == pytest.approx(half * (1 + 2.3979), 1e-3)
    confirmed = fact_at(half, evidence=3)
    assert strength(confirmed, None, NOW, CFG) > strength(fact_at(half), None, NOW, CFG)
    # History fades faster; many confirmations keep a floor.
    assert strength(fact_at(half, status="superseded"), None, NOW, CFG) == pytest.approx(
        0.5**CFG.superseded_decay
    )
    assert strength(fact_at(3650, evidence=5), None, NOW, CFG) == CFG.strength_floor
    assert strength(fact_at(3650, evidence=4), None, NOW, CFG) < 0.01
