"""What an agent hands memory: a note, the verbatim record, a session's brief."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from halls.mcp.backend import JSON
from halls.mcp.tools.base import ADD, Scope, Store, Text, Tools, Topic, run
from halls.models import MAX_CONTENT_CHARS, ImportanceLevel, NewShort, Visibility


class JournalItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: Text = Field(description="The event verbatim, e.g. one turn of the conversation.")
    role: str | None = Field(
        default=None, max_length=100, description="Who produced it: user, assistant, tool, ..."
    )
    session_id: str | None = Field(
        default=None, max_length=200, description="Groups the events of one conversation."
    )
    occurred_at: str | None = Field(
        default=None, description="When it happened, ISO-8601; default now."
    )
    visibility: Visibility = Field(
        default="full",
        description="In recall: full; summary = a line without its content; private = never.",
    )
    scope: str | None = Field(default=None, max_length=128, description="The work it is for.")


def register(tools: Tools) -> None:
    backend, pick = tools.backend, tools.pick

    @tools.tool(ADD)
    async def remember(
        content: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_CONTENT_CHARS,
                description="One self-contained statement, e.g. 'Chad prefers absolute "
                "paths in config files'.",
            ),
        ],
        topic: Topic = None,
        pinned: Annotated[
            bool, Field(description="Keep it in short-term memory until deleted.")
        ] = False,
        importance: Annotated[
            Annotated[float, Field(ge=0, le=1)] | ImportanceLevel | None,
            Field(description="How much it matters; default normal."),
        ] = None,
        scope: Scope = None,
        store: Store = None,
    ) -> JSON:
        """Save something worth knowing later: a preference, a decision and its reason, a fact
        about the project or its people, a correction. Call it as soon as you learn one. Write
        one self-contained sentence that makes sense weeks from now: name who and what, no "he"
        or "this". Notes age out in about 8 days (important ones later) unless they recur;
        consolidation files what recurs into long-term memory. Name a feature or bug as scope:
        once its work goes quiet, its notes leave `context`. Secrets are redacted."""
        note = NewShort(
            content=content, topic=topic, pinned=pinned, importance=importance, scope=scope
        )
        return await run(backend.remember, note, store=pick(store))

    @tools.tool(ADD)
    async def journal(
        events: Annotated[
            list[JournalItem],
            Field(min_length=1, max_length=1000, description="Events in the order they happened."),
        ],
        store: Store = None,
    ) -> JSON:
        """Append raw events to the journal, the verbatim record of what happened: turns of the
        conversation (role 'user' or 'assistant', one session_id per conversation), tool
        results, outcomes. Each consolidation run reads the last 8 days of it: the statements
        in the user's own turns (and events without a role) that recur on several days become
        long-term facts derived from those events; greetings, thanks and questions never do, and
        the assistant's and tools' events are not read for facts (nor summary or private ones).
        `recall` searches the journal only when its tiers name it. Secrets (API keys, tokens,
        passwords), e-mail addresses, phone, social security and card numbers are redacted
        before anything is stored. Use it to keep a record of a conversation; for a single fact
        use `remember`. Returns the new event ids."""
        items = [e.model_dump(exclude_none=True) for e in events]
        return {"ids": await run(backend.journal, items, store=pick(store))}

    @tools.tool(ADD)
    async def submit_brief(
        summary: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_CONTENT_CHARS,
                description="What was done and decided, in a few sentences.",
            ),
        ],
        promote_hints: Annotated[
            list[str],
            Field(
                max_length=1000,
                description="Short phrases naming memories that deserve long-term memory, e.g. "
                "'CI runner has 2 cores'.",
            ),
        ] = [],  # noqa: B006 - the SDK copies arguments per call; [] is the schema default
        completed_intents: Annotated[
            list[str],
            Field(max_length=1000, description="Ids or wording of open loops that were settled."),
        ] = [],  # noqa: B006 - as above
        noise: Annotated[
            list[str],
            Field(
                max_length=1000,
                description="Texts or topics that must never become long-term memory, e.g. "
                "'small talk'.",
            ),
        ] = [],  # noqa: B006 - as above
        store: Store = None,
    ) -> JSON:
        """Hand consolidation a brief when a session or task ends, or before the conversation
        is compacted: what was done and decided (its statements become long-term facts once
        they recur), which memories deserve keeping (promote_hints), which open loops were
        settled (completed_intents), what must never be kept (noise). Call it once per session
        or task."""
        return await run(
            backend.submit_brief,
            summary,
            store=pick(store),
            promote_hints=promote_hints,
            completed_intents=completed_intents,
            noise=noise,
        )
