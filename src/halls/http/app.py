"""The FastAPI application: composes middleware, error mapping and routes."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from halls import __version__
from halls.consolidate.schedule import start_scheduler
from halls.http import errors
from halls.http.middleware import BearerAuth, BodyLimit
from halls.http.routes import consolidate as consolidate_routes
from halls.http.routes import context, journal, long, near, recall, short, system, viewer
from halls.service import Memory

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
        scheduler = start_scheduler(memory)
        async with AsyncExitStack() as stack:
            if mcp is not None:
                # The MCP session manager's task group lives as long as the app.
                await stack.enter_async_context(mcp.session_manager.run())
            yield
        if scheduler is not None:
            scheduler.stop()
        memory.close()

    app = FastAPI(
        title="halls",
        version=__version__,
        description="The Halls of Memory: a local-first memory server for LLM agents.",
        lifespan=lifespan,
    )
    app.state.memory = memory
    errors.install(app)
    for module in (short, near, journal, long, recall, system):
        app.include_router(module.router)
    app.include_router(context.router)
    app.include_router(viewer.router)
    app.include_router(consolidate_routes.router)
    if mcp is not None:
        # Its routes join the app's own, so the bearer token and the body
        # limit guard them exactly as they guard the API.
        app.router.routes.extend(mcp.streamable_http_app().routes)

    # Added innermost first: the body limit runs inside auth, so an
    # unauthenticated client cannot make the server buffer a large body.
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    if settings.bearer_token is not None:
        app.add_middleware(BearerAuth, token=settings.bearer_token.get_secret_value())
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    return app
