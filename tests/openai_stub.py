"""A local stand-in for a user's OpenAI-compatible endpoint, for tests.

It is the only fake the suite allows: the remote service a user brings. It
speaks the real wire protocol over real HTTP on a loopback port, in a thread:

    with OpenAIStub(dim=16) as stub:
        settings = EmbedderSettings(kind="openai", base_url=stub.base_url, model="stub")

``POST /v1/embeddings`` answers ``{"data": [{"index": i, "embedding": [...]}]}``
with deterministic vectors derived from a hash of each text (same text, same
vector), in reverse order so that clients must sort by ``index``. Every
request is kept in ``requests`` for assertions. Other endpoints (chat
completions, ...) can be added as methods named ``post_<path>``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


@dataclass(frozen=True)
class StubRequest:
    path: str
    headers: dict[str, str]
    body: Any


def stub_vector(text: str, dim: int) -> list[float]:
    """The vector the stub returns for ``text`` (not normalised, as real APIs may do)."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng(seed).normal(size=dim).astype(np.float32).tolist()


class OpenAIStub:
    def __init__(self, dim: int = 16) -> None:
        self.dim = dim
        self.requests: list[StubRequest] = []
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    self._send(400, {"error": {"message": "bad json"}})
                    return
                with stub._lock:
                    stub.requests.append(StubRequest(self.path, dict(self.headers), body))
                route = getattr(stub, "post_" + self.path.strip("/").replace("/", "_"), None)
                if route is None:
                    self._send(404, {"error": {"message": "not found"}})
                    return
                status, payload = route(body)
                self._send(status, payload)

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # keep test output clean

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> OpenAIStub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def embedding_batches(self) -> list[list[str]]:
        """The ``input`` lists of every embeddings request, in arrival order."""
        with self._lock:
            return [r.body["input"] for r in self.requests if r.path == "/v1/embeddings"]

    # -- routes --

    def post_v1_embeddings(self, body: Any) -> tuple[int, Any]:
        texts = body.get("input") if isinstance(body, dict) else None
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return 400, {"error": {"message": "input must be a string or a list of strings"}}
        data = [
            {"object": "embedding", "index": i, "embedding": stub_vector(t, self.dim)}
            for i, t in enumerate(texts)
        ]
        return 200, {
            "object": "list",
            "data": list(reversed(data)),
            "model": body.get("model"),
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }
