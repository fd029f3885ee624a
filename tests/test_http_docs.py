"""docs/http-api.md is a contract: it names every route and every error code."""

from __future__ import annotations

import re
from pathlib import Path

from halls import errors

DOC = (Path(__file__).resolve().parent.parent / "docs" / "http-api.md").read_text()
# Codes produced at the HTTP edge rather than by a HallsError.
EDGE_CODES = {
    "invalid_json",
    "invalid_request",
    "too_large",
    "method_not_allowed",
    "rate_limited",
    "internal",
    "unavailable",
}


def error_codes() -> set[str]:
    found, todo = set(), [errors.HallsError]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        # Only the tree of halls.errors reaches HTTP; tools (bench) subclass it too.
        if cls is not errors.HallsError and cls.__module__ == errors.__name__:
            found.add(cls.code)
    return found


def test_every_route_is_documented(server) -> None:
    """Each path in the live OpenAPI document appears in docs/http-api.md."""
    paths = server.client().get("/openapi.json").json()["paths"]
    # Not a prefix of a longer path: "/long" must appear on its own, not only in "/long/{id}".
    missing = [p for p in paths if not re.search(re.escape(p) + r"(?![\w/{-])", DOC)]
    assert missing == []


def test_every_error_code_is_documented() -> None:
    """Each error code (domain and HTTP edge) has a row in the docs' error table."""
    rows = set(re.findall(r"^\| \d{3} \| `([a-z_]+)` \|", DOC, flags=re.MULTILINE))
    assert error_codes() | EDGE_CODES <= rows, (error_codes() | EDGE_CODES) - rows
