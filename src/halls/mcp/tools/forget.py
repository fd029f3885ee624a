"""Corrections and deletions: a fact flagged for the next run, or records gone now."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from halls.mcp.backend import JSON
from halls.mcp.tools.base import DESTROY, Store, Tools, run


def register(tools: Tools) -> None:
    backend, pick = tools.backend, tools.pick

    @tools.tool(DESTROY)
    async def flag_forget(
        id: Annotated[str, Field(description="The long-term fact's id, e.g. 'l_01J...'.")],
        reason: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description="Why, in the user's words, e.g. 'contains my phone number' or 'we "
                "moved off Postgres'.",
            ),
        ],
        store: Store = None,
    ) -> JSON:
        """Ask halls to forget a long-term fact that is wrong, outdated, or should never have
        been stored (personal data, a secret): only when the user asks to forget or correct
        something, or you find a secret. At the next consolidation run personal data and
        secrets are purged (if an admin flagged them) and wrong facts demoted."""
        return await run(backend.flag_forget, id, reason, store=pick(store))

    @tools.tool(DESTROY, "admin")
    async def forget_about(
        subject: Annotated[
            str | None,
            Field(
                min_length=2,
                max_length=1000,
                description="Text to find in every memory, any case, e.g. 'Ivanka' or a phone "
                "number.",
            ),
        ] = None,
        query: Annotated[
            str | None,
            Field(
                min_length=2,
                max_length=1000,
                description="Instead of subject: words that must all appear in a memory.",
            ),
        ] = None,
        dry_run: Annotated[
            bool, Field(description="true: only list what would go. false: purge it all.")
        ] = True,
        store: Store = None,
    ) -> JSON:
        """Delete everything memory holds about someone or something, when the user asks
        for it ("forget everything about my ex", "delete my phone number"). Every tier is
        searched, the raw journal included. First call it with dry_run=true and show the user
        what was found; only after they confirm, call it again with dry_run=false: the purge
        is immediate and cannot be undone. Needs an admin token when the server has tokens."""
        return await run(
            backend.forget_about, store=pick(store), subject=subject, query=query, dry_run=dry_run
        )

    @tools.tool(DESTROY, "admin")
    async def delete_memory(
        id: Annotated[
            str,
            Field(
                description="The id: s_ (short-term), n_ (open loop), l_ (long-term fact) or "
                "j_ (journal event)."
            ),
        ],
        store: Store = None,
    ) -> JSON:
        """Delete one record for good, now, when the user asks to delete that exact thing. A
        long-term fact goes with the notes it was made from and any personal data in it; a
        journal event is purged from the files. Cannot be undone; needs an admin token when
        the server has tokens. To correct a fact rather than erase it, use flag_forget."""
        await run(backend.delete_record, id, store=pick(store))
        return {"deleted": id}

    @tools.tool(DESTROY, "admin")
    async def delete_store(
        store: Annotated[str, Field(description="The store to delete, with all it holds.")],
    ) -> JSON:
        """Delete a whole store and every file of it, for good. Only when the user asks to
        delete that store by name; cannot be undone; needs an admin token when the server has
        tokens."""
        await run(backend.delete_store, store)
        return {"deleted": store}
