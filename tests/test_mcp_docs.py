"""docs/mcp.md is checked against the MCP server's own tool list."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from halls.mcp.docs import END, START, render
from halls.mcp.server import build_server

REPO = Path(__file__).resolve().parent.parent
DOC = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")


def _sections() -> dict[str, str]:
    found = re.split(r"^### `([a-z_]+)`$", DOC, flags=re.M)
    return dict(zip(found[1::2], found[2::2], strict=True))


def test_every_tool_and_argument_is_documented() -> None:
    """Each tool has a section naming each of its arguments; no section names a missing tool."""
    tools = asyncio.run(build_server(None).list_tools())  # type: ignore[arg-type]
    sections = _sections()
    assert set(sections) == {t.name for t in tools}
    for tool in tools:
        rows = re.findall(r"^\| `([a-z_]+)` \|", sections[tool.name], flags=re.M)
        assert rows == list(tool.inputSchema["properties"]), tool.name
        assert tool.description in sections[tool.name]


def test_tool_reference_is_the_generated_one() -> None:
    """The reference block is `python -m halls.mcp.docs` output: regenerate when tools change."""
    block = DOC[DOC.index(START) : DOC.index(END) + len(END)]
    assert block == render()


def test_mcp_sample_json_is_valid_and_points_at_the_endpoint() -> None:
    """mcp.sample.json parses, and every HTTP server in it uses the default /mcp URL."""
    sample = json.loads((REPO / "mcp.sample.json").read_text(encoding="utf-8"))
    urls = [
        s["url"]
        for shape in sample.values()
        if isinstance(shape, dict)
        for key in ("servers", "mcpServers")
        for s in shape.get(key, {}).values()
        if "url" in s
    ]
    assert urls and all(u == "http://127.0.0.1:7420/mcp" for u in urls)
