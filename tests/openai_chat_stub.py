"""A local server speaking the OpenAI chat-completions protocol, scripted by a test.

The LLM engine is the one place a user brings their own remote: this stub
stands in for it. Each request pops the next scripted reply: a string is
returned as the assistant message's content (good JSON or broken JSON), an
int is answered as that HTTP error status. ``route`` (when set) sees each
request body first and may answer it itself (a reply, or None to take the
next scripted one): a test routes one kind of prompt apart from the others.
``gate`` (when set) holds every request until the test opens it, to keep a
run in progress.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ChatStub:
    def __init__(self) -> None:
        self.replies: deque[str | int] = deque()
        self.default: str | int = 500
        self.requests: list[dict[str, Any]] = []
        self.gate: threading.Event | None = None
        self.route: Callable[[dict[str, Any]], str | int | None] | None = None
        self.arrived = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                stub.arrived.set()
                if stub.gate is not None:
                    stub.gate.wait(60)
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": "not found"}})
                reply = stub.route(body) if stub.route is not None else None
                if reply is None:
                    reply = stub.replies.popleft() if stub.replies else stub.default
                if isinstance(reply, int):
                    return self._send(reply, {"error": {"message": "scripted failure"}})
                return self._send(
                    200,
                    {
                        "id": "chatcmpl-stub",
                        "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": reply},
                            }
                        ],
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ChatStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.gate is not None:
            self.gate.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
