"""GET /records over the live HTTP API: the texts of records of any tier, by id.

The viewer reads a consolidation run's inputs through it; a record deleted
since is listed under ``missing``, never an error.
"""

from __future__ import annotations

from conftest import LiveServer
from halls.models import new_id
from http_helpers import assert_error, created, snapshot


def test_records_by_id_across_tiers_with_deleted_ones_missing(
    server: LiveServer, store_name: str
) -> None:
    """Short, loop, journal and brief ids come back with their text, in the order
    asked; a deleted entry and an id never stored are ``missing``."""
    c = server.client()
    kept = created(c, "/short", store_name, {"content": "The CI runner has 4 cores"})
    gone = created(c, "/short", store_name, {"content": "Standup is at 10:00"})
    loop = created(c, "/near", store_name, {"intent": "Ask about the offsite"})
    event = created(c, "/journal", store_name, {"content": "user: the runner got faster"})
    brief = created(c, "/brief", store_name, {"summary": "CI work", "promote_hints": ["CI runner"]})
    assert c.delete(f"/short/{gone['id']}", params={"store": store_name}).status_code == 204
    never = new_id("journal")
    ids = [brief["id"], gone["id"], event["id"], kept["id"], loop["id"], never, kept["id"]]

    r = c.get("/records", params={"store": store_name, "id": ids})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["records"] == [
        {
            "id": brief["id"],
            "tier": "brief",
            "text": "CI work · promote: CI runner",
            "status": None,
        },
        {
            "id": event["id"],
            "tier": "journal",
            "text": "user: the runner got faster",
            "status": None,
        },
        {"id": kept["id"], "tier": "short", "text": "The CI runner has 4 cores", "status": None},
        {"id": loop["id"], "tier": "near", "text": "Ask about the offsite", "status": "open"},
    ]
    assert body["missing"] == [gone["id"], never]


def test_records_refuses_bad_ids_and_changes_nothing(server: LiveServer, store_name: str) -> None:
    """A malformed id, a run id, no id or too many ids get a 4xx; the store is unchanged."""
    c = server.client()
    created(c, "/short", store_name, {"content": "something to keep"})
    before = snapshot(c, store_name)
    where = {"store": store_name}
    err = assert_error(c.get("/records", params={**where, "id": "s_nope"}), 400, "invalid_input")
    assert "s_nope" in err["message"]
    assert_error(c.get("/records", params={**where, "id": "r_" + "0" * 26}), 400, "invalid_input")
    assert_error(c.get("/records", params=where), 422, "invalid_request")
    many = [new_id("short") for _ in range(201)]
    assert_error(c.get("/records", params={**where, "id": many}), 422, "invalid_request")
    assert_error(
        c.get("/records", params={"store": "no-such-store", "id": new_id("short")}),
        404,
        "store_not_found",
    )
    assert snapshot(c, store_name) == before
