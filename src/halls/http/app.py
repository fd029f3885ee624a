"""The FastAPI application: composes middleware, error mapping and routes."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from halls import __version__
from halls.http import errors
from halls.http.middleware import BearerAuth, BodyLimit
from halls.http.routes import journal, long, near, recall, short, system
from halls.service import Memory

log = logging.getLogger("halls.http")


def create_app(memory: Memory, *, warm: bool = True) -> FastAPI:
    """Build the app around a Memory; ``warm`` loads the embedder at startup."""
    settings = memory.settings.server

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if warm:
            # Load the model and open the default store before the first
            # request, so that it is not the one that pays seconds for it.
            memory.create_store(memory.settings.default_store)
            memory.embedder.embed(["warm up"])
        yield
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
