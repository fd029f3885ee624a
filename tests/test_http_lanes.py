"""Lanes: requests that read or write records take turns, reads first (halls.http.lanes)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import httpx
import pytest

from halls.http.lanes import READ, WRITE, Lanes, Slots, lane_of

T = TypeVar("T")


def _run(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work``, failing rather than hanging if a turn is never given."""
    return asyncio.run(asyncio.wait_for(work, 10))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("method", "path", "lane"),
    [
        ("POST", "/search", READ),
        ("POST", "/context", READ),
        ("GET", "/short", READ),
        ("GET", "/long/l_1", READ),
        ("GET", "/records", READ),
        ("POST", "/short", WRITE),
        ("POST", "/short/batch", WRITE),
        ("PATCH", "/short/s_1", WRITE),
        ("DELETE", "/near/n_1", WRITE),
        ("POST", "/long/l_1/forget", WRITE),
        ("POST", "/brief", WRITE),
        ("POST", "/consolidate/run", None),
        ("POST", "/export", None),
        ("GET", "/healthz", None),
        ("GET", "/metrics", None),
        ("POST", "/mcp", None),
        ("GET", "/shortcuts", None),
    ],
)
def test_each_request_has_its_lane(method: str, path: str, lane: str | None) -> None:
    assert lane_of(method, path) == lane


def _waiter(slots: Slots, served: list[Any], name: Any, lane: str) -> asyncio.Task[None]:
    """A request of ``lane`` that waits for its turn, then puts ``name`` in ``served``."""

    async def wait() -> None:
        await slots.acquire(lane)
        served.append(name)

    return asyncio.create_task(wait())


async def _order(slots: Slots, lanes: list[str], advance: float = 0.0) -> list[int]:
    """Hold the only slot, queue one request per lane, then release turn by turn."""
    await slots.acquire(READ)
    served: list[int] = []
    tasks = []
    for n, lane in enumerate(lanes):
        tasks.append(_waiter(slots, served, n, lane))
        await asyncio.sleep(0)  # queued in this order
    slots.clock.now += advance  # type: ignore[attr-defined]
    holder = READ
    for _ in lanes:
        slots.release(holder)
        await asyncio.sleep(0)
        holder = lanes[served[-1]]
    slots.release(holder)
    await asyncio.gather(*tasks)
    assert slots.running == {READ: 0, WRITE: 0}
    return served


def test_a_freed_slot_goes_to_the_oldest_read_before_any_write() -> None:
    slots = Slots(1, patience=2.0, clock=Clock())
    served = _run(_order(slots, [WRITE, READ, WRITE, READ]))
    assert served == [1, 3, 0, 2]


def test_a_write_that_waited_too_long_goes_first() -> None:
    slots = Slots(1, patience=2.0, clock=Clock())
    served = _run(_order(slots, [WRITE, READ, READ], advance=2.0))
    assert served == [0, 1, 2]


def test_slots_are_free_when_nobody_waits() -> None:
    async def run() -> dict[str, int]:
        slots = Slots(2, clock=Clock())
        await slots.acquire(WRITE)
        await slots.acquire(READ)
        slots.release(WRITE)
        slots.release(READ)
        return slots.running

    assert _run(run()) == {READ: 0, WRITE: 0}


def test_writes_never_hold_every_slot() -> None:
    """A long write in one of two slots: a second write waits with a slot free, and a
    read that comes after it takes that slot at once."""

    async def run() -> tuple[list[str], dict[str, int]]:
        slots = Slots(2, clock=Clock())
        await slots.acquire(WRITE)
        served: list[str] = []
        second = _waiter(slots, served, "write", WRITE)
        await asyncio.sleep(0)
        read = _waiter(slots, served, "read", READ)
        await asyncio.sleep(0)
        await read
        assert served == ["read"] and slots.waiting(WRITE) == 1
        slots.release(READ)  # the slot a write may not take
        await asyncio.sleep(0)
        assert served == ["read"]
        slots.release(WRITE)
        await second
        slots.release(WRITE)
        return served, slots.running

    assert _run(run()) == (["read", "write"], {READ: 0, WRITE: 0})


