"""Several `halls serve` processes on one PostgreSQL: what one writes, every other finds.

Two real server processes (different ports, no shared memory) use the
session's PostgreSQL (conftest's ``pg_dsn``): a write through one is found
by a search through the other at once, a deletion likewise, and a
consolidation requested through both at once runs once (the advisory lock):
the second request gets 409 while the first holds the store, and there is
one run record. The LLM endpoint is the only stand-in (its gate keeps the
first run in progress); everything else is real.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from conftest import LiveServer, pg_env
from http_helpers import created, search
from openai_chat_stub import ChatStub

# Two extra servers a test on the session's PostgreSQL, one held in a run by
# the stub: ~15 s on two busy cores. `make test-all` and CI run them.
pytestmark = pytest.mark.slow


def ids(c: httpx.Client, store: str, query: str) -> list[str]:
    # Every hit, however relevant: the test asks what each server has, not
    # whether a one-word query is a question worth answering.
    return [h["id"] for h in search(c, store, query=query, n_results=10, min_relevance=0)]


def test_a_write_through_one_server_is_found_through_the_other_at_once(
    server_factory: Callable[..., LiveServer], pg_dsn: str, store_name: str
) -> None:
    a = server_factory(env=pg_env(pg_dsn))
    b = server_factory(env=pg_env(pg_dsn))
    ca, cb = a.client(), b.client()
    first = created(ca, "/short", store_name, {"content": "The studio floor is Marley vinyl"})
    # b loads its mirrors now; what follows must reach them as changes.
    assert ids(cb, store_name, "studio floor") == [first["id"]]
    zebras: list[str] = []
    for text in ["Chad's zebra plant needs water on Sundays", "The zebra crossing moved"]:
        zebras.append(created(ca, "/short", store_name, {"content": text})["id"])
        assert set(zebras) <= set(ids(cb, store_name, "zebra"))
    loop = created(cb, "/near", store_name, {"intent": "water the zebra plant"})
    assert loop["id"] in ids(ca, store_name, "zebra plant")
    assert ca.delete(f"/short/{first['id']}", params={"store": store_name}).status_code == 204
    assert first["id"] not in ids(cb, store_name, "studio floor Marley")
    stats = [c.get("/stats", params={"store": store_name}).json()["counts"] for c in (ca, cb)]
    assert stats[0] == stats[1] and stats[0]["short"] == 2 and stats[0]["near"] == 1


def test_consolidation_requested_through_both_runs_once(
    server_factory: Callable[..., LiveServer], pg_dsn: str, store_name: str
) -> None:
    S = {"store": store_name}
    with ChatStub() as stub:
        stub.gate = threading.Event()
        stub.default = '{"fact": "Chad prefers absolute paths", "decision": "ADD", "reason": "new"}'
        env = pg_env(
            pg_dsn, HALLS_CONSOLIDATOR__ENGINE="llm", HALLS_CONSOLIDATOR__MODEL_URL=stub.url
        )
        a, b = server_factory(env=env), server_factory(env=env)
        ca, cb = a.client(), b.client()
        day = datetime.now(UTC) - timedelta(days=5)
        for n, text in enumerate(
            ["Chad prefers absolute paths in config files", "Chad likes absolute paths in configs"]
        ):
            when = (day + timedelta(days=n)).isoformat()
            created(ca, "/short", store_name, {"content": text, "occurred_at": when})
        first: dict[str, Any] = {}
        t = threading.Thread(target=lambda: first.update(r=ca.post("/consolidate/run", params=S)))
        t.start()
        try:
            assert stub.arrived.wait(60), "the first run did not reach the model"
            r = cb.post("/consolidate/run", params=S)
            assert r.status_code == 409 and r.json()["error"]["code"] == "conflict", r.text
            assert cb.get("/consolidate/status", params=S).json()["running"] is True
        finally:
            stub.gate.set()
            t.join(60)
        assert first["r"].status_code == 201, first["r"].text
        assert cb.get("/consolidate/status", params=S).json()["running"] is False
    runs = cb.get("/consolidate/runs", params=S).json()["runs"]
    assert [r["id"] for r in runs] == [first["r"].json()["id"]]
    assert len(cb.get("/long", params=S).json()) == 1
