"""MCP over streamable HTTP, mounted on a live ``halls serve``, via the official client."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcp_scenario import MEMORY, call, exercise


async def _session(url: str, token: str | None, work: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx.AsyncClient(headers=headers, timeout=60) as client,
        streamable_http_client(url, http_client=client) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await work(session)


def test_mcp_http_session_end_to_end(server: Any, store_name: str) -> None:
    """Over /mcp: list tools, remember, recall, loop, context, tool errors, as the API sees it."""
    ids = asyncio.run(_session(f"{server.url}/mcp", None, lambda s: exercise(s, store_name)))
    # One service under both interfaces: the MCP write is visible over HTTP.
    with server.client() as http:
        got = http.get(f"/short/{ids['short']}", params={"store": store_name})
        assert got.status_code == 200 and got.json()["content"] == MEMORY
        assert http.get(f"/near/{ids['near']}", params={"store": store_name}).json()["status"] == (
            "done"
        )
        journal = http.get("/journal", params={"store": store_name}).json()
        assert ids["journal"] in {e["id"] for e in journal}
        assert not any("sk-live" in e["content"] for e in journal)  # redacted on the way in


def test_mcp_http_bearer_token_and_custom_path(server_factory: Any, store_name: str) -> None:
    """With a token, /mcp refuses a wrong one with 401 and serves the right one; path is config."""
    live = server_factory(
        env={"HALLS_SERVER__BEARER_TOKEN": "s3cret-token", "HALLS_MCP__PATH": "/agents/mcp"}
    )
    url = f"{live.url}/agents/mcp"

    async def remember(session: ClientSession) -> dict[str, Any]:
        return await call(session, "remember", content="the MCP path moved", store=store_name)

    with pytest.raises(BaseException) as refused:
        asyncio.run(_session(url, "wrong-token", remember))
    statuses = [
        e.response.status_code
        for e in _leaves(refused.value)
        if isinstance(e, httpx.HTTPStatusError)
    ]
    assert statuses == [401]
    raw = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert raw.status_code == 401 and raw.json()["error"]["code"] == "unauthorized"
    # Nothing was written by the refused session.
    with live.client() as http:
        assert http.get("/stats", params={"store": store_name}).status_code == 404

    entry = asyncio.run(_session(url, "s3cret-token", remember))
    assert entry["id"].startswith("s_")
    moved = httpx.post(f"{live.url}/mcp", headers={"Authorization": "Bearer s3cret-token"})
    assert moved.status_code == 404


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc, *([exc.__cause__] if exc.__cause__ else [])]
