"""Reading memory back: a search, and the briefing a session starts with."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from halls.mcp.backend import JSON
from halls.mcp.tools.base import READ, Store, Stores, Tools, run
from halls.models import MAX_CONTENT_CHARS, RecallTier
from halls.service import DEFAULT_BUDGET, DEFAULT_MIN_RELEVANCE, MAX_BUDGET, MIN_BUDGET

_HIT = ("id", "tier", "content", "topic", "occurred_at", "score", "relevance")
_DUE = ("id", "intent", "reason")


def _compact(item: JSON, keep: tuple[str, ...], shared: bool) -> JSON:
    # A search of one store need not repeat its name on every hit.
    out = {k: item.get(k) for k in (*keep, "store") if k != "store" or shared}
    # A fact's evidence, only when it has some: most hits stay as short as before.
    if item.get("sources"):
        out["sources"] = [_compact_source(s) for s in item["sources"]]
    return out


def _compact_source(source: JSON) -> JSON:
    keep = ("id", "tier", "content", "occurred_at", "score")
    return {k: source.get(k) for k in keep}


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
                description="short = recent notes, near = open loops, long = consolidated "
                "facts, journal = the raw record. Default: all but journal."
            ),
        ] = None,
        topic: Annotated[str | None, Field(description="Only memories with this topic.")] = None,
        min_relevance: Annotated[
            float,
            Field(
                ge=0.0,
                le=1.0,
                description="The least relevance (0 to 1) to return hits; 0 shows the closest "
                "even if none seems relevant.",
            ),
        ] = DEFAULT_MIN_RELEVANCE,
        store: Store = None,
        stores: Stores = None,
    ) -> JSON:
        """Search memory (short-term notes, open loops, long-term facts) by words and by
        meaning, best first. Call it before answering anything that may depend on the
        past: the user's preferences, earlier decisions, names, project facts. No hits:
        nothing cleared min_relevance, so say you do not remember rather than guess. `due`
        lists open loops due now: act on them, then settle them with `loops`."""
        found = await run(
            backend.search,
            query,
            store=store if stores else pick(store),
            n_results=n_results,
            tiers=tiers,
            topic=topic,
            min_relevance=min_relevance,
            stores=stores or None,
        )
        shared = bool(stores)
        return {
            "results": [_compact(h, _HIT, shared) for h in found["results"]],
            "due": [_compact(d, _DUE, shared) for d in found.get("due", [])],
        }

    @tools.tool(READ)
    async def context(
        query: Annotated[
            str | None,
            Field(
                max_length=MAX_CONTENT_CHARS,
                description="What the session is about, e.g. the user's first request.",
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
                description="The session's project, e.g. the repository's name; its memories "
                "and topic loops come first.",
            ),
        ] = None,
        store: Store = None,
        stores: Stores = None,
    ) -> JSON:
        """A compact memory briefing within budget_tokens: open loops due now, memories
        relevant to `query`, the most important
        long-term facts. Call it once at the start of a session or task (pass the user's first
        request as query), and again when the subject changes sharply. Act on due loops."""
        return await run(
            backend.context,
            store=store if stores else pick(store),
            query=query,
            project=project,
            budget_tokens=budget_tokens,
            stores=stores or None,
        )
