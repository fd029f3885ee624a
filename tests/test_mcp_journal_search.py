"""The journal in recall over MCP (streamable HTTP, the official client): tiers and visibility."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import ClientSession

from mcp_scenario import call, error, over_http

FULL = "Marisol approved moving the osprey telemetry job to the night shift"
PRIVATE = "Marisol told me about her osprey allergy diagnosis in confidence"
SUMMARY = "The osprey telemetry vendor quoted twelve thousand dollars"


def test_mcp_recall_searches_the_journal_only_when_asked(server: Any, store_name: str) -> None:
    """journal events (with visibility) go in; recall finds them only with tiers ["journal"]."""

    async def work(session: ClientSession) -> dict[str, Any]:
        logged = await call(
            session,
            "journal",
            store=store_name,
            events=[
                {"content": FULL, "role": "user"},
                {"content": PRIVATE, "role": "user", "visibility": "private"},
                {"content": SUMMARY, "role": "user", "visibility": "summary"},
            ],
        )
        full, private, summary = logged["ids"]
        out: dict[str, Any] = {"ids": (full, private, summary)}
        out["default"] = await call(
            session, "recall", query=FULL, store=store_name, min_relevance=0
        )
        out["journal"] = await call(
            session, "recall", query=FULL, tiers=["journal"], store=store_name, min_relevance=0
        )
        out["private"] = [
            await call(session, "recall", query=q, tiers=t, store=store_name, min_relevance=0)
            for q in (PRIVATE, "osprey allergy diagnosis")
            for t in (["journal"], ["short", "near", "long", "journal"])
        ]
        out["summary"] = await call(
            session,
            "recall",
            query="osprey telemetry vendor quote",
            tiers=["journal"],
            store=store_name,
            min_relevance=0,
        )
        out["bad"] = await error(
            session,
            "journal",
            store=store_name,
            events=[{"content": "a turn", "visibility": "secret"}],
        )
        return out

    got = asyncio.run(over_http(f"{server.url}/mcp", work))
    full, private, summary = got["ids"]
    assert got["default"]["results"] == []
    journal_hits = got["journal"]["results"]
    assert journal_hits[0]["id"] == full and journal_hits[0]["tier"] == "journal"
    assert journal_hits[0]["content"] == FULL
    assert private not in {h["id"] for h in journal_hits}
    for answer in got["private"]:
        assert all(h["id"] != private and "allergy" not in h["content"] for h in answer["results"])
    summary_hits = {h["id"]: h for h in got["summary"]["results"]}
    assert summary_hits[summary]["content"] == ("[summary] user event: content withheld (8 words)")
    assert "visibility" in got["bad"]
    # The bad event stored nothing, and the others are in the journal whole.
    with server.client() as http:
        listed = http.get("/journal", params={"store": store_name}).json()
    assert sorted(e["id"] for e in listed) == sorted(got["ids"])
    assert {e["id"]: e["visibility"] for e in listed} == {
        full: "full",
        private: "private",
        summary: "summary",
    }
