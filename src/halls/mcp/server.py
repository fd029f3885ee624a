"""The MCP server: one FastMCP whose tools are thin calls into a ``Backend``.

This module composes: the tools come from the groups in ``halls.mcp.tools``,
the access check and the error translation from ``halls.mcp.edge``. Tool
descriptions are product copy for a model: each says what the tool is for
and *when* to call it.
"""

from __future__ import annotations

import inspect
from typing import Any, Literal

from halls import __version__
from halls.mcp.backend import Backend
from halls.mcp.edge import HallsMCP
from halls.mcp.tools import admin, archive, forget, loops, recall, records, scopes, writes
from halls.mcp.tools.base import Tools

INSTRUCTIONS = """\
halls is your memory across sessions. Call `context` once when a session \
starts. Call `recall` before answering anything that may depend on earlier \
sessions: preferences, decisions, names, project facts. Call `remember` as \
soon as you learn something worth keeping, and `loops` (action add) when \
anyone promises a follow-up. Before the conversation ends or is compacted, \
call `submit_brief`."""

GROUPS = (writes, loops, records, recall, forget, admin, archive, scopes)

# The tools an agent needs on every turn, in the order a client lists them.
# Every listed tool's schema sits in the agent's context on every turn, so
# this profile stays small (tests/test_mcp_profiles.py holds it to 2,000
# tokens).
AGENT = ("remember", "recall", "context", "loops", "memory", "flag_forget", "submit_brief")
# The `all` profile adds the store's upkeep and the admin's tools, after them.
ADMIN = (
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
)
PROFILES: dict[str, tuple[str, ...]] = {"agent": AGENT, "all": AGENT + ADMIN}
Profile = Literal["agent", "all"]


def _prose(doc: str) -> str:
    """A docstring as one paragraph: indentation and line breaks cost a model tokens."""
    return " ".join(inspect.cleandoc(doc).split())


def _lean(schema: Any) -> Any:
    """A tool's input schema without what tells a model nothing, for fewer tokens.

    Pydantic titles each property after its own name, types an enum of
    strings as a string, and spells an optional argument as ``anyOf: [type,
    null]`` with ``default: null``; an argument left out means the same.
    Only the schema listed to clients changes: the SDK still validates calls
    against the function's own signature.
    """
    if isinstance(schema, list):
        return [_lean(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _lean(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))}
    # An enum of strings says its type already.
    enum = out.get("enum")
    if (
        out.get("type") == "string"
        and isinstance(enum, list)
        and all(isinstance(v, str) for v in enum)
    ):
        del out["type"]
    branches = out.get("anyOf")
    if isinstance(branches, list) and "default" in out and out["default"] is None:
        kept = [b for b in branches if b != {"type": "null"}]
        del out["default"]
        if len(kept) == 1:
            del out["anyOf"]
            out = {**kept[0], **out}
        else:
            out["anyOf"] = kept
    return out


def build_server(
    backend: Backend,
    *,
    default_store: str | None = None,
    host: str = "127.0.0.1",
    path: str = "/mcp",
    tools: Profile = "agent",
) -> HallsMCP:
    """The halls MCP server over ``backend``.

    ``default_store`` is used when a call names no store (``None``: the
    backend's own default). ``tools`` is the profile (``mcp.tools``): which
    tools the server has at all; each caller is then listed only those its
    grant allows. ``host`` decides the DNS-rebinding protection of
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
    mcp.reads = {}
    mcp.default_actions = {}
    mcp.default_store = default_store

    declared = Tools(backend, default_store)
    for group in GROUPS:
        group.register(declared)
    if sorted(declared.declared) != sorted(PROFILES["all"]):
        raise RuntimeError(f"AGENT + ADMIN must name each tool once: {sorted(declared.declared)}")
    for name in PROFILES[tools]:
        tool = declared.declared[name]
        mcp.add_tool(
            tool.fn, description=_prose(tool.fn.__doc__ or ""), annotations=tool.annotations
        )
        listed = mcp._tool_manager.get_tool(name)
        if listed is not None:
            listed.parameters = _lean(listed.parameters)
        mcp.actions[name] = tool.action
        mcp.reads[name] = tool.reads
        action = inspect.signature(tool.fn).parameters.get("action")
        if action is not None and isinstance(action.default, str):
            mcp.default_actions[name] = action.default
    return mcp
