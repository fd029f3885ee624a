"""Prometheus metrics: ``GET /metrics``, the request middleware, the service collector.

Each app has its own ``CollectorRegistry``, never the process-wide default, so
that several apps in one process (tests, embedding) do not clash.

Requests are counted by a plain ASGI middleware, outermost, so that it also
sees the MCP endpoint and the answers of the other middleware (401, 413).
Their ``route`` label is the route template (``/short/{id}``), never the raw
path: one series per id would grow without bound. Anything no route matches
is ``other``, and so is an unknown method.

Store gauges are read at scrape time from the stores this process already has
open, never by opening one (see ``Memory.open_store_counts``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector
from starlette.routing import BaseRoute, Match, compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from halls import __version__
from halls.http.deps import GrantDep
from halls.http.lanes import READ, WRITE, Slots
from halls.models import RUN_OUTCOMES, SEARCH_TIERS
from halls.service import Memory

UNMATCHED = "other"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# 1 ms (a cached read) to 10 s (a consolidation run, a cold model load).
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class ServiceCollector(Collector):
    """Build info, per-store tier sizes and consolidation outcomes, read per scrape."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def _families(self) -> tuple[GaugeMetricFamily, ...]:
        return (
            GaugeMetricFamily(
                "halls_build_info", "The running halls version (always 1).", labels=["version"]
            ),
            GaugeMetricFamily("halls_stores_open", "Stores open in this server process."),
            GaugeMetricFamily(
                "halls_memories",
                "Memories in each open store, by tier (short, near, long).",
                labels=["store", "tier"],
            ),
        )

    def describe(self) -> Iterable[Metric]:
        yield from self._families()
        yield CounterMetricFamily("halls_consolidation_runs", "", labels=["outcome"])

    def collect(self) -> Iterable[Metric]:
        build, opened, memories = self._families()
        build.add_metric([__version__], 1)
        counts = self.memory.open_store_counts()
        opened.add_metric([], len(counts))
        for store, per_table in sorted(counts.items()):
            for tier in SEARCH_TIERS:
                memories.add_metric([store, tier], per_table[tier])
        runs = CounterMetricFamily(
            "halls_consolidation_runs",
            "Consolidation runs since the server started, by outcome "
            "(done, planned = dry run, failed, busy = the store was already running one).",
            labels=["outcome"],
        )
        seen = self.memory.run_outcomes.snapshot()
        for outcome in sorted(set(RUN_OUTCOMES) | set(seen)):
            runs.add_metric([outcome], seen.get(outcome, 0))
        yield from (build, opened, memories, runs)


class Metrics:
    """The registry of one app and the request metrics recorded into it."""

    def __init__(self, memory: Memory, slots: Slots | None = None) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "halls_http_requests",
            "HTTP requests answered, by method, route template and status code.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.duration = Histogram(
            "halls_http_request_duration_seconds",
            "Time to answer an HTTP request (until its last byte is sent), by route template.",
            ["route"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.registry.register(ServiceCollector(memory))
        if slots is not None:
            waiting = Gauge(
                "halls_http_waiting_requests",
                "Requests waiting for a slot (server.request_slots), by lane (read, write).",
                ["lane"],
                registry=self.registry,
            )
            for lane in (READ, WRITE):
                waiting.labels(lane).set_function(partial(slots.waiting, lane))

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        method = method if method in METHODS else UNMATCHED
        self.requests.labels(method, route, str(status)).inc()
        self.duration.labels(route).observe(seconds)

    def render(self, opens: Callable[[str], bool] | None = None) -> bytes:
        """The exposition: all of it, or only what concerns the stores ``opens`` allows."""
        registry = self.registry if opens is None else _StoresShown(self.registry, opens)
        return generate_latest(registry)


# Series about the whole server, no store named: another tenant's traffic.
SERVER_WIDE = frozenset(
    {
        "halls_http_requests",
        "halls_http_request_duration_seconds",
        "halls_http_waiting_requests",
        "halls_consolidation_runs",
    }
)


class _StoresShown:
    """A registry view for a token of some stores: their series, nothing server-wide.

    ``halls_stores_open`` counts only its stores that are open.
    """

    def __init__(self, registry: CollectorRegistry, opens: Callable[[str], bool]) -> None:
        self.registry = registry
        self.opens = opens

    def collect(self) -> Iterable[Metric]:
        families = [f for f in self.registry.collect() if f.name not in SERVER_WIDE]
        shown: set[str] = set()
        for family in families:
            family.samples = [
                s
                for s in family.samples
                if "store" not in s.labels or self.opens(s.labels["store"])
            ]
            if family.name == "halls_memories":
                shown.update(s.labels["store"] for s in family.samples)
        for family in families:
            if family.name == "halls_stores_open":
                family.samples = [s._replace(value=len(shown)) for s in family.samples]
            yield family


class RouteTemplates:
    """Finds the path template that answers a request, else ``other``.

    After routing, FastAPI leaves the matched route in the scope. A request
    refused before routing (401, 413) has none, and FastAPI keeps included
    routers behind private classes, so those are matched against the paths of
    the app's OpenAPI document; the routes mounted beside the API (MCP, the
    docs pages) are plain Starlette routes, matched as they are.
    """

    def __init__(self, routes: Sequence[BaseRoute], openapi: Callable[[], dict[str, Any]]):
        self.routes = routes
        self.openapi = openapi
        self._paths: list[tuple[re.Pattern[str], str]] | None = None

    def _api_paths(self) -> list[tuple[re.Pattern[str], str]]:
        if self._paths is None:
            # Literal paths first, so that /short/batch is not taken for /short/{id}.
            paths = sorted(self.openapi().get("paths", {}), key=lambda p: p.count("{"))
            self._paths = [(compile_path(p)[0], p) for p in paths]
        return self._paths

    def __call__(self, scope: Scope) -> str:
        path = getattr(scope.get("route"), "path", None)
        if isinstance(path, str) and path:
            return path
        for route in self.routes:
            plain = getattr(route, "path", None)
            if isinstance(plain, str) and route.matches(scope)[0] is not Match.NONE:
                return plain
        for regex, template in self._api_paths():
            if regex.match(scope["path"]):
                return template
        return UNMATCHED


class RequestMetrics:
    """Counts and times every HTTP request."""

    def __init__(self, app: ASGIApp, metrics: Metrics, templates: RouteTemplates) -> None:
        self.app = app
        self.metrics = metrics
        self.templates = templates

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500  # what the client gets if the app raises before answering
        start = time.perf_counter()

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            seconds = time.perf_counter() - start
            self.metrics.observe(scope["method"], self.templates(scope), status, seconds)


router = APIRouter(tags=["system"])


@router.get("/metrics", response_class=Response)
def metrics(request: Request, grant: GrantDep) -> Response:
    """Prometheus text exposition format."""
    # A sync handler: the store counts are SQLite reads, kept off the event loop.
    # A token of every store sees it all; one of some stores only theirs.
    body = request.app.state.metrics.render(None if grant.stores is None else grant.opens)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