def test_a_request_cancelled_while_waiting_takes_no_turn() -> None:
    async def run() -> tuple[list[str], int]:
        slots = Slots(1, clock=Clock())
        await slots.acquire(READ)
        served: list[str] = []
        gone = _waiter(slots, served, "gone", READ)
        kept = _waiter(slots, served, "kept", WRITE)
        await asyncio.sleep(0)
        gone.cancel()
        await asyncio.sleep(0)
        slots.release(READ)  # to "kept": the cancelled read is skipped
        await kept
        slots.release(WRITE)
        return served, sum(slots.running.values())

    assert _run(run()) == (["kept"], 0)


def test_the_middleware_queues_lane_requests_and_lets_the_rest_through() -> None:
    """With one slot held by a slow write, a search waits and a health check does not;
    each answer reaches its client whole once its request is done."""

    async def run() -> tuple[list[str], dict[str, list[dict[str, Any]]]]:
        events: list[str] = []
        release_write = asyncio.Event()

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            name = f"{scope['method']} {scope['path']}"
            events.append(f"start {name}")
            if scope["path"] == "/short":
                await release_write.wait()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": name.encode()})
            events.append(f"end {name}")

        lanes = Lanes(app, slots=Slots(1))
        sent: dict[str, list[dict[str, Any]]] = {}

        async def call(method: str, path: str) -> None:
            scope = {"type": "http", "method": method, "path": path, "headers": []}

            async def receive() -> dict[str, Any]:
                return {"type": "http.request", "body": b"", "more_body": False}

            async def send(message: dict[str, Any]) -> None:
                sent.setdefault(path, []).append(message)

            await lanes(scope, receive, send)

        write = asyncio.create_task(call("POST", "/short"))
        await asyncio.sleep(0)
        search = asyncio.create_task(call("POST", "/search"))
        await call("GET", "/healthz")
        await asyncio.sleep(0)
        assert "start POST /search" not in events  # waiting for the write's slot
        assert (lanes.slots.waiting(READ), lanes.slots.waiting(WRITE)) == (1, 0)
        assert "/short" not in sent  # nothing sent before the handler is done
        release_write.set()
        await asyncio.gather(write, search)
        return events, sent

    events, sent = _run(run())
    assert events == [
        "start POST /short",
        "start GET /healthz",
        "end GET /healthz",
        "end POST /short",
        "start POST /search",
        "end POST /search",
    ]
    assert [m["type"] for m in sent["/search"]] == ["http.response.start", "http.response.body"]
    assert sent["/short"][1]["body"] == b"POST /short"


def test_a_server_with_one_slot_answers_every_concurrent_request(server_factory: Any) -> None:
    """Sixteen clients writing and searching at once through one slot: every write is
    acknowledged and stored, every search answered."""
    live = server_factory(env={"HALLS_SERVER__REQUEST_SLOTS": "1"})

    def client(n: int) -> list[str]:
        ids = []
        with httpx.Client(base_url=live.url, timeout=60) as c:
            for k in range(4):
                r = c.post("/short", json={"content": f"lane note {n}-{k} about the harbour"})
                assert r.status_code == 201, r.text
                ids.append(r.json()["id"])
                found = c.post("/search", json={"query": "harbour", "reinforce": False})
                assert found.status_code == 200, found.text
        return ids

    with ThreadPoolExecutor(16) as pool:
        written = [i for ids in pool.map(client, range(16)) for i in ids]
    with httpx.Client(base_url=live.url, timeout=60) as c:
        stored = {e["id"] for e in c.get("/short", params={"limit": 1000}).json()}
    assert len(written) == 64
    assert set(written) <= stored
