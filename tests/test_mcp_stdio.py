"""MCP over stdio (`halls mcp`), local and proxying to a live server, via the official client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mcp import ClientSession

from halls import Memory, Settings
from mcp_scenario import MEMORY, call, error, exercise
from mcp_scenario import over_stdio as _stdio


def test_mcp_stdio_on_a_data_dir(tmp_path: Path, embedder: Any) -> None:
    """`halls mcp --data-dir D`: the agent's session works, and the memory lands in D."""
    data = tmp_path / "data"
    ids = asyncio.run(
        _stdio(
            ["--data-dir", str(data)],
            tmp_path / "mcp.log",
            lambda s: exercise(s, "agent", profile="agent"),
        )
    )
    with Memory(Settings(data_dir=data), embedder=embedder) as memory:
        assert memory.get_short(ids["short"], store="agent").content == MEMORY
        assert memory.get_loop(ids["near"], store="agent").status == "done"


def test_mcp_stdio_default_store_option(tmp_path: Path, embedder: Any) -> None:
    """`halls mcp --store NAME` sends calls that name no store to NAME."""
    data = tmp_path / "data"

    async def work(session: ClientSession) -> dict[str, Any]:
        return await call(session, "remember", content="the project uses ruff for lint")

    entry = asyncio.run(
        _stdio(["--data-dir", str(data), "--store", "proj"], tmp_path / "mcp.log", work)
    )
    with Memory(Settings(data_dir=data), embedder=embedder) as memory:
        assert memory.get_short(entry["id"], store="proj").content.endswith("ruff for lint")
        assert memory.stores() == ["proj"]


def test_mcp_stdio_proxies_to_a_server(server: Any, store_name: str, tmp_path: Path) -> None:
    """`halls mcp --server-url --tools all`: every tool, the live server owning the store."""
    ids = asyncio.run(
        _stdio(
            ["--server-url", server.url, "--tools", "all"],
            tmp_path / "mcp.log",
            lambda s: exercise(s, store_name),
        )
    )
    with server.client() as http:
        got = http.get(f"/short/{ids['short']}", params={"store": store_name})
        assert got.status_code == 200 and got.json()["content"] == MEMORY


def test_mcp_stdio_proxy_reports_a_dead_server(tmp_path: Path) -> None:
    """Proxying to a server that is not there is a tool error naming the fix, not a crash."""
    from conftest import free_port

    url = f"http://127.0.0.1:{free_port()}"

    async def work(session: ClientSession) -> str:
        return await error(session, "recall", query="anything")

    message = asyncio.run(_stdio(["--server-url", url], tmp_path / "mcp.log", work))
    assert message == f"cannot reach the halls server at {url}; is `halls serve` running?"
