"""One agent session, driven through the official MCP client, shared by transports.

Every transport (streamable HTTP, stdio, stdio proxying to a server) must
pass the same scenario, so behaviour cannot differ between them.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parent.parent

# The default profile (mcp.tools: agent), and what `all` adds.
AGENT_TOOLS = {"remember", "recall", "context", "loops", "memory", "flag_forget", "submit_brief"}
ADMIN_TOOLS = {
    "journal",
    "scopes",
    "consolidate",
    "stats",
    "forget_about",
    "delete_memory",
    "delete_store",
    "audit",
    "export_store",
    "import_store",
    "backup_store",
}
TOOLS = AGENT_TOOLS | ADMIN_TOOLS
SECRET = "mcp archive passphrase"
MEMORY = "Dana keeps the staging database password in the team vault, never in .env files"
LOOP = "Ask Dana whether the quarterly tax filing went through"


async def call(session: ClientSession, tool: str, **args: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, args)
    assert not result.isError, result.content
    assert isinstance(result.structuredContent, dict)
    return result.structuredContent


async def error(session: ClientSession, tool: str, **args: Any) -> str:
    result = await session.call_tool(tool, args)
    assert result.isError
    text = result.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in text and ".py" not in text
    return text


async def exercise(session: ClientSession, store: str, profile: str = "all") -> dict[str, str]:
    """List, remember, recall, note a loop, get context, fail cleanly; return the ids.

    ``profile`` is the server's ``mcp.tools``: the admin's tools are exercised
    only where it serves them (``all``).
    """
    listed = await session.list_tools()
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == (TOOLS if profile == "all" else AGENT_TOOLS)
    assert tools["recall"].annotations.readOnlyHint is True  # type: ignore[union-attr]
    assert tools["flag_forget"].annotations.destructiveHint is True  # type: ignore[union-attr]
    assert tools["remember"].annotations.readOnlyHint is False  # type: ignore[union-attr]
    assert all("store" in t.inputSchema["properties"] for t in listed.tools)

    entry = await call(session, "remember", content=MEMORY, topic="secrets", store=store)
    assert entry["id"].startswith("s_") and entry["content"] == MEMORY

    hits = await call(session, "recall", query="where is the staging password kept?", store=store)
    assert hits["results"][0]["id"] == entry["id"]

    loop = await call(
        session, "loops", action="add", intent=LOOP, trigger_type="session", store=store
    )
    assert loop["id"].startswith("n_") and loop["status"] == "open"

    # A session loop is due now: recall shows it beside the hits, with why.
    due = (await call(session, "recall", query="tax filing", store=store))["due"]
    assert [(d["id"], d["reason"]) for d in due] == [
        (loop["id"], "raised at the start of a session")
    ]
    dropped = await call(
        session, "loops", action="add", intent="Send Dana the vault audit", store=store
    )
    cancelled = await call(session, "loops", action="cancel", id=dropped["id"], store=store)
    assert cancelled["status"] == "cancelled" and cancelled["closed_at"]
    assert "already cancelled" in await error(
        session, "loops", action="complete", id=dropped["id"], store=store
    )

    block = await call(session, "context", query="staging database password", store=store)
    assert LOOP in block["text"] and MEMORY in block["text"]
    assert {entry["id"], loop["id"]} <= set(block["ids"])
    assert 0 < block["tokens"] <= 400

    loops = await call(session, "loops", action="list", store=store)
    assert [x["id"] for x in loops["loops"]] == [loop["id"]]
    assert "intent" in await error(session, "loops", action="add", store=store)
    assert "id" in await error(session, "loops", action="cancel", store=store)

    # Bad arguments: a tool error with a message that names the problem.
    assert "n_results" in await error(session, "recall", query="x", n_results=0, store=store)
    assert "query" in await error(session, "recall", store=store)
    assert "not a valid near id" in await error(
        session, "loops", action="complete", id="x", store=store
    )
    assert "trigger_value" in await error(
        session,
        "loops",
        action="add",
        intent="renew the cert",
        trigger_type="time",
        store=store,
    )
    assert "invalid store name" in await error(session, "recall", query="x", store="Bad Name!")
    assert "budget_tokens" in await error(session, "context", budget_tokens=10, store=store)

    done = await call(session, "loops", action="complete", id=loop["id"], store=store)
    assert done["status"] == "done"
    assert (await call(session, "loops", action="list", store=store))["loops"] == []
    brief = await call(
        session,
        "submit_brief",
        summary="Set up staging secrets handling",
        promote_hints=["staging database password"],
        noise=["small talk"],
        store=store,
    )
    assert brief["id"].startswith("b_") and brief["promote_hints"] == ["staging database password"]
    assert brief["noise"] == ["small talk"]  # as over HTTP
    missing = "l_" + "0" * 26
    assert "no long-term fact" in await error(
        session, "flag_forget", id=missing, reason="wrong", store=store
    )
    await records(session, store, entry["id"], loop["id"])
    ids = {"short": entry["id"], "near": loop["id"]}
    if profile == "all":
        ids["journal"] = await admin(session, store)
    return ids


async def records(session: ClientSession, store: str, short: str, loop: str) -> None:
    """The `memory` tool: one record by id, corrected, pinned; a tier's newest."""
    got = await call(session, "memory", action="get", id=short, store=store)
    assert got["content"] == MEMORY and got["pinned"] is False
    assert (await call(session, "memory", action="get", id=loop, store=store))["intent"] == LOOP
    fixed = MEMORY.replace("team vault", "company vault")
    changed = await call(
        session, "memory", action="update", id=short, content=fixed, topic="vault", store=store
    )
    assert changed["content"] == fixed and changed["topic"] == "vault"
    pinned = await call(session, "memory", action="pin", id=short, store=store)
    assert pinned["pinned"] is True and pinned["expires_at"] is None
    notes = await call(session, "memory", action="list", tier="short", store=store)
    assert [(n["id"], n["content"]) for n in notes["short"]] == [(short, fixed)]
    unpinned = await call(session, "memory", action="unpin", id=short, store=store)
    assert unpinned["pinned"] is False and unpinned["expires_at"]
    restored = await call(session, "memory", action="update", id=short, content=MEMORY, store=store)
    assert restored["content"] == MEMORY and restored["topic"] == "vault"
    assert (await call(session, "memory", action="list", store=store))["long"] == []
    missing = "l_" + "0" * 26
    assert "no long-term fact" in await error(
        session, "memory", action="get", id=missing, store=store
    )
    assert "no long-term fact" in await error(
        session, "memory", action="pin", id=missing, store=store
    )
    assert "not the id" in await error(session, "memory", action="get", id="x_1", store=store)
    assert "content or topic" in await error(
        session, "memory", action="update", id=short, store=store
    )
    assert "needs an id" in await error(session, "memory", action="pin", store=store)
    assert "action" in await error(session, "memory", action="delete", id=short, store=store)


