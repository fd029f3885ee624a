"""The state of a store: its consolidation, its numbers, its audit log."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from halls.errors import InvalidInput
from halls.mcp.backend import JSON
from halls.mcp.tools.base import DESTROY, READ, Store, Tools, run


def register(tools: Tools) -> None:
    backend, pick = tools.backend, tools.pick

    @tools.tool(DESTROY, reads=frozenset({"status", "runs"}))
    async def consolidate(
        action: Annotated[
            Literal["status", "dry_run", "run", "runs", "revert"],
            Field(
                description="status: last run and what is pending; dry_run: what a run would "
                "do, changing nothing; run: do it now; runs: the runs, newest first; revert: "
                "undo the newest applied run, `id`."
            ),
        ] = "status",
        id: Annotated[str | None, Field(description="revert: the run's id.")] = None,
        store: Store = None,
    ) -> JSON:
        """Inspect, preview or run consolidation: the step that files recurring short-term
        memories into long-term facts, ages out stale ones, settles open loops and acts on
        forget flags (purging personal data for good). It runs by itself about every 20 hours,
        so use action=run only when the user asks for it, or right after flag_forget when
        something must go now. status, dry_run and runs change nothing; revert undoes a run
        (not its purges)."""
        if action == "runs":
            return {"runs": await run(backend.list_runs, store=pick(store), limit=50)}
        if action == "revert":
            if id is None:
                raise InvalidInput("consolidate revert needs the run's id")
            return await run(backend.revert_run, id, store=pick(store))
        if action == "status":
            return await run(backend.consolidation_status, store=pick(store))
        return await run(backend.consolidate, store=pick(store), dry_run=action == "dry_run")

    @tools.tool(READ)
    async def stats(store: Store = None) -> JSON:
        """Numbers about a store: entries per tier (short, near, long, journal), briefs and
        forget flags still waiting for a consolidation run, size on disk, and the embedding
        model. Call it to answer "how much do you remember?" or to check that memory works."""
        return await run(backend.stats, store=pick(store))

    @tools.tool(READ, "admin")
    async def audit(
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many.")] = 50,
        store: Store = None,
    ) -> JSON:
        """Who changed what in a store, newest first: each write, deletion, purge and
        consolidation run with its time, the ids it touched and the id of the token that asked
        (never any content). Call it when the user asks what happened to their memory or who
        deleted something. Needs an admin token when the server has tokens."""
        return {"entries": await run(backend.audit, store=pick(store), limit=limit)}
