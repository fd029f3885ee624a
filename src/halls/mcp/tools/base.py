"""What every tool group declares its tools with.

A group is a module with ``register(tools)``, whose tools are closures over
``tools.backend``: their signatures are the tools' schemas and their
docstrings the descriptions, so the argument types they share live here.
``Tools`` only collects them; ``halls.mcp.server`` adds them to the server in
the order a client lists them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.types import ToolAnnotations
from pydantic import Field

from halls.mcp.backend import Backend
from halls.models import MAX_CONTENT_CHARS
from halls.service import Action

T = TypeVar("T")

Store = Annotated[
    str | None,
    Field(description="A named store (e.g. 'acme-web'), else the default."),
]
# Several stores read at once (recall, context): the service checks their names and number.
Stores = Annotated[
    list[str] | None,
    Field(description="Several at once: your own, a shared one."),
]
Text = Annotated[str, Field(min_length=1, max_length=MAX_CONTENT_CHARS)]
Topic = Annotated[
    str | None,
    Field(max_length=200, description="A short label to group and filter by, e.g. 'deploy'."),
]

# The pattern is the service's to check (halls.scopes): the schema stays short.
Scope = Annotated[
    str | None,
    Field(max_length=128, description="e.g. 'web/fix-login'."),
]

READ = ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)
ADD = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
)
SETTLE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
DESTROY = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False
)


@dataclass(frozen=True)
class Declared:
    """A tool as a group declared it: its function, its hints, what it needs of a grant."""

    fn: Callable[..., Any]
    annotations: ToolAnnotations
    action: Action
    # Values of the tool's ``action`` argument that only read: a read-only
    # token may call the tool with those (``loops`` list, ``memory`` get).
    reads: frozenset[str] = frozenset()


class Tools:
    """The tools the groups declare, and what their bodies share."""

    def __init__(self, backend: Backend, default_store: str | None) -> None:
        self.backend = backend
        self.default_store = default_store
        self.declared: dict[str, Declared] = {}

    def tool(
        self,
        annotations: ToolAnnotations,
        action: Action | None = None,
        reads: frozenset[str] = frozenset(),
    ) -> Callable[[Callable[..., Any]], Any]:
        def register(fn: Callable[..., Any]) -> Any:
            # Only reads are read-only; every other tool writes (or deletes: admin).
            needs = action or ("read" if annotations.readOnlyHint else "write")
            self.declared[fn.__name__] = Declared(fn, annotations, needs, reads)
            return fn

        return register

    def pick(self, store: str | None) -> str | None:
        """The store a call names, else the server's default (``None``: the backend's own)."""
        return store or self.default_store


async def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    # Embedding and SQLite block; the event loop must keep serving.
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))