async def admin(session: ClientSession, store: str) -> str:
    """The `all` profile's tools: journal, consolidation, numbers, archives; the journal id."""
    assert "invalid store name" in await error(session, "stats", store="Bad Name!")
    logged = await call(
        session,
        "journal",
        store=store,
        events=[
            {"content": "user: deploy with key sk-live-0123456789abcdefghijklmnop", "role": "user"},
            {"content": "assistant: deployed", "role": "assistant", "session_id": "s1"},
        ],
    )
    assert len(logged["ids"]) == 2 and all(i.startswith("j_") for i in logged["ids"])
    assert "content" in await error(session, "journal", store=store, events=[{"role": "user"}])
    status = await call(session, "consolidate", store=store)
    assert status["store"] == store and status["last_run"] is None
    preview = await call(session, "consolidate", action="dry_run", store=store)
    assert preview["dry_run"] is True
    assert (await call(session, "consolidate", action="status", store=store))["last_run"] is None
    # The plan is kept for review: listed by number, and a number it lacks is refused.
    shown = await call(session, "consolidate", action="review", id=preview["id"], store=store)
    assert shown["status"] == "planned" and shown["actions"] == preview["actions"]
    missing = len(shown["actions"]) + 1
    assert f"has no action {missing}" in await error(
        session, "consolidate", action="approve", id=preview["id"], actions=[missing], store=store
    )
    ran = await call(session, "consolidate", action="run", store=store)
    assert ran["dry_run"] is False and ran["store"] == store
    after = await call(session, "consolidate", action="status", store=store)
    assert after["last_run"]["id"] == ran["id"]
    assert "action" in await error(session, "consolidate", action="now", store=store)

    stats = await call(session, "stats", store=store)
    # The run above has read the brief: it no longer waits.
    assert stats["counts"]["journal"] == 2 and stats["counts"]["briefs"] == 0

    # Export (encrypted), import into another store, back up: files on this machine.
    folder = Path(tempfile.mkdtemp(prefix="halls-mcp-"))
    path = str(folder / "memory.halls")
    exported = await call(session, "export_store", path=path, passphrase=SECRET, store=store)
    assert exported["encrypted"] is True and exported["bytes"] == Path(path).stat().st_size
    assert MEMORY.encode() not in Path(path).read_bytes()
    assert "already exists" in await error(session, "export_store", path=path, store=store)
    copy = f"{store}-copy"
    assert "wrong passphrase" in await error(
        session, "import_store", path=path, passphrase="not it", store=copy
    )
    dry = await call(
        session, "import_store", path=path, passphrase=SECRET, dry_run=True, store=copy
    )
    assert dry["dry_run"] is True and dry["added"]["short"] == 1
    assert "no store named" in await error(session, "stats", store=copy)
    done = await call(session, "import_store", path=path, passphrase=SECRET, store=copy)
    assert done["added"] == dry["added"] and done["added"]["journal"] == 2
    question = "where is the staging password kept?"
    hits = await call(session, "recall", query=question, store=copy)
    original = await call(session, "recall", query=question, store=store)
    assert [h["id"] for h in hits["results"]] == [h["id"] for h in original["results"]]
    assert "overwrite" in await error(
        session, "import_store", path=path, passphrase=SECRET, store=copy
    )
    backup = await call(session, "backup_store", path=str(folder / "copy.sqlite3"), store=copy)
    assert backup["bytes"] == (folder / "copy.sqlite3").stat().st_size > 0
    runs = (await call(session, "consolidate", action="runs", store=store))["runs"]
    assert ran["id"] in [r["id"] for r in runs]
    reverted = await call(session, "consolidate", action="revert", id=ran["id"], store=store)
    assert reverted["id"] == ran["id"] and reverted["reverted_at"]
    assert "run's id" in await error(session, "consolidate", action="revert", store=store)
    return str(logged["ids"][0])


async def over_http(url: str, work: Any, token: str | None = None) -> Any:
    """``await work(session)`` in one MCP session over streamable HTTP at ``url``."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx.AsyncClient(headers=headers, timeout=60) as client,
        streamable_http_client(url, http_client=client) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await work(session)


async def over_stdio(
    args: list[str], log: Path, work: Any, env: dict[str, str] | None = None
) -> Any:
    """``await work(session)`` in one session with ``halls mcp ARGS`` over stdio; its stderr
    goes to ``log``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "halls", "mcp", *args],
        cwd=REPO,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("HALLS_")},
            **(env or {}),
        },
    )
    with open(log, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await work(session)
