"""ASGI middleware: bearer auth and the request body size limit.

Both are plain ASGI so that they also guard what is mounted beside the
routes (the MCP endpoint, the viewer's API calls).
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from halls.http.errors import error_body
from halls.service import Grant, Tokens, acting_as

# Reachable without a token: liveness probes must not need a secret, and the
# viewer page holds no data (every API call it makes sends the user's token).
OPEN_PATHS = frozenset({"/healthz", "/viewer"})


async def _send_error(send: Send, status: int, code: str, message: str, **headers: str) -> None:
    body = json.dumps(error_body(code, message)).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def presented_token(scope: Scope) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, else None."""
    given = dict(scope["headers"]).get(b"authorization", b"")
    scheme, _, token = given.partition(b" ")
    if scheme.lower() != b"bearer" or not token:
        return None
    return token.decode("latin-1")


def set_grant(scope: Scope, grant: Grant) -> None:
    # scope["state"] is what Request.state reads: routes and MCP tools find it there.
    scope.setdefault("state", {})["grant"] = grant


class BearerAuth:
    """Resolve the request's bearer token to its ``Grant`` (401 when there is none).

    What the grant allows is checked where the store is known: the routes'
    store dependencies and the MCP tools (``Grant.check``).
    """

    def __init__(self, app: ASGIApp, tokens: Tokens) -> None:
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS or scope["method"] == "OPTIONS":
            await self.app(scope, receive, send)
            return
        grant = self.tokens.resolve(presented_token(scope))
        if grant is None:
            await _send_error(
                send,
                401,
                "unauthorized",
                "a valid bearer token is required",
                **{"WWW-Authenticate": "Bearer"},
            )
            return
        set_grant(scope, grant)
        # The audit log records the token's id (never the token) for what follows.
        with acting_as(grant.id, admin=grant.admin):
            await self.app(scope, receive, send)


class BodyLimit:
    """Refuse bodies over ``max_bytes`` with a 413 before any handler runs.

    The body is read up front (it is bounded by the limit) and replayed, so
    no partial request ever reaches the service: an oversize batch changes
    nothing.
    """

    def __init__(
        self, app: ASGIApp, max_bytes: int, streamed: dict[str, int] | None = None
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        # Paths whose handler streams the body to disk under its own limit
        # (an archive upload): passed through unbuffered, checked only on
        # the declared length here.
        self.streamed = streamed or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        own = self.streamed.get(scope["path"])
        if own is not None:
            if declared is not None and declared.isdigit() and int(declared) > own:
                await self._refuse(send, own)
                return
            await self.app(scope, receive, send)
            return
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send, limit: int | None = None) -> None:
        await _send_error(
            send,
            413,
            "too_large",
            f"the request body is larger than {limit or self.max_bytes} bytes",
        )
