"""The FastAPI application: composes middleware, error mapping and routes."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from halls import __version__
from halls.http import apidocs, errors
from halls.http.lanes import Lanes, Slots
from halls.http.metrics import Metrics, RequestMetrics, RouteTemplates
from halls.http.metrics import router as metrics_router
from halls.http.middleware import BearerAuth, BodyLimit
from halls.http.ratelimit import RateLimit, TokenBuckets
from halls.http.routes import (
    archive,
    context,
    journal,
    long,
    near,
    recall,
    records,
    scopes,
    short,
    system,
    viewer,
)
from halls.http.routes import consolidate as consolidate_routes
from halls.service import Memory, Tokens

log = logging.getLogger("halls.http")


def create_app(memory: Memory, *, warm: bool = True, mcp: Any = None) -> FastAPI:
    """Build the app around a Memory; ``warm`` loads the embedder at startup.

    ``mcp`` is an MCP server (FastMCP) to serve at its streamable-HTTP path,
    composed by the caller (``halls serve``): adapters do not import each other.
    """
    settings = memory.settings.server

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if warm:
            # Load the model and open the default store before the first
            # request, so that it is not the one that pays seconds for it.
            memory.create_store(memory.settings.default_store)
            memory.embedder.embed(["warm up"])
        # consolidator.mode thread: the timer runs inside the server process.
        memory.start_background()
        async with AsyncExitStack() as stack:
            if mcp is not None:
                # The MCP session manager's task group lives as long as the app.
                await stack.enter_async_context(mcp.session_manager.run())
            yield
        memory.close()  # stops the timer first

    app = FastAPI(
        title="halls",
        version=__version__,
        description="The Halls of Memory: a local-first memory server for LLM agents.",
        lifespan=lifespan,
        # Served by apidocs instead, from packaged assets rather than CDNs.
        docs_url=None,
        redoc_url=None,
    )
    apidocs.install(app)
    app.state.memory = memory
    errors.install(app)
    for module in (
        short,
        near,
        journal,
        long,
        recall,
        records,
        system,
        context,
        scopes,
        consolidate_routes,
    ):
        app.include_router(module.router, responses=errors.RESPONSES)
    app.include_router(viewer.router)
    app.include_router(archive.router, responses=errors.RESPONSES)
    slots = Slots(settings.request_slots) if settings.request_slots > 0 else None
    if settings.metrics_enabled:
        app.state.metrics = Metrics(memory, slots)
        app.include_router(metrics_router, responses=errors.RESPONSES)
    if mcp is not None:
        # Its routes join the app's own, so the bearer token and the body
        # limit guard them exactly as they guard the API.
        app.router.routes.extend(mcp.streamable_http_app().routes)

    # Innermost: an unexpected error is answered inside the app, so the
    # client's keep-alive connection stays usable (halls.http.errors.CatchAll).
    app.add_middleware(errors.CatchAll)
    if slots is not None:
        # Inside the body limit: a request's body is read before it waits its turn.
        app.add_middleware(Lanes, slots=slots)
    # Added innermost first: the body limit runs inside auth, so an
    # unauthenticated client cannot make the server buffer a large body.
    app.add_middleware(
        BodyLimit,
        max_bytes=settings.max_body_bytes,
        streamed={archive.IMPORT_PATH: settings.max_import_bytes},
    )
    tokens = Tokens(settings)
    # Always installed: with no token configured it grants everything, so
    # that routes and tools always find a grant.
    app.add_middleware(BearerAuth, tokens=tokens)
    if settings.rate_limit_per_minute > 0:
        # Outside auth and the body limit: a throttled client, with or without
        # a token, is refused before its body is read or a handler runs.
        # Inside CORS, so a browser can read the 429 and preflights are free.
        app.add_middleware(
            RateLimit,
            buckets=TokenBuckets(settings.rate_limit_per_minute, settings.rate_limit_burst),
            tokens=tokens,
        )
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    if settings.metrics_enabled:
        # Outermost: what the middleware above refuses (401, 413) is counted too.
        templates = RouteTemplates(app.router.routes, app.openapi)
        app.add_middleware(RequestMetrics, metrics=app.state.metrics, templates=templates)
    return app
