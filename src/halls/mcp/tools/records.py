"""One memory by id (read, correct, pin), and a tier's newest records: the ``memory`` tool."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from halls.errors import InvalidInput
from halls.mcp.backend import JSON
from halls.mcp.tools.base import SETTLE, Store, Tools, Topic, run
from halls.models import MAX_CONTENT_CHARS


def register(tools: Tools) -> None:
    backend, pick = tools.backend, tools.pick

    @tools.tool(SETTLE, reads=frozenset({"get", "list"}))
    async def memory(
        action: Annotated[Literal["get", "update", "pin", "unpin", "list"], Field()],
        id: Annotated[
            str | None,
            Field(description="get, update, pin, unpin: s_ note, l_ fact, n_ loop (get only)."),
        ] = None,
        content: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=MAX_CONTENT_CHARS,
                description="update: the note's corrected text.",
            ),
        ] = None,
        topic: Topic = None,
        tier: Annotated[
            Literal["short", "long", "journal"],
            Field(description="list: notes, facts, or the journal (the timeline)."),
        ] = "long",
        limit: Annotated[int, Field(ge=1, le=1000, description="list: at most this many.")] = 20,
        store: Store = None,
    ) -> JSON:
        """One memory by the id recall or context gave: get it (a fact with its earlier
        versions); update a short-term note's content or topic; pin one so it never ages out,
        or unpin it. list: the newest notes, long-term facts, or journal events. Facts change
        only by consolidation: to retract one, use flag_forget."""
        if action == "list":
            found = await run(backend.list_records, tier, store=pick(store), limit=limit)
            return {tier: found}
        if id is None:
            raise InvalidInput(f"memory {action} needs an id")
        if action == "get":
            return await run(backend.get_record, id, store=pick(store))
        if action == "update":
            changes: JSON = {k: v for k, v in (("content", content), ("topic", topic)) if v}
            if not changes:
                raise InvalidInput("memory update needs content or topic")
            return await run(backend.edit_short, id, changes, store=pick(store))
        return await run(backend.pin, id, action == "pin", store=pick(store))
