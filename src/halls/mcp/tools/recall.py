"""Reading memory back: a search, and the briefing a session starts with."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from halls.mcp.backend import JSON
from halls.mcp.tools.base import READ, Store, Tools, run
from halls.models import MAX_CONTENT_CHARS, RecallTier
from halls.service import DEFAULT_BUDGET, DEFAULT_MIN_RELEVANCE, MAX_BUDGET, MIN_BUDGET


def _compact_hit(hit: JSON) -> JSON:
    keep = ("id", "tier", "content", "topic", "occurred_at", "score", "relevance")
    out = {k: hit.get(k) for k in keep}
    # A fact's evidence, only when it has some: most hits stay as short as before.
    if hit.get("sources"):
        out["sources"] = [_compact_source(s) for s in hit["sources"]]
    return out


def _compact_source(source: JSON) -> JSON:
    keep = ("id", "tier", "content", "occurred_at", "score")
    return {k: source.get(k) for k in keep}


def _compact_due(loop: JSON) -> JSON:
    keep = ("id", "intent", "reason")
    return {k: loop.get(k) for k in keep}


def register(tools: Tools) -> None:
    backend, pick = tools.backend, tools.pick

    @tools.tool(READ)
    async def recall(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_CONTENT_CHARS,
                description="The question you need answered, e.g. 'how does Chad want paths "
                "written?'.",
            ),
        ],
        n_results: Annotated[
            int, Field(ge=1, le=100, description="How many hits, best first.")
        ] = 5,
        tiers: Annotated[
            list[RecallTier] | None,
            Field(
                description="Narrow the search: short = recent notes, near = open loops, long = "
                "consolidated facts, journal = the raw record. Default: all but journal."
            ),
        ] = None,
        topic: Annotated[str | None, Field(description="Only memories with this topic.")] = None,
        min_relevance: Annotated[
            float,
            Field(
                ge=0.0,
                le=1.0,
                description="The least relevance (0 to 1) a search needs to return hits; 0 "
                "shows the closest even when none seems relevant.",
            ),
        ] = DEFAULT_MIN_RELEVANCE,
        store: Store = None,
    ) -> JSON:
        """Search memory: short-term notes, open loops and long-term facts at once, by words
        and by meaning, best first. Call it before answering anything that may depend on the
        past: the user's preferences, earlier decisions, names, project facts. Phrase the query
        as the question you need answered. No hits: nothing cleared min_relevance, so say you
        do not remember rather than guess. `due` lists open loops due now: act on them, then
        settle them with `loops`."""
        found = await run(
            backend.search,
            query,
            store=pick(store),
            n_results=n_results,
            tiers=tiers,
            topic=topic,
            min_relevance=min_relevance,
        )
        return {
            "results": [_compact_hit(h) for h in found["results"]],
            "due": [_compact_due(d) for d in found.get("due", [])],
        }

    @tools.tool(READ)
    async def context(
        query: Annotated[
            str | None,
            Field(
                max_length=MAX_CONTENT_CHARS,
                description="What the session is about, e.g. the user's first request; adds "
                "memories relevant to it.",
            ),
        ] = None,
        budget_tokens: Annotated[
            int,
            Field(ge=MIN_BUDGET, le=MAX_BUDGET, description="Upper bound on the block's size."),
        ] = DEFAULT_BUDGET,
        project: Annotated[
            str | None,
            Field(
                max_length=200,
                description="The project the session works on, e.g. the repository's name; "
                "its memories and topic loops come first.",
            ),
        ] = None,
        store: Store = None,
    ) -> JSON:
        """A compact memory briefing within budget_tokens: open loops due now, memories
        relevant to `query` (if any), the most important
        long-term facts. Call it once at the start of a session or task (pass the user's first
        request as query), and again when the subject changes sharply. Act on due loops."""
        return await run(
            backend.context,
            store=pick(store),
            query=query,
            project=project,
            budget_tokens=budget_tokens,
        )
