"""Rate limits: the token bucket's arithmetic (pure) and a live server's 429s."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from halls.config import ServerSettings, TokenSettings
from halls.http.ratelimit import RateLimit, TokenBuckets, client_key
from halls.service import Tokens
from http_helpers import assert_clean, assert_error

DOC = (Path(__file__).resolve().parent.parent / "docs" / "http-api.md").read_text()
TOKEN = "s3cret-rate-token"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_bucket_spends_the_burst_then_refills_at_the_rate() -> None:
    """A full bucket allows `burst` at once, then one more per 60/per_minute seconds."""
    clock = Clock()
    buckets = TokenBuckets(per_minute=60, burst=3, clock=clock)
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(1.0)
    clock.now += 0.25
    assert buckets.take("a") == pytest.approx(0.75)
    clock.now += 0.75
    assert buckets.take("a") == 0.0
    assert buckets.take("a") == pytest.approx(1.0)


def test_bucket_never_holds_more_than_the_burst() -> None:
    """However long a client was idle, it gets at most `burst` requests at once."""
    clock = Clock()
    buckets = TokenBuckets(per_minute=600, burst=4, clock=clock)
    buckets.take("a")
    clock.now += 3600
    assert [buckets.take("a") == 0.0 for _ in range(5)] == [True] * 4 + [False]


def test_refused_requests_do_not_spend_tokens() -> None:
    """Hammering an empty bucket does not push the next allowed request further away."""
    clock = Clock()
    buckets = TokenBuckets(per_minute=60, burst=1, clock=clock)
    buckets.take("a")
    for _ in range(50):
        clock.now += 0.01
        assert buckets.take("a") > 0
    clock.now += 0.5
    assert buckets.take("a") == 0.0


def test_keys_have_their_own_buckets() -> None:
    """Emptying one client's bucket leaves another client's full."""
    clock = Clock()
    buckets = TokenBuckets(per_minute=60, burst=2, clock=clock)
    buckets.take("token:x")
    buckets.take("token:x")
    assert buckets.take("token:x") > 0
    assert [buckets.take("ip:127.0.0.1") for _ in range(2)] == [0.0, 0.0]
    assert buckets.take("ip:127.0.0.1") > 0


def test_bucket_count_is_bounded_under_a_flood_of_clients() -> None:
    """10,000 distinct clients never hold more than max_keys buckets; the newest stays limited."""
    clock = Clock()
    buckets = TokenBuckets(per_minute=60, burst=1, max_keys=100, clock=clock)
    for i in range(10_000):
        buckets.take(f"ip:10.0.{i // 256}.{i % 256}")
        assert len(buckets) <= 100
    assert buckets.take("ip:10.0.39.15") > 0  # the last one seen is still remembered


def test_idle_buckets_are_dropped_once_refilled() -> None:
    """A bucket idle long enough to be full again is forgotten: it would change nothing."""
    clock = Clock()
    buckets = TokenBuckets(per_minute=60, burst=2, clock=clock)
    for i in range(50):
        buckets.take(f"ip:{i}")
    clock.now += 2.0  # burst / rate: every bucket is full again
    buckets.take("ip:new")
    assert len(buckets) == 1


def test_bucket_refuses_a_zero_rate() -> None:
    """The arithmetic needs a positive rate and burst; 0 means "no middleware" instead."""
    with pytest.raises(ValueError):
        TokenBuckets(per_minute=0, burst=1)


def _scope(auth: str | None, ip: str = "192.0.2.7", path: str = "/stats") -> dict:
    headers = [(b"authorization", auth.encode())] if auth is not None else []
    return {"type": "http", "method": "GET", "path": path, "headers": headers, "client": (ip, 5)}


def test_client_key_is_the_token_id_else_the_ip() -> None:
    """A configured token keys by its id (never the token); any other token keys by IP."""
    other = "another-token-of-the-config"
    tokens = Tokens(
        ServerSettings(
            bearer_token=TOKEN,
            tokens=[TokenSettings(id="agent-a", token=other, stores=["a"])],
        )
    )
    key = client_key(_scope(f"Bearer {TOKEN}"), tokens)
    assert key == "token:bearer_token" and TOKEN not in key
    assert client_key(_scope(f"Bearer {TOKEN}", ip="198.51.100.1"), tokens) == key
    assert client_key(_scope(f"Bearer {other}"), tokens) == "token:agent-a"
    assert client_key(_scope("Bearer made-up"), tokens) == "ip:192.0.2.7"
    assert client_key(_scope(None), tokens) == "ip:192.0.2.7"
    assert client_key(_scope(f"Bearer {TOKEN}"), None) == "ip:192.0.2.7"
    assert client_key(_scope(f"Bearer {TOKEN}"), Tokens(ServerSettings())) == "ip:192.0.2.7"


def _call(middleware: RateLimit, scope: dict) -> tuple[int, dict[bytes, bytes], bool]:
    sent: list[dict] = []
    reached = []

    async def app(scope, receive, send) -> None:
        reached.append(True)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    middleware.app = app
    asyncio.run(middleware(scope, receive, send))
    return sent[0]["status"], dict(sent[0]["headers"]), bool(reached)


def test_retry_after_is_whole_seconds_and_at_least_one() -> None:
    """A wait of a few milliseconds is still `Retry-After: 1`, and the app is not reached."""
    clock = Clock()
    limit = RateLimit(None, TokenBuckets(per_minute=6000, burst=1, clock=clock))  # type: ignore[arg-type]
    assert _call(limit, _scope(None))[0] == 200
    clock.now += 0.005
    status, headers, reached = _call(limit, _scope(None))
    assert (status, headers[b"retry-after"], reached) == (429, b"1", False)


def _limited(server_factory, per_minute: int, burst: int, **env: str):
    return server_factory(
        env={
            "HALLS_SERVER__BEARER_TOKEN": TOKEN,
            "HALLS_SERVER__RATE_LIMIT_PER_MINUTE": str(per_minute),
            "HALLS_SERVER__RATE_LIMIT_BURST": str(burst),
            **env,
        }
    )


def _drain(client) -> None:
    codes = [client.get("/stores").status_code for _ in range(10)]
    assert 429 in codes, codes


def test_over_the_burst_is_429_and_changes_nothing(server_factory, store_name) -> None:
    """The (burst+1)-th quick request is 429 with Retry-After and error shape; it stored nothing."""
    live = _limited(server_factory, per_minute=60, burst=3)
    c = live.client()
    assert c.post("/stores", json={"name": store_name}).status_code == 201
    before = c.get("/stats", params={"store": store_name}).json()
    assert c.get("/stats", params={"store": store_name}).status_code == 200
    r = c.post("/short", params={"store": store_name}, json={"content": "must not be stored"})
    body = assert_error(r, 429, "rate_limited")
    assert_clean(r.text)
    assert "retry" in body["message"]
    wait = int(r.headers["retry-after"])
    assert 1 <= wait <= 2
    # Honouring Retry-After is enough to be let through again.
    time.sleep(wait)
    after = c.get("/stats", params={"store": store_name})
    assert after.status_code == 200
    assert after.json() == before
    assert "rate limiting is off" not in live.log()


def test_every_path_but_healthz_is_limited(server_factory) -> None:
    """With an empty bucket, /healthz still answers while /viewer, /mcp and /metrics get 429."""
    # One token a minute: nothing refills while the test runs, however slow the machine.
    live = _limited(server_factory, per_minute=1, burst=2)
    c = live.client()
    _drain(c)
    assert [c.get("/healthz").status_code for _ in range(20)] == [200] * 20
    assert_error(c.get("/viewer"), 429, "rate_limited")
    assert_error(c.get("/metrics"), 429, "rate_limited")
    mcp = c.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert_error(mcp, 429, "rate_limited")


def test_unauthenticated_flood_is_limited_by_ip_apart_from_the_token(server_factory) -> None:
    """Requests with no or made-up tokens share the IP's bucket; the real token keeps its own."""
    live = _limited(server_factory, per_minute=1, burst=3)  # no refill during the test
    anon = live.client(token=None)
    codes = [anon.get("/stats").status_code for _ in range(2)]
    codes += [live.client(token=f"guess-{i}").get("/stats").status_code for i in range(2)]
    assert codes[:3] == [401, 401, 401] and codes[3] == 429
    assert live.client().get("/stats").status_code == 200


def test_refills_at_the_configured_rate(server_factory) -> None:
    """At 600/min an emptied bucket lets a request through again after ~0.25 s."""
    live = _limited(server_factory, per_minute=600, burst=1)
    c = live.client()
    _drain(c)
    time.sleep(0.25)
    assert c.get("/stores").status_code == 200


def test_limit_is_off_by_default_and_serve_hints_on_a_public_host(server_factory) -> None:
    """By default hundreds of quick requests all pass; a non-loopback serve prints the hint."""
    live = server_factory(
        env={"HALLS_SERVER__BEARER_TOKEN": TOKEN, "HALLS_SERVER__HOST": "0.0.0.0"}
    )
    c = live.client()
    assert [c.get("/stores").status_code for _ in range(200)] == [200] * 200
    hints = [line for line in live.log().splitlines() if "rate limiting is off" in line]
    assert len(hints) == 1 and "server.rate_limit_per_minute" in hints[0]


def test_http_docs_describe_the_429() -> None:
    """docs/http-api.md has the rate_limited row and explains Retry-After."""
    assert "| 429 | `rate_limited` |" in DOC
    assert "Retry-After" in DOC and "## Rate limits" in DOC
