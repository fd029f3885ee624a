"""Work scopes: which are open, and marking one done (the ``scopes`` tool)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from halls.errors import InvalidInput
from halls.mcp.backend import JSON
from halls.mcp.tools.base import SETTLE, Store, Tools, run
from halls.models import ScopeStatus


def register(tools: Tools) -> None:
    backend, pick = tools.backend, tools.pick

    @tools.tool(SETTLE, reads=frozenset({"list"}))
    async def scopes(
        action: Annotated[Literal["list", "done"], Field()] = "list",
        name: Annotated[
            str | None, Field(max_length=128, description="done: the scope, e.g. 'web/fix-login'.")
        ] = None,
        status: Annotated[
            ScopeStatus | None, Field(description="list: only open or closed ones.")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="list: at most this many.")] = 50,
        store: Store = None,
    ) -> JSON:
        """Work scopes (a feature, a bug, a phase) that writes name in `scope`. Each write is a
        turn; a scope opens on its first note and closes when marked done or (by default)
        after 6 turns without a note for it or 3 turns of notes for other scopes. A closed scope's
        notes and facts leave the session briefing (`context`); recall still finds them.
        list: the scopes, the last written for first. done: mark one done when its work is
        finished."""
        if action == "list":
            return await run(backend.list_scopes, store=pick(store), status=status, limit=limit)
        if name is None:
            raise InvalidInput("scopes done needs the scope's name")
        return await run(backend.close_scope, name, store=pick(store))
