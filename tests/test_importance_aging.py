"""Importance and lifetimes, through the HTTP API of a live in-process server.

Real SQLite files (PostgreSQL where parametrized) and the real embedding
model; only time is injected (``clock_server.FakeClock``): TTLs run out and
facts fade without sleeping.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from clock_server import DAY, FakeClock, serve
from conftest import BOTH
from halls import Memory, Settings
from halls.config import StorageSettings

S = {"store": "s"}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def client(
    tmp_path: Path, embedder: Any, clock: FakeClock, storage: StorageSettings
) -> Iterator[httpx.Client]:
    # Importance alone promotes nothing here: these tests watch entries age.
    consolidator = {"mode": "external", "promote_min_importance": None}
    settings = Settings(data_dir=tmp_path / "data", storage=storage, consolidator=consolidator)
    with serve(Memory(settings, embedder=embedder, clock=clock)) as live:
        yield live.client


def remember(c: httpx.Client, content: str, **extra: Any) -> str:
    r = c.post("/short", params=S, json={"content": content, **extra})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def run(c: httpx.Client) -> dict[str, Any]:
    r = c.post("/consolidate/run", params=S)
    assert r.status_code == 201, r.text
    return dict(r.json())


def aged(record: dict[str, Any]) -> set[str]:
    return {a["target_id"] for a in record["actions"] if a["kind"] == "age_out"}


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_a_critical_entry_outlives_the_ttl_and_a_low_one_ages_sooner(
    client: httpx.Client, clock: FakeClock
) -> None:
    """Default TTL 8 days: low goes after 4, normal after 8, critical lives 32."""
    c = client
    low = remember(c, "The kettle in the kitchen is descaled on Mondays", importance="low")
    normal = remember(c, "The parking garage closes at ten in the evening")
    critical = remember(c, "The production database is restored from the vault key", importance=1)
    clock.advance(5 * DAY)
    assert aged(run(c)) == {low}
    clock.advance(4 * DAY)  # 9 days: past the default TTL
    assert aged(run(c)) == {normal}
    assert c.get(f"/short/{normal}", params=S).status_code == 404
    assert c.get(f"/short/{critical}", params=S).status_code == 200
    clock.advance(24 * DAY)  # 33 days: past 4 x the TTL
    assert aged(run(c)) == {critical}


PATHS = [
    "Chad prefers absolute paths in config files",
    "Chad likes to use absolute paths in his configs",
    "In configs, Chad wants paths written as absolute paths",
]
STANDUP = "The team standup starts at half past nine every morning"


def facts(c: httpx.Client, status: str) -> dict[str, dict[str, Any]]:
    r = c.get("/long", params={**S, "status": status, "limit": 1000})
    assert r.status_code == 200, r.text
    return {f["content"]: f for f in r.json()}


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_a_promoted_fact_keeps_the_highest_importance_and_retires_later(
    client: httpx.Client, clock: FakeClock
) -> None:
    """The fact of a cluster takes its entries' highest importance; unmarked facts of the
    same evidence retire first (half-life x2 for high)."""
    c = client
    for text, importance in zip(PATHS, ["low", "high", None], strict=True):
        remember(c, text, importance=importance)
        remember(c, STANDUP)
        clock.advance(DAY)
    record = run(c)
    assert [a["kind"] for a in record["actions"]] == ["promote", "promote"], record["actions"]
    active = facts(c, "active")
    [paths] = [f for text, f in active.items() if text in PATHS]
    standup = active[STANDUP]
    assert paths["importance"] == 0.75 and standup["importance"] is None
    assert paths["evidence_count"] == standup["evidence_count"] == 3
    # Evidence 3: a half-life of 63 days; strength falls below 0.05 after ~272
    # days unmarked, ~544 days at high.
    clock.advance(300 * DAY)
    record = run(c)
    retired = {a["target_id"] for a in record["actions"] if a["kind"] == "retire"}
    assert retired == {standup["id"]}
    assert set(facts(c, "retired")) == {STANDUP}
    assert paths["id"] in {f["id"] for f in facts(c, "active").values()}


def test_what_its_writer_marks_high_is_promoted_without_recurring(
    tmp_path: Path, embedder: Any, clock: FakeClock
) -> None:
    """consolidator.promote_min_importance (high by default): a note marked high or
    critical becomes a fact at the next run; a normal one said once waits."""
    settings = Settings(data_dir=tmp_path / "data", consolidator={"mode": "external"})
    with serve(Memory(settings, embedder=embedder, clock=clock)) as live:
        c = live.client
        vault = remember(
            c, "The production database is restored from the vault key", importance="critical"
        )
        remember(c, "The parking garage closes at ten in the evening")
        remember(c, "Invoices go to accounts payable by the fifth", importance="low")
        [made] = [a for a in run(c)["actions"] if a["kind"] == "promote"]
        assert made["inputs"] == [vault] and "importance 1" in made["reason"], made
        assert list(facts(c, "active")) == [
            "The production database is restored from the vault key"
        ]
        assert (
            facts(c, "active")["The production database is restored from the vault key"][
                "importance"
            ]
            == 1.0
        )
