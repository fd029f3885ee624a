"""Translate halls errors (and framework errors) into one JSON error shape.

    {"error": {"code": "...", "message": "..."}}

Nothing here ever echoes a stack trace or a file path: unexpected errors
are logged server-side and answered with a generic 500.
"""

from __future__ import annotations

import errno
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from halls import errors as e
from halls.http.schemas import INVALID_TEXT

log = logging.getLogger("halls.http")

STATUS: list[tuple[type[e.HallsError], int]] = [
    (e.DamagedRecord, 500),
    (e.InvalidInput, 400),
    (e.Forbidden, 403),
    (e.NotFound, 404),
    (e.Conflict, 409),
    (e.EmbeddingFailed, 503),
    (e.ConsolidationFailed, 503),
    (e.StoreUnavailable, 503),
]


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorOut(BaseModel):
    error: ErrorDetail


# Every answer an API route may give besides its own success, for the
# OpenAPI document: a client (or a fuzzer) can tell a refusal from a bug.
RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": description}
    for status, description in (
        (400, "A value the schema allows but halls refuses, or a body that is not JSON"),
        (401, "A bearer token is configured and this request has no valid one"),
        (403, "The token does not grant this (store, write or admin)"),
        (404, "No such record, store or route"),
        (405, "The route does not answer this method"),
        (409, "The request clashes with the current state"),
        (413, "The body is over server.max_body_bytes"),
        (422, "The body or query does not match the schema"),
        (429, "Over server.rate_limit_per_minute; see Retry-After"),
        (503, "The embedder, consolidator or storage is unavailable; see Retry-After"),
    )
}


RETRY_AFTER_SECONDS = 1
UNREADABLE_BODY = (
    "the request body is not valid JSON (or not readable as JSON: invalid UTF-8, "
    "nested too deep, or a number too long)"
)
EXHAUSTED = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOSPC})


def error_body(code: str, message: str) -> dict[str, dict[str, str]]:
    return {"error": {"code": code, "message": message}}


def error_response(status: int, code: str, message: str, **headers: str) -> JSONResponse:
    return JSONResponse(error_body(code, message), status_code=status, headers=headers or None)


def _describe(err: dict) -> str:
    where = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path"))
    msg = str(err.get("msg", "invalid value"))
    return f"{where}: {msg}" if where else msg


def allowed_methods(request: Request) -> str:
    """The methods the documented routes on the request's path answer, as an Allow value."""
    path = request.url.path
    routes = [
        r
        for r in request.app.router.routes
        if isinstance(r, APIRoute) and r.include_in_schema and r.path_regex.match(path)
    ]
    # A literal path ("/short/batch") is its own resource, not an id of "/short/{id}".
    literal = [r for r in routes if r.path == path]
    methods: set[str] = set()
    for route in literal or routes:
        methods |= (route.methods or set()) - {"HEAD"}
    return ", ".join(sorted(methods))


def install(app: FastAPI) -> None:
    @app.exception_handler(e.HallsError)
    async def _halls(_: Request, exc: e.HallsError) -> JSONResponse:
        status = next((s for t, s in STATUS if isinstance(exc, t)), 500)
        # Unavailable is temporary (a busy store, a full descriptor table, a
        # remote down): say when to come back rather than leave it a guess.
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if status == 503 else {}
        return error_response(status, exc.code, exc.message, **headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errs = exc.errors()
        if any(err.get("type") == "json_invalid" for err in errs):
            return error_response(400, "invalid_json", "the request body is not valid JSON")
        text = [err for err in errs if err.get("type") == INVALID_TEXT]
        if text:
            # What the service refuses with invalid_input, refused the same way here.
            return error_response(400, "invalid_input", str(text[0].get("msg")))
        message = "; ".join(_describe(err) for err in errs[:5])
        return error_response(422, "invalid_request", message)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        codes = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}
        message = exc.detail if isinstance(exc.detail, str) else "request failed"
        if exc.status_code == 400:
            # FastAPI's answer to a body json.loads could not read at all
            # (invalid UTF-8, nesting past the recursion limit, an integer
            # over 4300 digits): to a client, a body that is not JSON.
            return error_response(400, "invalid_json", UNREADABLE_BODY)
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            # RFC 9110: a 405 names what the resource does answer, i.e. every
            # documented route on this path (Starlette names one route's only).
            headers["Allow"] = allowed_methods(request)
        return error_response(
            exc.status_code, codes.get(exc.status_code, "http_error"), message, **headers
        )

    @app.exception_handler(Exception)
    async def _last_resort(request: Request, exc: Exception) -> JSONResponse:
        # Reached only from outside CatchAll (a middleware's own bug).
        # Starlette raises the error again after this answer, and the server
        # then drops the connection: say so, so the client does not reuse it.
        response = unexpected(request.method, request.url.path, exc)
        response.headers["Connection"] = "close"
        return response


def unexpected(method: str, path: str, exc: BaseException) -> JSONResponse:
    """The answer to an error nothing translated: logged here, never echoed."""
    if isinstance(exc, MemoryError) or (isinstance(exc, OSError) and exc.errno in EXHAUSTED):
        # Out of descriptors, memory or disk somewhere no store translated
        # it: a resource that comes back, so 503 and when to retry.
        log.warning("resource exhausted on %s %s: %s", method, path, exc)
        return error_response(
            503,
            "unavailable",
            "the server is out of a resource (files, memory, disk); try again",
            **{"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    log.error("unhandled error on %s %s", method, path, exc_info=exc)
    return error_response(500, "internal", "internal error; see the server log")


class CatchAll:
    """Answer an unexpected error here, inside the app, and keep the connection.

    An ``Exception`` handler runs in Starlette's outermost middleware, which
    raises the error again after answering; uvicorn then closes the
    keep-alive connection without ``Connection: close``, and the client's
    next request on it fails (ECONNRESET). Caught here, it ends with the
    answer. An error after the answer has begun cannot be answered, and is
    left to the server.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:
            if started:
                raise
            await unexpected(scope["method"], scope["path"], exc)(scope, receive, send)
