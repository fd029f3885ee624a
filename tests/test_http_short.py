"""Short-term memory over the live HTTP API: write, read, list, delete, batch."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from conftest import LiveServer
from http_helpers import assert_error, counts, created, search


@pytest.fixture(scope="session")
def server(api_server: LiveServer) -> LiveServer:
    """These HTTP API tests run on both backends (conftest's ``api_server``)."""
    return api_server


SHORT_KEYS = {
    "id", "tier", "content", "topic", "source", "pinned", "metadata",
    "created_at", "occurred_at", "expires_at", "importance", "scope", "redactions",
}  # fmt: skip
EIGHT_DAYS = timedelta(seconds=691200)


def ts(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_post_short_returns_the_stored_record(server, store_name) -> None:
    """POST /short answers 201 with exactly the stored record, metadata verbatim."""
    c = server.client()
    meta = {"project": "halls", "nested": {"n": [1, 2.5, None, True]}, "unicode": "façade ✓"}
    body = created(
        c, "/short", store_name,
        {"content": "Chad prefers absolute paths", "topic": "prefs", "source": "chat",
         "metadata": meta, "occurred_at": "2024-03-01T12:00:00Z"},
    )  # fmt: skip
    assert set(body) == SHORT_KEYS
    assert body["id"].startswith("s_") and len(body["id"]) == 28
    assert body["tier"] == "short"
    assert body["content"] == "Chad prefers absolute paths"
    assert (body["topic"], body["source"], body["pinned"]) == ("prefs", "chat", False)
    assert body["metadata"] == meta
    assert ts(body["occurred_at"]) == ts("2024-03-01T12:00:00+00:00")
    assert ts(body["expires_at"]) - ts(body["created_at"]) == EIGHT_DAYS

    r = c.get(f"/short/{body['id']}", params={"store": store_name})
    assert r.status_code == 200
    assert r.json() == body


def test_pinned_entry_never_expires(server, store_name) -> None:
    """A pinned entry has no expires_at; occurred_at defaults to the write time."""
    c = server.client()
    body = {"content": "the wifi is called Halls", "pinned": True}
    pinned = created(c, "/short", store_name, body)
    assert pinned["pinned"] is True and pinned["expires_at"] is None
    assert pinned["occurred_at"] == pinned["created_at"]
    assert pinned["metadata"] == {} and pinned["topic"] is None and pinned["source"] is None


def test_occurred_at_accepts_iso_and_unix_seconds(server, store_name) -> None:
    """occurred_at is taken as ISO-8601 (Z, offset, naive = UTC) or unix seconds (number/string)."""
    c = server.client()
    expected = ts("2024-05-06T07:08:09+00:00")
    for given in (
        "2024-05-06T07:08:09Z",
        "2024-05-06T09:08:09+02:00",
        "2024-05-06T07:08:09",
        expected.timestamp(),
        int(expected.timestamp()),
        str(int(expected.timestamp())),
    ):
        sent = {"content": f"event at {given}", "occurred_at": given}
        body = created(c, "/short", store_name, sent)
        assert ts(body["occurred_at"]) == expected, given


def test_batch_returns_ids_in_input_order(server, store_name) -> None:
    """POST /short/batch answers 201 {ids} in input order; each id holds its own item."""
    c = server.client()
    items = [{"content": f"batch item number {i}", "topic": f"t{i % 3}"} for i in range(7)]
    body = created(c, "/short/batch", store_name, {"items": items})
    assert set(body) == {"ids"}
    assert len(body["ids"]) == 7 and len(set(body["ids"])) == 7
    assert body["ids"] == sorted(body["ids"]), "ids sort in creation (= input) order"
    for item, id_ in zip(items, body["ids"], strict=True):
        got = c.get(f"/short/{id_}", params={"store": store_name}).json()
        assert (got["content"], got["topic"]) == (item["content"], item["topic"])
    assert counts(c, store_name)["short"] == 7


def test_list_is_newest_first_with_limit_and_offset(server, store_name) -> None:
    """GET /short lists newest first and pages with limit/offset."""
    c = server.client()
    ids = [created(c, "/short", store_name, {"content": f"note {i}"})["id"] for i in range(5)]
    newest_first = list(reversed(ids))

    def page(**q: int) -> list[str]:
        r = c.get("/short", params={"store": store_name, **q})
        assert r.status_code == 200, r.text
        return [e["id"] for e in r.json()]

    assert page() == newest_first
    assert page(limit=2) == newest_first[:2]
    assert page(limit=2, offset=2) == newest_first[2:4]
    assert page(limit=2, offset=4) == newest_first[4:]
    assert page(offset=5) == []
    first = c.get("/short", params={"store": store_name, "limit": 1}).json()[0]
    assert set(first) == SHORT_KEYS and first["content"] == "note 4"


def test_delete_removes_from_reads_listing_and_search(server, store_name) -> None:
    """DELETE /short/{id} answers 204 and the entry is gone everywhere; a second delete is 404."""
    c = server.client()
    keep = created(c, "/short", store_name, {"content": "the boiler was serviced in May"})
    gone = created(c, "/short", store_name, {"content": "the boiler code is E42 for low pressure"})
    p = {"store": store_name}

    r = c.delete(f"/short/{gone['id']}", params=p)
    assert r.status_code == 204 and r.content == b""
    assert_error(c.get(f"/short/{gone['id']}", params=p), 404, "not_found")
    assert [e["id"] for e in c.get("/short", params=p).json()] == [keep["id"]]
    hits = search(c, store_name, query="boiler error code low pressure")
    assert [h["id"] for h in hits] == [keep["id"]]
    assert counts(c, store_name)["short"] == 1
    assert_error(c.delete(f"/short/{gone['id']}", params=p), 404, "not_found")


def test_memory_is_searchable_right_after_its_201(server, store_name) -> None:
    """Each write is found by the very next search, with no wait in between."""
    c = server.client()
    for text in (
        "Aunt Ruth's birthday is on the ninth of April",
        "The car's winter tyres are stored at the garage on Elm Road",
        "Jonas takes his coffee black with no sugar",
    ):
        entry = created(c, "/short", store_name, {"content": text})
        assert search(c, store_name, query=text, n_results=1)[0]["id"] == entry["id"]


def test_patch_changes_the_fields_given_and_search_follows(server, store_name) -> None:
    """PATCH /short/{id}: new content is searched by its words and meaning at once."""
    c = server.client()
    p = {"store": store_name}
    body = {"content": "The deploy key lives in the team vault", "topic": "ops",
            "metadata": {"a": 1}}  # fmt: skip
    made = created(c, "/short", store_name, body)
    url = f"/short/{made['id']}"
    r = c.patch(url, params=p, json={"content": "The deploy key lives in the hardware keyring"})
    assert r.status_code == 200, r.text
    edited = r.json()
    assert edited["content"] == "The deploy key lives in the hardware keyring"
    assert (edited["topic"], edited["metadata"], edited["created_at"]) == (
        "ops", {"a": 1}, made["created_at"]
    )  # fmt: skip
    assert c.get(url, params=p).json() == edited
    assert [h["id"] for h in search(c, store_name, query="keyring")][:1] == [made["id"]]
    assert made["id"] not in {
        h["id"] for h in search(c, store_name, query="vault", retriever="bm25")
    }

    pinned = c.patch(url, params=p, json={"pinned": True, "topic": None}).json()
    assert pinned["pinned"] is True and pinned["expires_at"] is None and pinned["topic"] is None
    unpinned = c.patch(url, params=p, json={"pinned": False, "metadata": {}}).json()
    assert unpinned["expires_at"] is not None and unpinned["metadata"] == {}
    assert ts(unpinned["expires_at"]) > ts(made["expires_at"])  # the TTL restarts now


def test_patch_refuses_bad_input_and_changes_nothing(server, store_name) -> None:
    """Empty or unknown fields, bad ids and unknown stores: 4xx, the entry as it was."""
    c = server.client()
    p = {"store": store_name}
    made = created(c, "/short", store_name, {"content": "Lena takes her coffee black"})
    url = f"/short/{made['id']}"
    for bad in ({"contnet": "x"}, {"content": ""}, {"content": 5}, {"pinned": "maybe"},
                {"content": "x" * 40_000}, {"created_at": "2020-01-01"}):  # fmt: skip
        assert c.patch(url, params=p, json=bad).status_code == 422, bad
    assert c.patch(url, params=p, json={}).json() == made  # nothing to change
    for null in ({"content": None}, {"pinned": None}, {"metadata": None}):
        assert c.patch(url, params=p, json=null).status_code == 422, null
    assert_error(c.patch(url, params=p, json={"content": "   "}), 400, "invalid_input")
    missing = "/short/s_" + "0" * 26
    assert_error(c.patch(missing, params=p, json={"topic": "x"}), 404, "not_found")
    assert_error(c.patch("/short/nope", params=p, json={"topic": "x"}), 400, "invalid_input")
    assert c.patch(url, params={"store": "no-such-store-z"}, json={"topic": "x"}).status_code == 404
    assert c.get(url, params=p).json() == made
