"""Times in requests are taken exactly as docs/http-api.md says, or refused.

Unix seconds as text are the digits of a JSON number; anything else that
float() would read ("+5", " 5", "-0", "0005", other scripts' digits) is not a
time, and neither is the empty string. Numbers stop at the OpenAPI maximum.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import ClientSession

from http_helpers import assert_error, created, post, snapshot
from mcp_scenario import over_http

# What float() reads but the docs refuse (422), and what is no time at all (400).
NUMERIC_LOOKALIKES = ["+5", " 5", "5 ", "5\n", "-0", "0005", "\u0665", "1e9", "1_000", "nan"]
NOT_TIMES = ["", " 2024-05-06T07:08:09Z", "\u0662\u0660\u0662\u0664-05-06"]


def _writes(value: Any) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("/short", {"content": "x", "occurred_at": value}),
        ("/short/batch", {"items": [{"content": "x"}, {"content": "y", "occurred_at": value}]}),
        ("/journal", {"content": "x", "occurred_at": value}),
        ("/journal/batch", {"items": [{"content": "x", "occurred_at": value}]}),
        ("/near", {"intent": "x", "expires_at": value}),
        ("/near", {"intent": "x", "trigger_type": "time", "trigger_value": value}),
    ]


@pytest.fixture(scope="module")
def store(server: Any) -> str:
    name = "times-refused"
    with server.client() as c:
        created(c, "/short", name, {"content": "a memory that stays alone"})
    return name


@pytest.mark.parametrize("value", NUMERIC_LOOKALIKES + NOT_TIMES)
def test_a_time_not_in_a_documented_form_is_refused_and_stores_nothing(
    server: Any, store: str, value: str
) -> None:
    """Every write and search refuses it with a 4xx naming the field; nothing is stored."""
    c = server.client()
    before = snapshot(c, store)
    expected = (422, "invalid_request") if value in NUMERIC_LOOKALIKES else (400, "invalid_input")
    for path, body in _writes(value):
        if path == "/near" and "trigger_value" in body and value in NUMERIC_LOOKALIKES:
            # A trigger value is free text for other triggers: parse_time decides (400).
            err = assert_error(post(c, path, store, body), 400, "invalid_input")
        else:
            err = assert_error(post(c, path, store, body), *expected)
        field = "trigger_value" if "trigger_value" in body else None
        field = field or ("expires_at" if "expires_at" in body else "occurred_at")
        assert field in err["message"], (path, err)
    for field in ("since", "until"):
        err = assert_error(post(c, "/search", store, {"query": "x", field: value}), *expected)
        assert field in err["message"], err
    assert snapshot(c, store) == before


def test_unix_seconds_above_the_schema_maximum_are_refused(server: Any, store: str) -> None:
    """253402300799 (the OpenAPI maximum) is taken; a fraction more is 400 out of range."""
    c = server.client()
    before = snapshot(c, store)
    for field in ("since", "until"):
        ok = post(c, "/search", store, {"query": "memory", field: 253402300799})
        assert ok.status_code == 200, ok.text
        err = assert_error(
            post(c, "/search", store, {"query": "memory", field: 253402300799.00003}),
            400,
            "invalid_input",
        )
        assert field in err["message"] and "range" in err["message"], err
    err = assert_error(
        post(c, "/short", store, {"content": "x", "occurred_at": 253402300799.5}),
        400,
        "invalid_input",
    )
    assert snapshot(c, store) == before


@pytest.mark.parametrize("value", [0, "0", 0.0, -0.0, "0.0"])
def test_the_epoch_is_a_time_not_now(server: Any, store_name: str, value: Any) -> None:
    """occurred_at 0 (as number or digits) is 1970-01-01, not the time of the write."""
    c = server.client()
    for path, body in (
        ("/short", {"content": "at the epoch", "occurred_at": value}),
        ("/journal", {"content": "at the epoch", "occurred_at": value}),
    ):
        got = created(c, path, store_name, body)
        assert got["occurred_at"] == "1970-01-01T00:00:00Z", (path, got)


def test_documented_forms_are_taken(server: Any, store_name: str) -> None:
    """Digits (with a fraction), ISO-8601 with Z, offset or none: as the docs list them."""
    c = server.client()
    for value, iso in (
        ("5", "1970-01-01T00:00:05Z"),
        ("5.5", "1970-01-01T00:00:05.500000Z"),
        ("12345678901", "2361-03-21T19:15:01Z"),
        ("2024-05-06T07:08:09Z", "2024-05-06T07:08:09Z"),
        ("2024-05-06T09:08:09+02:00", "2024-05-06T07:08:09Z"),
        ("2024-05-06", "2024-05-06T00:00:00Z"),
    ):
        got = created(c, "/short", store_name, {"content": "when", "occurred_at": value})
        assert got["occurred_at"] == iso, value


def test_mcp_journal_refuses_the_same_times(server: Any, store: str) -> None:
    """Over MCP (the official client), journal with any refused time is a tool error."""

    async def work(session: ClientSession) -> list[str]:
        texts = []
        for value in [*NUMERIC_LOOKALIKES, *NOT_TIMES]:
            args = {"events": [{"content": "x", "occurred_at": value}], "store": store}
            result = await session.call_tool("journal", args)
            assert result.isError, (value, result)
            texts.append(result.content[0].text)  # type: ignore[union-attr]
        return texts

    c = server.client()
    before = snapshot(c, store)
    texts = asyncio.run(over_http(f"{server.url}/mcp", work))
    assert all("occurred_at must be ISO-8601 or unix seconds" in t for t in texts), texts
    assert snapshot(c, store) == before
