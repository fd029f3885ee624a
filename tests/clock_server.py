"""A live halls server in this process, around a Memory with an injected clock.

``halls serve`` in a subprocess cannot be handed a fake clock; the
consolidator's tests need one (days pass between writes, TTLs run out), so
they run the real app under uvicorn on a free port in a background thread.
Everything else is real: SQLite files, the embedding model, HTTP.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import uvicorn

from halls.http import create_app
from halls.service import Memory

DAY = 86400.0


class FakeClock:
    """Unix seconds that move only when a test says so."""

    def __init__(self, start: float = 1_780_000_000.0) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class InProcessServer:
    url: str
    client: httpx.Client


@contextmanager
def serve(memory: Memory, *, mcp: bool = False) -> Iterator[InProcessServer]:
    """Serve ``create_app(memory)`` until the block ends; the app closes the Memory.

    ``mcp``: with the MCP server (the ``all`` profile) at ``/mcp``, as ``halls serve`` mounts it.
    """
    port = free_port()
    tools = None
    if mcp:
        from halls.mcp import LocalBackend, build_server

        tools = build_server(LocalBackend(memory), tools="all")
    config = uvicorn.Config(
        create_app(memory, mcp=tools), host="127.0.0.1", port=port, log_level="warning", ws="none"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the in-process server did not start")
        time.sleep(0.02)
    url = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=url, timeout=120) as client:
        try:
            yield InProcessServer(url, client)
        finally:
            server.should_exit = True
            thread.join(60)
