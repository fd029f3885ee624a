"""The MCP adapter: tools over the Memory service, for stdio and streamable HTTP."""

from halls.mcp.backend import Backend, LocalBackend, RemoteBackend
from halls.mcp.server import build_server

__all__ = ["Backend", "LocalBackend", "RemoteBackend", "build_server"]
