"""The consolidator end to end, through the HTTP API of a live in-process server.

Real SQLite files (and a real PostgreSQL for the tests parametrized over
both backends) and the real embedding model; only time is injected
(``clock_server.FakeClock``), so days and TTLs pass without sleeping.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from clock_server import DAY, FakeClock, InProcessServer, serve
from conftest import BOTH
from halls import Memory, Settings
from halls.config import StorageSettings

S = {"store": "s"}
# Personal data that writes keep (only a PII forget purges it): an SSN or a
# card number would be redacted before it was stored (tests/test_screening.py).
IBAN = "DE89 3704 0044 0532 0130 00"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_server(
    tmp_path: Path, embedder: Any, clock: FakeClock, storage: StorageSettings
) -> Iterator[Callable[..., InProcessServer]]:
    """Start in-process servers on tmp_path/data (the ``storage`` backend) with
    consolidator overrides."""
    with ExitStack() as stack:

        def make(**consolidator: Any) -> InProcessServer:
            settings = Settings(
                data_dir=tmp_path / "data",
                storage=storage,
                consolidator={"mode": "external", **consolidator},
            )
            memory = Memory(settings, embedder=embedder, clock=clock)
            return stack.enter_context(serve(memory))

        yield make


def remember(c: httpx.Client, content: str, **extra: Any) -> str:
    r = c.post("/short", params=S, json={"content": content, **extra})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def run(c: httpx.Client, dry_run: bool | None = None) -> dict[str, Any]:
    body = None if dry_run is None else {"dry_run": dry_run}
    r = c.post("/consolidate/run", params=S, json=body)
    assert r.status_code == (200 if dry_run else 201), r.text
    return dict(r.json())


def facts(c: httpx.Client, status: str | None = None) -> list[dict[str, Any]]:
    params = {**S, "limit": 1000} | ({"status": status} if status else {})
    r = c.get("/long", params=params)
    assert r.status_code == 200, r.text
    return list(r.json())


def kinds(record: dict[str, Any]) -> list[str]:
    return [a["kind"] for a in record["actions"]]


def state(c: httpx.Client) -> dict[str, Any]:
    """Everything a run may change, as the API shows it."""
    short = c.get("/short", params={**S, "limit": 1000}).json()
    near = c.get("/near", params={**S, "limit": 1000}).json()
    return {
        "short": sorted((e["id"], e["content"]) for e in short),
        "long": sorted(
            (f["id"], f["status"], f["evidence_count"], f["superseded_by"], f["last_confirmed"])
            for f in facts(c)
        ),
        "near": sorted((n["id"], n["status"]) for n in near),
    }


def paraphrases(c: httpx.Client, clock: FakeClock, texts: list[str]) -> list[str]:
    ids = []
    for text in texts:
        ids.append(remember(c, text))
        clock.advance(DAY)
    return ids


PATHS = [
    "Chad prefers absolute paths in config files",
    "Chad likes to use absolute paths in his configs",
    "In configs, Chad wants paths written as absolute paths",
]


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_three_paraphrases_on_three_days_become_one_fact(make_server, clock) -> None:
    """Paraphrases written on 3 days -> ONE fact, evidence 3; a one-off ages out after the TTL."""
    c = make_server().client
    ids = paraphrases(c, clock, PATHS)
    once = remember(c, "I had pasta for lunch today")
    record = run(c)
    assert record["status"] == "done" and record["engine"] == "heuristic"
    assert record["counts"]["promote"] == 1 and kinds(record) == ["promote"]
    [fact] = facts(c)
    assert fact["evidence_count"] == 3 and fact["status"] == "active"
    assert fact["content"] in PATHS and sorted(fact["derived_from"]) == sorted(ids)
    assert record["actions"][0]["target_id"] == fact["id"]
    assert sorted(record["actions"][0]["inputs"]) == sorted(ids)
    assert c.get(f"/short/{once}", params=S).status_code == 200

    clock.advance(7 * DAY)  # the one-off is 7 days old: the 8-day TTL has not run out
    record = run(c)
    assert once not in [a["target_id"] for a in record["actions"]]
    assert [a["target_id"] for a in record["actions"] if a["kind"] == "age_out"] == ids
    clock.advance(2 * DAY)
    record = run(c)
    aged = {a["target_id"]: a for a in record["actions"] if a["kind"] == "age_out"}
    assert once in aged and "never promoted" in aged[once]["reason"]
    assert aged[once]["before"]["content"] == "I had pasta for lunch today"
    assert c.get(f"/short/{once}", params=S).status_code == 404
    assert [f["id"] for f in facts(c)] == [fact["id"]]


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_contradicting_preference_supersedes(make_server, clock) -> None:
    """A later change supersedes: the chain shows both, search prefers the new fact."""
    c = make_server().client
    paraphrases(c, clock, PATHS[:2])
    [old] = [f["id"] for f in facts(c)] or [run(c)["actions"][0]["target_id"]]
    clock.advance(DAY)
    remember(c, "Chad now prefers tildes like ~/src instead of absolute paths in configs")
    record = run(c)
    assert kinds(record) == ["supersede"]
    action = record["actions"][0]
    assert action["target_id"] == old and action["before"]["id"] == old
    new = action["after"]["id"]

    r = c.get(f"/long/{old}", params=S).json()
    assert r["status"] == "superseded" and r["superseded_by"] == new
    assert [f["id"] for f in r["chain"]] == [old, new]
    r = c.get(f"/long/{new}", params=S).json()
    assert r["supersedes"] == old and "tildes" in r["content"]
    assert [f["id"] for f in r["chain"]] == [old, new]

    query = {"query": "how does Chad write paths in his configs?", "n_results": 10}
    hits = c.post("/search", params=S, json=query).json()["results"]
    assert hits[0]["id"] == new
    assert old not in [h["id"] for h in hits]
    hits = c.post("/search", params=S, json={**query, "include_superseded": True}).json()["results"]
    assert old in [h["id"] for h in hits]


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_brief_hint_promotes_completes_and_loops_expire(make_server, clock) -> None:
    """A hint promotes one entry, noise is never promoted, intents close loops, loops expire."""
    c = make_server().client
    ci = remember(c, "The CI runner has 2 cores", topic="infra")
    remember(c, "Lunch today was a sandwich")
    clock.advance(DAY)
    remember(c, "Lunch today was a sandwich again")
    tax = c.post("/near", params=S, json={"intent": "Ask how the tax filing went"}).json()["id"]
    tls = c.post(
        "/near", params=S, json={"intent": "Renew the TLS cert", "expires_at": clock() + DAY}
    ).json()["id"]
    keep = c.post("/near", params=S, json={"intent": "Book the dentist"}).json()["id"]
    r = c.post(
        "/brief",
        params=S,
        json={
            "summary": "Set up CI; talked about lunch and taxes",
            "promote_hints": ["CI runner"],
            "completed_intents": ["asked how the tax filing went"],
            "noise": ["lunch"],
        },
    )
    assert r.status_code == 201, r.text
    clock.advance(2 * DAY)
    record = run(c)
    assert sorted(kinds(record)) == ["complete", "expire", "promote"]
    [fact] = facts(c)
    assert fact["content"] == "The CI runner has 2 cores" and fact["evidence_count"] == 1
    assert fact["derived_from"] == [ci] and fact["topic"] == "infra"
    promote = next(a for a in record["actions"] if a["kind"] == "promote")
    assert "hint 'CI runner'" in promote["reason"]
    assert any("noise" in n for n in record["notes"])
    status = {n["id"]: n["status"] for n in c.get("/near", params=S).json()}
    assert status == {tax: "done", tls: "expired", keep: "open"}


def _iban_fact(c: httpx.Client, clock: FakeClock) -> str:
    c.post("/journal", params=S, json={"content": f"user: my IBAN is {IBAN}", "role": "user"})
    paraphrases(c, clock, [f"My IBAN is {IBAN}", f"my bank account IBAN is {IBAN}"])
    record = run(c)
    [fid] = [a["target_id"] for a in record["actions"] if a["kind"] == "promote"]
    return fid


def _files(data: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in data.glob("s.sqlite3*") if "lock" not in p.name}


def test_forget_pii_purges_every_byte(make_server, clock, tmp_path) -> None:
    """Forget 'contains my bank account' -> purge: gone from search, journal, runs, db and WAL."""
    c = make_server().client
    fid = _iban_fact(c, clock)
    other = remember(c, "The office wifi is called halls-guest")
    files = _files(tmp_path / "data")
    assert any(IBAN.encode() in b for b in files.values())  # the check below can fail
    r = c.post(f"/long/{fid}/forget", params=S, json={"reason": "contains my bank account"})
    assert r.status_code == 202
    record = run(c)
    [purge] = [a for a in record["actions"] if a["kind"] == "purge"]
    assert purge["target_id"] == fid and purge["after"] is None

    assert c.get(f"/long/{fid}", params=S).status_code == 404
    hits = c.post(
        "/search",
        params=S,
        json={"query": "bank account IBAN", "include_superseded": True},
    ).json()["results"]
    assert all(IBAN not in h["content"] for h in hits)
    assert all(IBAN not in e["content"] for e in c.get("/journal", params=S).json())
    assert IBAN not in c.get("/consolidate/runs", params=S).text
    assert c.get(f"/short/{other}", params=S).status_code == 200  # only the PII went
    files = _files(tmp_path / "data")
    assert "s.sqlite3" in files
    for name, data in files.items():
        assert IBAN.encode() not in data, name
        assert IBAN.replace(" ", "").encode() not in data, name


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_that_is_wrong_demotes_below_every_active_fact(make_server, clock) -> None:
    """Forget 'that is wrong' -> demoted, evidence 0, kept, and ranked below every active fact."""
    c = make_server().client
    for text in [
        "Chad uses Vim as his editor",
        "Chad's editor font is Iosevka",
        "Chad edits code in a terminal",
        "Chad's favourite language is Rust",
    ]:
        remember(c, text, pinned=True)
    run(c)
    vim = next(f for f in facts(c) if "Vim" in f["content"])
    c.post(f"/long/{vim['id']}/forget", params=S, json={"reason": "that is wrong"})
    record = run(c)
    assert kinds(record) == ["demote"]
    r = c.get(f"/long/{vim['id']}", params=S).json()
    assert r["status"] == "demoted" and r["evidence_count"] == 0
    hits = c.post(
        "/search",
        params=S,
        json={"query": "Chad uses Vim as his editor", "tiers": ["long"], "n_results": 10},
    ).json()["results"]
    assert [h["id"] for h in hits][-1] == vim["id"] and len(hits) == 4
    # Searching the demoted fact's exact words still ranks it last.
    assert hits[0]["score"] > hits[-1]["score"]


def _busy_store(c: httpx.Client, clock: FakeClock) -> None:
    paraphrases(c, clock, PATHS[:2])
    c.post("/near", params=S, json={"intent": "Renew the TLS cert", "expires_at": clock() + DAY})
    remember(c, "I had pasta for lunch today")
    vim = remember(c, "Chad uses Vim", pinned=True)
    assert vim
    run(c)
    vim_fact = next(f for f in facts(c) if "Vim" in f["content"])
    c.post(f"/long/{vim_fact['id']}/forget", params=S, json={"reason": "that is wrong"})
    clock.advance(DAY)
    remember(c, "Chad now prefers tildes like ~/src instead of absolute paths in configs")
    clock.advance(9 * DAY)


def test_dry_run_changes_nothing_and_returns_the_plan(make_server, clock, tmp_path) -> None:
    """A dry run answers the full plan (200), leaves every record alone and keeps the plan."""
    c = make_server().client
    _busy_store(c, clock)
    before, runs = state(c), c.get("/consolidate/runs", params=S).json()["runs"]
    plan = run(c, dry_run=True)
    assert plan["dry_run"] is True and plan["status"] == "planned"
    assert {"supersede", "age_out", "expire", "demote"} <= set(kinds(plan))
    assert state(c) == before
    listed = c.get("/consolidate/runs", params=S).json()["runs"]
    assert listed[0]["id"] == plan["id"] and listed[1:] == runs  # kept for review
    kept = c.get(f"/consolidate/runs/{plan['id']}", params=S).json()
    assert kept["dry_run"] is True and kinds(kept) == kinds(plan)
    assert [a["id"] for a in kept["actions"]] == list(range(1, len(kinds(plan)) + 1))
    assert {a["review"] for a in kept["actions"]} == {"pending"}
    # A plan is not a run: the status names the last run that happened.
    assert c.get("/consolidate/status", params=S).json()["last_run"]["id"] == runs[0]["id"]
    real = run(c)
    assert [(a["kind"], a["target_id"]) for a in real["actions"] if a["kind"] != "supersede"] == [
        (a["kind"], a["target_id"]) for a in plan["actions"] if a["kind"] != "supersede"
    ]


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_revert_restores_the_state_before_the_run(make_server, clock) -> None:
    """Revert undoes supersede, age-out, expire and demote; the run is marked reverted."""
    c = make_server().client
    _busy_store(c, clock)
    before = state(c)
    record = run(c)
    assert {"supersede", "age_out", "expire", "demote"} <= set(kinds(record))
    assert state(c) != before
    r = c.post(f"/consolidate/runs/{record['id']}/revert", params=S)
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "reverted" and r.json()["reverted_at"]
    assert state(c) == before
    again = c.post(f"/consolidate/runs/{record['id']}/revert", params=S)
    assert again.status_code == 409
    listed = c.get("/consolidate/runs", params=S).json()["runs"]
    assert [x["status"] for x in listed] == ["reverted", "done"]  # newest first


def test_revert_keeps_purges_and_says_so(make_server, clock) -> None:
    """Reverting a run with a purge restores the rest; the purge stays, and the record says so."""
    c = make_server().client
    fid = _iban_fact(c, clock)
    c.post(f"/long/{fid}/forget", params=S, json={"reason": "my IBAN, please delete"})
    once = remember(c, "I had pasta for lunch today")
    clock.advance(9 * DAY)
    record = run(c)
    assert {"purge", "age_out"} <= set(kinds(record))
    r = c.post(f"/consolidate/runs/{record['id']}/revert", params=S).json()
    assert any("irreversible" in n for n in r["notes"])
    assert c.get(f"/short/{once}", params=S).status_code == 200
    assert c.get(f"/long/{fid}", params=S).status_code == 404


def test_runs_are_listed_newest_first_and_validated(make_server, clock) -> None:
    """GET /consolidate/runs pages newest first; bad ids and stores are clean 4xx."""
    c = make_server().client
    remember(c, "a first note")
    ids = [run(c)["id"] for _ in range(3)]
    listed = c.get("/consolidate/runs", params={**S, "limit": 2}).json()["runs"]
    assert [x["id"] for x in listed] == ids[::-1][:2]
    listed = c.get("/consolidate/runs", params={**S, "limit": 2, "offset": 2}).json()["runs"]
    assert [x["id"] for x in listed] == ids[:1]
    one = c.get(f"/consolidate/runs/{ids[0]}", params=S).json()
    assert set(one) >= {
        "id",
        "store",
        "started_at",
        "finished_at",
        "engine",
        "dry_run",
        "status",
        "counts",
        "actions",
    }
    assert c.get("/consolidate/runs/nope", params=S).status_code == 400
    assert c.get("/consolidate/runs/r_01M80YCVG916T9CTQ9BG6QPSX1", params=S).status_code == 404
    assert c.post("/consolidate/run", params={"store": "missing"}).status_code == 404
    bad = c.post("/consolidate/run", params=S, json={"dry_run": "maybe"})
    assert bad.status_code == 422
    status = c.get("/consolidate/status", params=S).json()
    assert status["last_run"]["id"] == ids[-1] and status["running"] is False


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_second_concurrent_run_gets_409(make_server, clock) -> None:
    """While a run holds a store, a second request is refused with 409 and changes nothing."""
    from openai_chat_stub import ChatStub

    with ChatStub() as stub:
        stub.gate = threading.Event()
        stub.default = '{"fact": "Chad prefers absolute paths", "decision": "ADD", "reason": "new"}'
        c = make_server(engine="llm", model_url=stub.url).client
        paraphrases(c, clock, PATHS[:2])
        first: dict[str, Any] = {}
        t = threading.Thread(target=lambda: first.update(r=c.post("/consolidate/run", params=S)))
        t.start()
        assert stub.arrived.wait(60)
        with httpx.Client(base_url=str(c.base_url), timeout=60) as other:
            r = other.post("/consolidate/run", params=S)
            assert r.status_code == 409 and r.json()["error"]["code"] == "conflict"
            assert other.get("/consolidate/status", params=S).json()["running"] is True
        stub.gate.set()
        t.join(60)
        assert first["r"].status_code == 201, first["r"].text
        assert len(facts(c)) == 1


def test_a_pinned_fact_is_retired_only_by_a_statement_that_says_it_changed(
    make_server, clock
) -> None:
    """Two pinned notes on two days: the judge reads the second as a change of the
    first (no word says so), yet both stay, pinned; "now" then retires the first."""
    c = make_server().client
    remember(c, "Reports go to Pia as PDF, not Word", pinned=True)
    clock.advance(DAY)
    remember(c, "Pia reads her reports on Monday mornings", pinned=True)
    first = run(c)
    assert kinds(first) == ["promote", "promote"], first
    assert "pinned and nothing says it changed" in first["actions"][1]["reason"]
    both = facts(c)
    assert sorted(f["content"] for f in both) == [
        "Pia reads her reports on Monday mornings",
        "Reports go to Pia as PDF, not Word",
    ]
    assert all(f["pinned"] for f in both)
    clock.advance(DAY)
    remember(c, "Reports now go to Pia as Word files")
    changed = run(c)
    assert kinds(changed) == ["supersede"], changed
    assert sorted(f["content"] for f in facts(c, "active")) == [
        "Pia reads her reports on Monday mornings",
        "Reports now go to Pia as Word files",
    ]


def test_a_pinned_restatement_pins_the_fact_it_confirms(make_server, clock) -> None:
    """A fact from two days' entries is unpinned; a pinned entry saying it again
    confirms and pins it; reverting that run unpins it."""
    c = make_server().client
    for text in ["Ivan's standing desk is in room 204", "Ivan works at the standing desk in 204"]:
        remember(c, text)
        clock.advance(DAY)
    run(c)
    [fact] = facts(c, "active")
    assert fact["pinned"] is False
    remember(c, "Ivan's desk is the standing one in room 204", pinned=True)
    confirmed = run(c)
    assert kinds(confirmed) == ["confirm"], confirmed
    assert c.get(f"/long/{fact['id']}", params=S).json()["pinned"] is True
    r = c.post(f"/consolidate/runs/{confirmed['id']}/revert", params=S)
    assert r.status_code == 200, r.text
    assert c.get(f"/long/{fact['id']}", params=S).json()["pinned"] is False
