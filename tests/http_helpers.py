"""Checks shared by the HTTP API tests: error shape, leak checks, store snapshots."""

from __future__ import annotations

import re
from typing import Any

import httpx

# What a leaked stack trace or server path looks like in a response body.
LEAK = re.compile(
    r"Traceback|File \"|site-packages|\.py\b|"
    r"/(?:tmp|work|home|root|usr|var|opt|srv|etc|proc|private)(?:/|\b)"
)

ERROR_KEYS = {"code", "message"}


def assert_clean(text: str) -> None:
    """The body carries neither a stack trace nor a file path."""
    found = LEAK.search(text)
    assert found is None, f"response leaks {found.group(0)!r}: {text[:300]}"


def assert_error(r: httpx.Response, status: int, code: str) -> dict[str, str]:
    """The response is ``{"error": {"code", "message"}}`` with this status and code."""
    assert r.status_code == status, f"{r.status_code} != {status}: {r.text[:300]}"
    assert r.headers["content-type"].startswith("application/json"), r.headers["content-type"]
    body = r.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == ERROR_KEYS, body
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"].strip(), body
    assert_clean(r.text)
    return body["error"]  # type: ignore[no-any-return]


def counts(c: httpx.Client, store: str) -> dict[str, int]:
    r = c.get("/stats", params={"store": store})
    assert r.status_code == 200, r.text
    return r.json()["counts"]  # type: ignore[no-any-return]


def snapshot(c: httpx.Client, store: str) -> dict[str, Any]:
    """Everything a bad request could have changed in a store, as plain data."""
    p = {"store": store, "limit": 1000}
    out: dict[str, Any] = {"counts": counts(c, store), "stores": c.get("/stores").json()}
    for path in ("/short", "/near", "/journal", "/long"):
        r = c.get(path, params=p)
        assert r.status_code == 200, r.text
        out[path] = r.json()
    return out


def post(c: httpx.Client, path: str, store: str, body: Any) -> httpx.Response:
    return c.post(path, params={"store": store}, json=body)


def created(c: httpx.Client, path: str, store: str, body: Any) -> dict[str, Any]:
    """POST that must answer 201; returns the JSON body."""
    r = post(c, path, store, body)
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def search(c: httpx.Client, store: str, **body: Any) -> list[dict[str, Any]]:
    r = post(c, "/search", store, body)
    assert r.status_code == 200, r.text
    return r.json()["results"]  # type: ignore[no-any-return]
