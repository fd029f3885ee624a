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
    """Each tool of `all` has a section naming each argument; no section names a missing tool."""
    tools = asyncio.run(build_server(None, tools="all").list_tools())  # type: ignore[arg-type]
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


def _tool_names(profile: str = "agent") -> list[str]:
    server = build_server(None, tools=profile)  # type: ignore[arg-type]
    return [t.name for t in asyncio.run(server.list_tools())]


# "19 tools", "11 MCP tools", "nineteen tools": any count of tools a page states.
_WORDS = {
    "seven": 7,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_COUNT = re.compile(r"\b(\d+|" + "|".join(_WORDS) + r")\s+(?:MCP\s+)?tools\b", re.I)


def stated_tool_counts(text: str) -> list[int]:
    """Every count of tools ``text`` states, as numbers."""
    return [int(n) if n.isdigit() else _WORDS[n.lower()] for n in _COUNT.findall(text)]


def readme_tool_list(readme: str) -> list[str]:
    """The tool names the README's MCP section lists ("Its N tools: `a`, `b`, ... (reference")."""
    section = readme.split("## Use it from a coding agent (MCP)", 1)[1]
    listing = re.split(r"\btools:", section, maxsplit=1, flags=re.I)[1].split("(reference", 1)[0]
    return re.findall(r"`([a-z_]+)`", listing)


def test_readme_and_docs_state_the_servers_tool_count_and_names() -> None:
    """Every count of tools a page states is a profile's real one; the README lists them all.

    The README names the default (`agent`) profile's tools first, then what
    `all` adds.
    """
    agent, everything = _tool_names("agent"), _tool_names("all")
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    counts = {
        str(p.relative_to(REPO)): stated_tool_counts(p.read_text(encoding="utf-8")) for p in pages
    }
    assert sum(counts.values(), []), "no page states how many tools there are"
    real = {len(agent), len(everything)}
    assert {p: c for p, c in counts.items() if any(n not in real for n in c)} == {}
    listed = readme_tool_list((REPO / "README.md").read_text(encoding="utf-8"))
    assert listed[: len(agent)] == agent
    assert sorted(listed) == sorted(everything)


def test_a_wrong_tool_count_or_list_is_caught() -> None:
    """The checks above fail on a page that says 11 tools or leaves one out (synthetic text)."""
    assert stated_tool_counts("It has 11 MCP tools, or eleven tools.") == [11, 11]
    assert 11 not in {len(_tool_names("agent")), len(_tool_names("all"))}
    readme = "## Use it from a coding agent (MCP)\n\nIts 2 tools: `remember`, `recall` (reference"
    assert readme_tool_list(readme) == ["remember", "recall"]
    assert sorted(readme_tool_list(readme)) != sorted(_tool_names("all"))
