"""The edge of the MCP server: who may call a tool, and how its errors read.

``HallsMCP`` is FastMCP with halls' access check and error translation: a
``HallsError`` or bad arguments become a tool error result (``isError``) with
a one-line message; anything unexpected is logged and reported without
details, never as a stack trace.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import ContentBlock
from mcp.types import Tool as MCPTool
from pydantic import ValidationError
from starlette.requests import Request

from halls.errors import HallsError, InvalidInput
from halls.mcp.backend import JSON
from halls.service import Action, Grant, acting_as
from halls.storable import check_strings

log = logging.getLogger("halls.mcp")

# The tools that take a path on the server's machine.
FILE_TOOLS = frozenset({"export_store", "import_store", "backup_store"})


def _describe(err: ValidationError) -> str:
    parts = []
    for item in err.errors()[:5]:
        where = ".".join(str(p) for p in item.get("loc", ()))
        parts.append(f"{where}: {item.get('msg', 'invalid value')}" if where else item["msg"])
    return "; ".join(parts)


class HallsMCP(FastMCP):
    """FastMCP with halls' access check and error translation at the edge."""

    # What each tool needs of the caller's grant on its store (set by build_server),
    # and the values of its `action` argument that only read.
    actions: dict[str, Action]
    reads: dict[str, frozenset[str]]
    # The `action` a call that names none gets (consolidate: status, a read).
    default_actions: dict[str, str]
    default_store: str | None = None

    def _needs(self, name: str, arguments: dict[str, Any]) -> Action | None:
        """What a call of ``name`` with ``arguments`` needs of the caller's grant."""
        action = arguments.get("action", self.default_actions.get(name))
        if action in self.reads.get(name, ()):
            return "read"
        return self.actions.get(name)

    def _may_list(self, name: str, grant: Grant) -> bool:
        """Whether ``grant`` may call ``name`` at all (on a store it opens)."""
        action = self.actions.get(name)
        if action == "admin" and not grant.admin:
            return False
        if grant.read_only and action != "read" and not self.reads.get(name):
            return False
        return name not in FILE_TOOLS or grant.global_admin

    async def list_tools(self) -> list[MCPTool]:
        # A tool the caller cannot use is not listed: its schema would cost
        # the agent tokens on every turn for nothing but a refusal.
        grant = self._grant()
        return [t for t in await super().list_tools() if self._may_list(t.name, grant)]

    def _grant(self) -> Grant:
        """The grant the HTTP server resolved for this call; stdio is the local user's own."""
        context = self.get_context()
        try:
            request = context.request_context.request
        except ValueError:  # no request context: called in-process, outside a session
            request = None
        if not isinstance(request, Request):
            # stdio (`halls mcp`): the user who started it owns the data
            # directory. `--server-url` sends its token to a server that checks it.
            return Grant.everything("stdio")
        grant = request.scope.get("state", {}).get("grant")
        return grant if isinstance(grant, Grant) else Grant(id=None, stores=frozenset())

    def _check(self, name: str, arguments: dict[str, Any]) -> Grant:
        """The caller's grant, after checking it allows this call (else a tool error)."""
        grant = self._grant()
        action = self._needs(name, arguments)
        if action is None:
            return grant  # an unknown tool: the SDK answers it
        stores = arguments.get("stores")
        if stores:
            # recall and context read several stores: each must be open to the
            # token, checked before the tool runs (the service refuses `store` beside them).
            if not isinstance(stores, list) or not all(isinstance(s, str) for s in stores):
                raise ToolError(f"invalid arguments for {name}: stores must be a list of names")
            try:
                for s in stores:
                    grant.check(s, action)
            except HallsError as exc:
                raise ToolError(exc.message) from None
            return grant
        store = arguments.get("store") or self.default_store
        if store is not None and not isinstance(store, str):
            raise ToolError(f"invalid arguments for {name}: store must be a string")
        if store is None:
            if grant.stores is not None:
                raise ToolError("this token opens only some stores: name one with `store`")
            return grant
        try:
            grant.check(store, action)
        except HallsError as exc:
            raise ToolError(exc.message) from None
        if name in FILE_TOOLS and not grant.global_admin:
            # These read or write files on the server's own machine: only its
            # operator may, not the admin of one store (who has POST /export,
            # /import and /backup, which stream to and from the caller).
            raise ToolError(
                f"{name} uses files on the machine halls runs on: it needs an admin token "
                "of every store; use POST /export, /import or /backup instead"
            )
        return grant

    async def call_tool(
        self, name: str, arguments: dict[str, Any]
    ) -> Sequence[ContentBlock] | JSON:
        try:
            # A lone surrogate (a "\udfff" escape) anywhere in the arguments:
            # no store or answer can encode it.
            check_strings(arguments, "")
        except InvalidInput as exc:
            raise ToolError(f"invalid arguments for {name}: {exc.message}") from None
        grant = self._check(name, arguments)
        try:
            with acting_as(grant.id, admin=grant.admin):
                return await super().call_tool(name, arguments)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                message = f"invalid arguments for {name}: {_describe(cause)}"
            elif isinstance(cause, HallsError):
                message = cause.message
            elif cause is not None:
                log.error("tool %s failed", name, exc_info=cause)
                message = "internal error; see the halls log"
            else:
                message = str(exc)
            raise ToolError(message) from None
