"""Requests that read or write memory take turns on a few slots, reads first.

Python runs one thread at a time. With every request on its own thread of
the server's pool (40), fifty busy clients made forty threads fight for the
interpreter: each request cost twice its idle CPU, and a search waited
behind every write of a burst (issue 53: 52 requests/s, search p95 1.6 s at
10,000 memories on two cores). Here a request that reads (a search, a read
of records) or writes (a remember, an edit, a delete) first waits for one of
``server.request_slots`` slots; a freed slot goes to the oldest waiting read,
unless a write has waited ``WRITE_PATIENCE`` seconds, so writes are never
starved; and writes never hold every slot (``Slots``). Two slots (the
default) let the native part of one request (the embedding model, SQLite)
run beside another's Python. Everything else
(consolidation, archives, stores, health, metrics, MCP) runs as before.

A request's body is read before it takes a slot (by ``BodyLimit``, outside
this) and its answer is sent after it gives the slot back, so a slow client
holds no slot: the answers of these routes are built whole in memory anyway.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

READ, WRITE = "read", "write"
# Seconds a write may wait while reads keep coming before it goes first.
WRITE_PATIENCE = 2.0
# The record tiers: GET reads them; POST, PATCH and DELETE write them.
RECORD_PREFIXES = ("/short", "/near", "/long", "/journal")
# Reads by POST: their bodies are queries.
READ_POSTS = frozenset({"/search", "/context"})


def lane_of(method: str, path: str) -> str | None:
    """The lane of a request, None for those that do not take turns."""
    if method == "POST" and path in READ_POSTS:
        return READ
    if path == "/records" and method == "GET":
        return READ
    if path == "/brief" and method == "POST":
        return WRITE  # it stores the brief it makes
    if not any(path == p or path.startswith(p + "/") for p in RECORD_PREFIXES):
        return None
    if method == "GET":
        return READ
    if method in ("POST", "PATCH", "DELETE"):
        return WRITE
    return None


class Slots:
    """``slots`` turns handed out oldest read first, unless a write has waited too long.

    Writes hold at most all slots but one, so that a long write (a batch of
    thousands of entries embeds for seconds) never makes a read wait: a read
    waits only while every slot is busy and one of them with a read.
    """

    def __init__(
        self,
        slots: int,
        patience: float = WRITE_PATIENCE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.slots = slots
        self.most_writes = max(1, slots - 1)
        self.patience = patience
        self.clock = clock
        self.running = {READ: 0, WRITE: 0}
        self._waiting: dict[str, deque[tuple[float, asyncio.Future[None]]]] = {
            READ: deque(),
            WRITE: deque(),
        }
        # Requests waiting in each lane: plain counts, which the metrics
        # scrape reads from its own thread while the event loop queues.
        self._queued = {READ: 0, WRITE: 0}

    def waiting(self, lane: str) -> int:
        """Requests of ``lane`` waiting for a slot."""
        return self._queued[lane]

    def _opens(self, lane: str) -> bool:
        """Whether a request of ``lane`` may take a slot now."""
        if self.running[READ] + self.running[WRITE] >= self.slots:
            return False
        return lane == READ or self.running[WRITE] < self.most_writes

    async def acquire(self, lane: str) -> None:
        if not self._queued[lane] and self._opens(lane):
            self.running[lane] += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[lane].append((self.clock(), turn))
        self._queued[lane] += 1
        try:
            await turn
        except asyncio.CancelledError:
            # Handed a slot just as it was cancelled: pass the slot on.
            if turn.done() and not turn.cancelled():
                self.release(lane)
            raise
        finally:
            self._queued[lane] -= 1

    def release(self, lane: str) -> None:
        """Free a slot of ``lane`` and hand the free slots to the next waiting requests."""
        self.running[lane] -= 1
        while (turn := self._next()) is not None:
            self.running[turn] += 1
            self._waiting[turn].popleft()[1].set_result(None)

    def _next(self) -> str | None:
        """The lane whose oldest waiting request goes next, if a slot is open to it."""
        for queue in self._waiting.values():
            # A waiter cancelled before its turn (its client went away) leaves a done future.
            while queue and queue[0][1].done():
                queue.popleft()
        writes = self._waiting[WRITE]
        overdue = bool(writes) and self.clock() - writes[0][0] >= self.patience
        order = (WRITE, READ) if overdue else (READ, WRITE)
        for lane in order:
            if self._waiting[lane] and self._opens(lane):
                return lane
        return None


class Lanes:
    """ASGI middleware: the requests of ``lane_of`` wait for a slot of ``slots``."""

    def __init__(self, app: ASGIApp, slots: Slots) -> None:
        self.app = app
        self.slots = slots

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        lane = lane_of(scope["method"], scope["path"]) if scope["type"] == "http" else None
        if lane is None:
            await self.app(scope, receive, send)
            return
        answer: list[Message] = []

        async def keep(message: Message) -> None:
            answer.append(message)

        await self.slots.acquire(lane)
        try:
            await self.app(scope, receive, keep)
        finally:
            self.slots.release(lane)
        for message in answer:
            await send(message)
