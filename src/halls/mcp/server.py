"""The MCP server: one FastMCP whose tools are thin calls into a ``Backend``.

This module composes: the tools come from the groups in ``halls.mcp.tools``,
the access check and the error translation from ``halls.mcp.edge``. Tool
descriptions are product copy for a model: each says what the tool is for
and *when* to call it.
"""

from __future__ import annotations

import inspect

from halls import __version__
from halls.mcp.backend import Backend
from halls.mcp.edge import HallsMCP
from halls.mcp.tools import admin, archive, forget, loops, recall, writes
from halls.mcp.tools.base import Tools

INSTRUCTIONS = """\
halls is your memory across sessions. Call `context` once when a session \
starts. Call `recall` before answering anything that may depend on earlier \
sessions: preferences, decisions, names, project facts. Call `remember` as \
soon as you learn something worth keeping, and `remember_for_later` when \
anyone promises a follow-up. Before the conversation ends or is compacted, \
call `submit_brief`."""

GROUPS = (writes, loops, recall, forget, admin, archive)

# The order a client lists the tools in: what an agent calls in every session
# first, the store's upkeep and the admin's tools last.
ORDER = (
    "remember",
    "remember_for_later",
    "complete_intent",
    "cancel_intent",
    "recall",
    "context",
    "journal",
    "submit_brief",
    "flag_forget",
    "consolidate",
    "list_open_loops",
    "stats",
    "forget_about",
    "delete_memory",
    "delete_store",
    "audit",
    "export_store",
    "import_store",
    "backup_store",
)


def _prose(doc: str) -> str:
    """A docstring as one paragraph: indentation and line breaks cost a model tokens."""
    return " ".join(inspect.cleandoc(doc).split())


def build_server(
    backend: Backend,
    *,
    default_store: str | None = None,
    host: str = "127.0.0.1",
    path: str = "/mcp",
) -> HallsMCP:
    """The halls MCP server over ``backend``.

    ``default_store`` is used when a call names no store (``None``: the
    backend's own default). ``host`` decides the DNS-rebinding protection of
    the HTTP transport: on for loopback hosts, as the SDK does.
    """
    mcp = HallsMCP(
        name="halls",
        instructions=INSTRUCTIONS,
        host=host,
        streamable_http_path=path,
        # Stateless: every request stands alone, so any halls process behind
        # a load balancer can answer, and no session state leaks memory.
        stateless_http=True,
        json_response=True,
        log_level="WARNING",
    )
    # FastMCP has no version argument; without this, clients see the SDK's version.
    mcp._mcp_server.version = __version__
    mcp.actions = {}
    mcp.default_store = default_store

    tools = Tools(backend, default_store)
    for group in GROUPS:
        group.register(tools)
    if sorted(tools.declared) != sorted(ORDER):
        raise RuntimeError(f"ORDER must name each tool once: {sorted(tools.declared)}")
    for name in ORDER:
        tool = tools.declared[name]
        mcp.add_tool(
            tool.fn, description=_prose(tool.fn.__doc__ or ""), annotations=tool.annotations
        )
        mcp.actions[name] = tool.action
    return mcp
