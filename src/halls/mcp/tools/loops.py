"""Open loops: follow-ups to raise later, settled when done."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from halls.mcp.backend import JSON
from halls.mcp.tools.base import ADD, READ, SETTLE, Store, Tools, Topic, run
from halls.models import MAX_CONTENT_CHARS, LoopStatus, TriggerType


def register(tools: Tools) -> None:
    backend, pick = tools.backend, tools.pick

    @tools.tool(ADD)
    async def remember_for_later(
        intent: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_CONTENT_CHARS,
                description="What to bring up or do, e.g. 'Ask how the tax filing went'.",
            ),
        ],
        trigger_type: Annotated[
            TriggerType,
            Field(
                description="session: next session start; time: at trigger_value; topic: when "
                "the conversation touches trigger_value; manual: only when recalled."
            ),
        ] = "session",
        trigger_value: Annotated[
            str | None,
            Field(
                max_length=1000,
                description="time: ISO-8601, e.g. '2026-12-01T09:00:00Z'; topic: the words "
                "that should bring it up, e.g. 'taxes'.",
            ),
        ] = None,
        topic: Topic = None,
        expires_at: Annotated[
            str | None, Field(description="ISO-8601; after this it is dropped unraised.")
        ] = None,
        store: Store = None,
    ) -> JSON:
        """Note an open loop: something to bring up or do later. Call it whenever the user or you
        promise a follow-up ("remind me to renew the cert on Dec 1", "let's revisit this next
        time"). Pick the trigger: session = raise it at the start of the next session; time = due
        at trigger_value; topic = raise it when the conversation touches trigger_value; manual =
        only when recalled. Due loops show up in `context`. When it is done, call
        complete_intent with its id. Returns the loop with its id."""
        return await run(
            backend.add_loop,
            intent,
            store=pick(store),
            trigger_type=trigger_type,
            trigger_value=trigger_value,
            topic=topic,
            expires_at=expires_at,
        )

    @tools.tool(SETTLE)
    async def complete_intent(
        id: Annotated[str, Field(description="The open loop's id, e.g. 'n_01J...'.")],
        store: Store = None,
    ) -> JSON:
        """Close an open loop once its follow-up has happened: you raised it, or it was done.
        Call it right away, so the loop stops appearing in `context`. Find ids in `context`
        (in brackets) or with list_open_loops. Returns the closed loop."""
        return await run(backend.complete_loop, id, store=pick(store))

    @tools.tool(SETTLE)
    async def cancel_intent(
        id: Annotated[str, Field(description="The open loop's id, e.g. 'n_01J...'.")],
        store: Store = None,
    ) -> JSON:
        """Drop an open loop that no longer applies: the user changed their mind, or the
        follow-up became pointless. It is never raised again. For a loop that was carried out,
        use complete_intent instead. Returns the cancelled loop."""
        return await run(backend.cancel_loop, id, store=pick(store))

    @tools.tool(READ)
    async def list_open_loops(
        status: Annotated[
            LoopStatus,
            Field(description="Which loops to list."),
        ] = "open",
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many.")] = 50,
        store: Store = None,
    ) -> JSON:
        """List open loops (follow-ups noted with remember_for_later), newest first. Call it when
        the user asks what is pending or what you promised, or to find the id to pass to
        complete_intent."""
        loops = await run(backend.list_loops, store=pick(store), status=status, limit=limit)
        return {"loops": loops}
