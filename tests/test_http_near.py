"""Near-term open loops over the live HTTP API: create, list by status, complete, delete."""

from __future__ import annotations

from datetime import datetime

import pytest

from conftest import LiveServer
from http_helpers import assert_error, counts, created, post, search, snapshot


@pytest.fixture(scope="session")
def server(api_server: LiveServer) -> LiveServer:
    """These HTTP API tests run on both backends (conftest's ``api_server``)."""
    return api_server


LOOP_KEYS = {
    "id", "tier", "intent", "topic", "trigger_type", "trigger_value", "expires_at",
    "status", "closed_at", "importance", "scope", "metadata", "created_at", "occurred_at",
    "redactions",
}  # fmt: skip


def ts(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_post_near_returns_an_open_loop(server, store_name) -> None:
    """POST /near answers 201 with the loop: defaults manual/open, metadata verbatim."""
    c = server.client()
    body = created(
        c, "/near", store_name,
        {"intent": "ask Sam how the move went", "topic": "friends", "metadata": {"k": [1, "v"]}},
    )  # fmt: skip
    assert set(body) == LOOP_KEYS
    assert body["id"].startswith("n_") and body["tier"] == "near"
    assert body["intent"] == "ask Sam how the move went" and body["topic"] == "friends"
    assert (body["trigger_type"], body["trigger_value"]) == ("manual", None)
    assert (body["status"], body["closed_at"], body["expires_at"]) == ("open", None, None)
    assert body["metadata"] == {"k": [1, "v"]}
    r = c.get(f"/near/{body['id']}", params={"store": store_name})
    assert r.status_code == 200 and r.json() == body


def test_time_trigger_and_expiry_are_normalised(server, store_name) -> None:
    """A time trigger's value and expires_at are stored as UTC times (ISO or unix input)."""
    c = server.client()
    due = ts("2031-02-03T04:05:06+00:00")
    body = created(
        c, "/near", store_name,
        {"intent": "renew the passport", "trigger_type": "time",
         "trigger_value": "2031-02-03T05:05:06+01:00", "expires_at": due.timestamp() + 86400},
    )  # fmt: skip
    assert body["trigger_type"] == "time"
    assert ts(body["trigger_value"]) == due
    assert ts(body["expires_at"]).timestamp() == due.timestamp() + 86400


def test_list_by_status_complete_and_delete(server, store_name) -> None:
    """?status filters; complete moves a loop to done; completing again is 409; delete is 204."""
    c = server.client()
    p = {"store": store_name}
    a = created(c, "/near", store_name, {"intent": "send Lena the slides"})
    b = created(c, "/near", store_name, {"intent": "book the vet for the cat", "topic": "pets",
                                          "trigger_type": "topic"})  # fmt: skip
    assert [x["id"] for x in c.get("/near", params=p).json()] == [b["id"], a["id"]]

    r = c.post(f"/near/{a['id']}/complete", params=p)
    assert r.status_code == 200, r.text
    done = r.json()
    assert set(done) == LOOP_KEYS
    assert done["status"] == "done" and done["closed_at"] is not None
    assert {k: v for k, v in done.items() if k not in ("status", "closed_at")} == {
        k: v for k, v in a.items() if k not in ("status", "closed_at")
    }

    def listed(status: str) -> list[str]:
        r = c.get("/near", params={**p, "status": status})
        assert r.status_code == 200, r.text
        return [x["id"] for x in r.json()]

    assert listed("open") == [b["id"]]
    assert listed("done") == [a["id"]]
    assert listed("cancelled") == [] and listed("expired") == []

    before = snapshot(c, store_name)
    assert_error(c.post(f"/near/{a['id']}/complete", params=p), 409, "conflict")
    assert snapshot(c, store_name) == before

    r = c.delete(f"/near/{b['id']}", params=p)
    assert r.status_code == 204 and r.content == b""
    assert_error(c.get(f"/near/{b['id']}", params=p), 404, "not_found")
    assert_error(c.delete(f"/near/{b['id']}", params=p), 404, "not_found")
    assert_error(c.post(f"/near/{b['id']}/complete", params=p), 404, "not_found")
    assert listed("open") == [] and counts(c, store_name)["near"] == 1


def test_open_loops_are_recalled_and_done_ones_are_not(server, store_name) -> None:
    """An open loop is found by search (tier near); once completed it leaves recall."""
    c = server.client()
    loop = created(c, "/near", store_name, {"intent": "remind Omar to return the ladder"})
    hits = search(c, store_name, query="Omar still has my ladder", tiers=["near"])
    assert [h["id"] for h in hits] == [loop["id"]]
    assert hits[0]["tier"] == "near" and hits[0]["content"] == loop["intent"]
    assert c.post(f"/near/{loop['id']}/complete", params={"store": store_name}).status_code == 200
    assert search(c, store_name, query="Omar still has my ladder", tiers=["near"]) == []


def test_bad_loops_are_refused_and_store_nothing(server, store_name) -> None:
    """Bad trigger_type, a time trigger without a time, a topic trigger without a topic: 400."""
    c = server.client()
    created(c, "/near", store_name, {"intent": "an existing loop"})
    before = snapshot(c, store_name)
    for body, status, code in (
        ({"intent": "x", "trigger_type": "whenever"}, 400, "invalid_input"),
        ({"intent": "x", "trigger_type": "time"}, 400, "invalid_input"),
        ({"intent": "x", "trigger_type": "time", "trigger_value": "next week"}, 400,
         "invalid_input"),
        ({"intent": "x", "trigger_type": "topic"}, 400, "invalid_input"),
        ({"intent": "x", "expires_at": "soon"}, 400, "invalid_input"),
        ({"intent": "   "}, 400, "invalid_input"),
        ({"intent": ""}, 422, "invalid_request"),
        ({"topic": "no intent"}, 422, "invalid_request"),
        ({"intent": "x", "status": "done"}, 422, "invalid_request"),
    ):  # fmt: skip
        assert_error(post(c, "/near", store_name, body), status, code)
    assert snapshot(c, store_name) == before
