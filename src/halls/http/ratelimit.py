"""Request rate limits: a token bucket per client, as plain ASGI middleware.

A client is the id of the configured token it presents (never the token
itself), else its IP address (behind a trusted proxy, the one it forwards). The
buckets live in this process: several server processes each keep their own,
so N processes allow up to N times the configured rate.
"""

from __future__ import annotations

import json
import math
import time
from collections import OrderedDict
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from halls.http.errors import error_body
from halls.http.middleware import presented_token
from halls.service import Tokens

# Liveness probes must answer even while a client is being throttled.
EXEMPT_PATHS = frozenset({"/healthz"})
# ~100 bytes a bucket: 10,000 clients cost about a megabyte, whatever arrives.
MAX_BUCKETS = 10_000


class TokenBuckets:
    """One bucket of ``burst`` tokens per key, refilled at ``per_minute``/60 a second.

    Pure arithmetic over an injectable clock. Not locked: the middleware
    calls it from the event loop only, and ``take`` never awaits.
    """

    def __init__(
        self,
        per_minute: int,
        burst: int,
        *,
        max_keys: int = MAX_BUCKETS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_minute < 1 or burst < 1 or max_keys < 1:
            raise ValueError("per_minute, burst and max_keys must be at least 1")
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self.max_keys = max_keys
        self._clock = clock
        # key -> (tokens, when they were counted); least recently seen first.
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, key: str) -> float:
        """Spend one token of ``key``: 0.0 if allowed, else seconds until one is due."""
        now = self._clock()
        tokens, then = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + max(0.0, now - then) * self.rate)
        wait = 0.0
        # The slack absorbs float drift from summing many small refills, which
        # would otherwise refuse a client whose token is due this very instant.
        if tokens >= 1.0 - 1e-9:
            tokens = max(0.0, tokens - 1.0)
        else:
            wait = (1.0 - tokens) / self.rate
        self._buckets[key] = (tokens, now)
        self._forget_idle(now)
        return wait

    def _forget_idle(self, now: float) -> None:
        # A bucket idle long enough to have refilled is the same as no bucket,
        # so dropping it changes nothing. Beyond that, the cap drops the least
        # recently seen even if not yet full: at worst that client gets a fresh
        # burst, which beats memory growing with every new address.
        full_after = self.burst / self.rate
        while self._buckets:
            key, (_, then) = next(iter(self._buckets.items()))
            if len(self._buckets) > self.max_keys or now - then >= full_after:
                del self._buckets[key]
            else:
                break


def client_key(scope: Scope, tokens: Tokens | None) -> str:
    """The bucket key of a request: the id of a configured token it presents, else its IP.

    A token that is not a configured one does not count: keyed by whatever
    was presented, a flood of made-up tokens would get a fresh bucket each.
    """
    if tokens is not None and tokens.enabled:
        grant = tokens.resolve(presented_token(scope))
        if grant is not None and grant.id is not None:
            return "token:" + grant.id
    # The peer address, which uvicorn has already replaced by the client
    # X-Forwarded-For names when the peer is a trusted proxy (http/listen.py);
    # from any other peer the header is whatever the client says it is.
    client = scope.get("client")
    return "ip:" + (client[0] if client else "unknown")


class RateLimit:
    """Answer 429 ``rate_limited`` with ``Retry-After`` once a client's bucket is empty."""

    def __init__(self, app: ASGIApp, buckets: TokenBuckets, tokens: Tokens | None = None) -> None:
        self.app = app
        self.buckets = buckets
        self._tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in EXEMPT_PATHS:
            await self.app(scope, receive, send)
            return
        wait = self.buckets.take(client_key(scope, self._tokens))
        if wait > 0:
            await _refuse(send, max(1, math.ceil(wait)))
            return
        await self.app(scope, receive, send)


async def _refuse(send: Send, seconds: int) -> None:
    message = f"too many requests; retry in {seconds} s"
    body = json.dumps(error_body("rate_limited", message)).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(seconds).encode()),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})
