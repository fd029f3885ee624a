"""The state of a store: its consolidation, its numbers, its audit log.

A consolidation runs for a minute over a large backlog. ``consolidate``
``start`` answers at once with a job that ``job`` reports on (stage, done /
total); ``run`` from a client that asks for progress (a ``progressToken``:
stdio; the stateless HTTP endpoint answers in one JSON body and drops
notifications) runs as a job too, and reports it as progress notifications.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio
from mcp.server.fastmcp import Context
from pydantic import Field

from halls.client import error_from_wire
from halls.errors import InvalidInput
from halls.mcp.backend import JSON, Backend
from halls.mcp.tools.base import DESTROY, READ, Store, Tools, run

POLL_SECONDS = 0.25  # how often a watched run looks at its job


def register(tools: Tools) -> None:
    backend, pick = tools.backend, tools.pick

    @tools.tool(DESTROY, reads=frozenset({"status", "runs", "review", "job"}))
    async def consolidate(
        ctx: Context,
        action: Annotated[
            Literal[
                "status",
                "dry_run",
                "run",
                "start",
                "job",
                "runs",
                "review",
                "approve",
                "reject",
                "apply",
                "revert",
            ],
            Field(
                description="status: last run and what is pending; dry_run: plan a run, kept "
                "for review, changing no memory; run: do it now; start: run it as a job, answer "
                "at once; job: how far job `id` is; runs: the runs, newest first; review: a "
                "run's actions, `id`; approve / reject: `actions` of plan `id`; apply: the "
                "plan's approved actions as one run; revert: undo run `id`."
            ),
        ] = "status",
        id: Annotated[str | None, Field(description="The run's id (r_...), or job's.")] = None,
        actions: Annotated[
            list[int] | None, Field(description="approve / reject: action numbers, from 1.")
        ] = None,
        store: Store = None,
    ) -> JSON:
        """Inspect, preview or run consolidation: the step that files recurring short-term
        memories into long-term facts, ages out stale ones, settles open loops and acts on
        forget flags (purging personal data for good). It runs by itself about every 20 hours,
        so use action=run only when the user asks for it, or right after flag_forget when
        something must go now. status, dry_run, runs and review change no memory; a dry run's
        plan can be reviewed action by action and its approved actions applied; revert undoes
        a run (not its purges) unless a later run built on it. A run over a large backlog
        takes a minute: action=start answers at once with a job, action=job tells how far."""
        if action == "runs":
            return {"runs": await run(backend.list_runs, store=pick(store), limit=50)}
        if action in ("review", "approve", "reject", "apply", "revert"):
            if id is None:
                raise InvalidInput(f"consolidate {action} needs the run's id")
            if action == "review":
                return await run(backend.get_run, id, store=pick(store))
            if action in ("approve", "reject"):
                if not actions:
                    raise InvalidInput(f"consolidate {action} needs `actions`: their numbers")
                verdicts = {"approve": [], "reject": [], action: actions}
                return await run(backend.review_run, id, **verdicts, store=pick(store))
            return await run(
                backend.apply_run if action == "apply" else backend.revert_run,
                id,
                store=pick(store),
            )
        if action == "job":
            if id is None:
                raise InvalidInput("consolidate job needs the job's id (from action start)")
            return await run(backend.consolidation_job, id, store=pick(store))
        if action == "status":
            return await run(backend.consolidation_status, store=pick(store))
        if action == "start":
            return await run(backend.consolidate, store=pick(store), dry_run=False, wait=False)
        if action == "run" and _wants_progress(ctx):
            return await _watched(ctx, backend, pick(store))
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


def _wants_progress(ctx: Context) -> bool:
    """Whether the call came with a progress token (in a session)."""
    try:
        meta = ctx.request_context.meta
    except ValueError:  # called in-process, outside a session
        return False
    return meta is not None and meta.progressToken is not None


async def _watched(ctx: Context, backend: Backend, store: str | None) -> JSON:
    """A run as a job, its progress sent as notifications; the run record when done.

    MCP wants each notification's progress greater than the last: it counts
    the stages seen (the n-th stage starts at n) plus the share of the
    current one done; the message names the stage and its counts.
    """
    job = await run(backend.consolidate, store=store, dry_run=False, wait=False)
    stages, seen = 0, None
    while job["status"] in ("queued", "running"):
        if job["stage"] and (job["stage"], job["done"], job["total"]) != seen:
            if seen is None or job["stage"] != seen[0]:
                stages += 1
            seen = (job["stage"], job["done"], job["total"])
            share = min(job["done"] / job["total"], 0.999) if job["total"] else 0.0
            message = f"{job['stage']} {job['done']}/{job['total']}"
            await ctx.report_progress(stages + share, None, message)
        await anyio.sleep(POLL_SECONDS)
        job = await run(backend.consolidation_job, job["id"], store=store)
    if job["status"] == "failed":
        error: dict[str, Any] = job["error"] or {}
        raise error_from_wire(str(error.get("code")), str(error.get("message")))
    return dict(job["run"])
