"""The MCP adapter: tools over the Memory service, for stdio and streamable HTTP."""

from typing import TYPE_CHECKING, Any

from halls.mcp.backend import Backend, LocalBackend, RemoteBackend

if TYPE_CHECKING:
    from halls.mcp.server import build_server

__all__ = ["Backend", "LocalBackend", "RemoteBackend", "build_server"]


def __getattr__(name: str) -> Any:
    # The MCP SDK loads only for a server: a Claude Code hook, which needs
    # just RemoteBackend, starts in a fraction of a second without it.
    if name == "build_server":
        from halls.mcp.server import build_server

        return build_server
    raise AttributeError(f"module 'halls.mcp' has no attribute {name!r}")
