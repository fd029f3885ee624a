"""The journal over the live HTTP API: append, batch, list, and secret redaction."""

from __future__ import annotations

from datetime import datetime

import pytest

from conftest import LiveServer
from http_helpers import assert_error, counts, created, post, snapshot


@pytest.fixture(scope="session")
def server(api_server: LiveServer) -> LiveServer:
    """These HTTP API tests run on both backends (conftest's ``api_server``)."""
    return api_server


JOURNAL_KEYS = {
    "id", "tier", "content", "role", "session_id", "redactions", "visibility", "topic", "metadata",
    "created_at", "occurred_at", "scope",
}  # fmt: skip

# Look-alike credentials (none of them is real) in the shapes users paste.
OPENAI_KEY = "sk-proj-Q7vX2mN9pL4kR8tY1wZ6bC3dF5gH0jKs"
AWS_KEY_ID = "AKIAZ7QX4M2N9PL3KR8T"
BEARER = "mF9xQ2vL7pK3nR8tW1yZ"
PEM_BODY = "MIIEowIBAAKCAQEAq9Zx7Lm2Pn4Qr8Ts1Uv3Wx5Yz0AbCdEfGhIjKlMnOpQrStUv"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
PASSWORD = "hunter2"


def test_post_journal_returns_the_stored_event(server, store_name) -> None:
    """POST /journal answers 201 with the event; GET /journal returns it unchanged."""
    c = server.client()
    body = created(
        c, "/journal", store_name,
        {"content": "user: what's on my calendar today?", "role": "user", "session_id": "sess-1",
         "occurred_at": 1714000000, "metadata": {"turn": 3}},
    )  # fmt: skip
    assert set(body) == JOURNAL_KEYS
    assert body["id"].startswith("j_") and body["tier"] == "journal"
    assert body["content"] == "user: what's on my calendar today?"
    assert (body["role"], body["session_id"], body["redactions"]) == ("user", "sess-1", 0)
    assert body["metadata"] == {"turn": 3}
    assert datetime.fromisoformat(body["occurred_at"].replace("Z", "+00:00")).timestamp() == (
        1714000000
    )
    listed = c.get("/journal", params={"store": store_name}).json()
    assert listed == [body]


def test_journal_batch_ids_in_order_and_newest_first_listing(server, store_name) -> None:
    """POST /journal/batch answers 201 {ids} in input order; GET /journal lists newest first."""
    c = server.client()
    items = [{"content": f"turn {i}", "role": "user" if i % 2 else "assistant"} for i in range(6)]
    ids = created(c, "/journal/batch", store_name, {"items": items})["ids"]
    assert len(ids) == 6 and ids == sorted(ids)
    listed = c.get("/journal", params={"store": store_name}).json()
    assert [e["id"] for e in listed] == list(reversed(ids))
    assert [e["content"] for e in listed] == [f"turn {i}" for i in reversed(range(6))]
    page = c.get("/journal", params={"store": store_name, "limit": 2, "offset": 1}).json()
    assert [e["id"] for e in page] == [ids[4], ids[3]]
    assert counts(c, store_name)["journal"] == 6


def test_journal_batch_is_all_or_nothing(server, store_name) -> None:
    """A journal batch with one bad item among good ones stores none of them."""
    c = server.client()
    created(c, "/journal", store_name, {"content": "already here"})
    before = snapshot(c, store_name)
    good = [{"content": f"good event {i}"} for i in range(5)]
    for bad, status, code in (
        ({"content": "  \n "}, 400, "invalid_input"),
        ({"content": "x", "occurred_at": "last tuesday"}, 400, "invalid_input"),
        ({"content": ""}, 422, "invalid_request"),
        ({"content": "x", "speaker": "me"}, 422, "invalid_request"),
    ):
        r = post(c, "/journal/batch", store_name, {"items": [*good[:3], bad, *good[3:]]})
        assert_error(r, status, code)
    assert_error(post(c, "/journal/batch", store_name, {"items": [good[0]] * 1001}), 422,
                 "invalid_request")  # fmt: skip
    assert snapshot(c, store_name) == before


def test_secrets_are_redacted_before_storage(server, store_name) -> None:
    """Keys, bearer tokens, private keys and password=... never reach the store's files."""
    c = server.client()
    cases = {
        f"my key is {OPENAI_KEY} use it": "[REDACTED:api_key]",
        f"export AWS_ACCESS_KEY_ID={AWS_KEY_ID}": "[REDACTED:api_key]",
        f"curl -H 'Authorization: Bearer {BEARER}' localhost": "[REDACTED:bearer_token]",
        f"here is the deploy key:\n{PEM}\nthanks": "[REDACTED:private_key]",
        f"db login password={PASSWORD} ok": "password=[REDACTED:password]",
    }
    for text, marker in cases.items():
        body = created(c, "/journal", store_name, {"content": text, "role": "user"})
        assert marker in body["content"], body["content"]
        assert body["redactions"] == 1, body
    ordinary = "Lunch with Priya at noon; she recommended the book about bears and passwords."
    plain = created(c, "/journal", store_name, {"content": ordinary})
    assert plain["content"] == ordinary and plain["redactions"] == 0

    listed = c.get("/journal", params={"store": store_name}).json()
    assert listed[0]["content"] == ordinary
    stored = "\n".join(e["content"] for e in listed)
    secrets = (OPENAI_KEY, AWS_KEY_ID, BEARER, PEM_BODY, PASSWORD)
    for secret in secrets:
        assert secret not in stored
    assert stored.count("[REDACTED:") == 5
    assert "my key is [REDACTED:api_key] use it" in stored, "the text around a secret is kept"

    # Not only hidden from the API: the bytes never reached the store (its
    # files, or its rows and tables' files on PostgreSQL).
    with server.store(store_name) as handle:
        assert handle.holds(ordinary)
        for secret in secrets:
            assert not handle.holds(secret)


def test_journal_batch_redacts_every_item(server, store_name) -> None:
    """Redaction applies to each item of /journal/batch too."""
    c = server.client()
    items = [{"content": f"token: {BEARER}"}, {"content": "nothing secret"},
             {"content": f"key {OPENAI_KEY}"}]  # fmt: skip
    created(c, "/journal/batch", store_name, {"items": items})
    listed = c.get("/journal", params={"store": store_name}).json()
    assert [e["redactions"] for e in listed] == [1, 0, 1]
    assert listed[1]["content"] == "nothing secret"
    assert all(BEARER not in e["content"] and OPENAI_KEY not in e["content"] for e in listed)
