"""Open loops, follow-ups to raise later: add one when the user or you promise a
follow-up ("remind me to renew the cert on Dec 1"); due ones appear in `context` and
`recall`. complete one by id once it happened; cancel one that no longer applies; list
them, newest first."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from halls.errors import InvalidInput
from halls.mcp.backend import JSON
from halls.mcp.tools.base import ADD, Store, Tools, Topic, run
from halls.models import MAX_CONTENT_CHARS, LoopStatus, TriggerType

LoopId = Annotated[str | None, Field(description="complete, cancel: the loop's id (n_...).")]


def register(tools: Tools) -> None:
    backend, pick = tools.backend, tools.pick

    # One tool rather than four: every tool's schema is in the agent's context
    # on every turn, and these four share what they are about.
    @tools.tool(ADD, reads=frozenset({"list"}))
    async def loops(
        action: Annotated[Literal["add", "complete", "cancel", "list"], Field()],
        intent: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=MAX_CONTENT_CHARS,
                description="add: what to bring up or do, e.g. 'Ask how the tax filing went'.",
            ),
        ] = None,
        trigger_type: Annotated[
            TriggerType,
            Field(
                description="add: session = at the next session's start; time, topic = at "
                "trigger_value; manual = only when recalled."
            ),
        ] = "session",
        trigger_value: Annotated[
            str | None,
            Field(max_length=1000, description="add: an ISO-8601 time, or words of the topic."),
        ] = None,
        topic: Topic = None,
        expires_at: Annotated[
            str | None, Field(description="add: ISO-8601; after this it is dropped unraised.")
        ] = None,
        id: LoopId = None,
        status: Annotated[LoopStatus, Field(description="list: which loops.")] = "open",
        limit: Annotated[int, Field(ge=1, le=1000, description="list: at most this many.")] = 50,
        store: Store = None,
    ) -> JSON:
        """Open loops: follow-ups to raise later. add one whenever the user or you promise a
        follow-up ("remind me to renew the cert on Dec 1", "let's revisit this next time"); due
        loops show up in `context` and `recall`. Once it happened, complete it by id; cancel one
        that no longer applies. list: newest first."""
        if action == "list":
            found = await run(backend.list_loops, store=pick(store), status=status, limit=limit)
            return {"loops": found}
        if action == "add":
            if intent is None:
                raise InvalidInput("loops add needs an intent")
            return await run(
                backend.add_loop,
                intent,
                store=pick(store),
                trigger_type=trigger_type,
                trigger_value=trigger_value,
                topic=topic,
                expires_at=expires_at,
            )
        if id is None:
            raise InvalidInput(f"loops {action} needs the loop's id")
        settle = backend.complete_loop if action == "complete" else backend.cancel_loop
        return await run(settle, id, store=pick(store))
