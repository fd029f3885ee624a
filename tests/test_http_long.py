"""Long-term facts over the live HTTP API (read, chain, forget flag) and briefs.

Facts are written only by the consolidator, so the tests seed them straight
into the store's SQLite file while the server runs (WAL lets a second
process write); the server picks them up on its next read.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conftest import LiveServer
from halls.models import LongFact, new_id
from http_helpers import assert_error, counts, created, post, search, snapshot


@pytest.fixture(scope="session")
def server(api_server: LiveServer) -> LiveServer:
    """These HTTP API tests run on both backends (conftest's ``api_server``)."""
    return api_server


FACT_KEYS = {
    "id", "tier", "content", "topic", "category", "evidence_count", "first_seen",
    "last_confirmed", "status", "pinned", "supersedes", "superseded_by", "derived_from", "metadata",
    "created_at", "occurred_at", "importance", "scope",
}  # fmt: skip
OLD_TEXT = "Mira lives in Leeds and commutes to the office by train"
NEW_TEXT = "Mira moved to Bristol and now works from home"


def seed_chain(server, store: str, embedder) -> tuple[str, str]:
    """Create the store over HTTP, then write a superseded -> active pair; returns (old, new)."""
    c = server.client()
    created(c, "/short", store, {"content": "an unrelated note about the garden hose"})
    old_id, new_id_ = new_id("long"), new_id("long")
    t0 = datetime(2024, 1, 10, tzinfo=UTC)
    t1 = datetime(2024, 6, 1, tzinfo=UTC)
    old = LongFact(
        id=old_id, content=OLD_TEXT, topic="mira", category="fact", evidence_count=3,
        first_seen=t0, last_confirmed=t0, status="superseded", superseded_by=new_id_,
        derived_from=["s_01HZZZZZZZZZZZZZZZZZZZZZZZ"], metadata={"source": "seed"},
        created_at=t0, occurred_at=t0,
    )  # fmt: skip
    new = LongFact(
        id=new_id_, content=NEW_TEXT, topic="mira", category="fact", evidence_count=10,
        first_seen=t1, last_confirmed=t1, status="active", supersedes=old_id,
        metadata={"source": "seed"}, created_at=t1, occurred_at=t1,
    )  # fmt: skip
    vectors = embedder.embed([OLD_TEXT, NEW_TEXT])
    with server.store(store) as handle:
        handle.add_fact(old, vectors[0])
        handle.add_fact(new, vectors[1])
    return old_id, new_id_


@pytest.fixture
def chain(server, store_name, embedder) -> tuple[str, str]:
    return seed_chain(server, store_name, embedder)


def test_list_long_newest_first_and_by_status(server, store_name, chain) -> None:
    """GET /long lists facts newest first; ?status=active / superseded filters."""
    old_id, new_id_ = chain
    c = server.client()
    p = {"store": store_name}
    listed = c.get("/long", params=p).json()
    assert [f["id"] for f in listed] == [new_id_, old_id]
    assert all(set(f) == FACT_KEYS for f in listed)
    assert [f["id"] for f in c.get("/long", params={**p, "status": "active"}).json()] == [new_id_]
    superseded = c.get("/long", params={**p, "status": "superseded"}).json()
    assert [f["id"] for f in superseded] == [old_id]
    assert c.get("/long", params={**p, "status": "demoted"}).json() == []
    assert [f["id"] for f in c.get("/long", params={**p, "limit": 1, "offset": 1}).json()] == [
        old_id
    ]
    assert counts(c, store_name)["long"] == 2


def test_get_long_carries_its_supersession_chain(server, store_name, chain) -> None:
    """GET /long/{id} returns the fact plus the whole chain, oldest first, from either end."""
    old_id, new_id_ = chain
    c = server.client()
    r = c.get(f"/long/{new_id_}", params={"store": store_name})
    assert r.status_code == 200, r.text
    fact = r.json()
    assert set(fact) == FACT_KEYS | {"chain"}
    assert fact["id"] == new_id_ and fact["tier"] == "long" and fact["content"] == NEW_TEXT
    assert (fact["status"], fact["supersedes"], fact["superseded_by"]) == ("active", old_id, None)
    assert fact["evidence_count"] == 10 and fact["metadata"] == {"source": "seed"}
    assert [f["id"] for f in fact["chain"]] == [old_id, new_id_]
    old = fact["chain"][0]
    assert (old["status"], old["superseded_by"]) == ("superseded", new_id_)
    assert old["content"] == OLD_TEXT
    assert old["derived_from"] == ["s_01HZZZZZZZZZZZZZZZZZZZZZZZ"]

    from_old = c.get(f"/long/{old_id}", params={"store": store_name}).json()
    assert from_old["id"] == old_id and from_old["chain"] == fact["chain"]


def test_forget_records_a_flag_and_leaves_the_fact(server, store_name, chain) -> None:
    """POST /long/{id}/forget answers 202 with a pending flag; the fact itself is unchanged."""
    _, new_id_ = chain
    c = server.client()
    p = {"store": store_name}
    before = c.get(f"/long/{new_id_}", params=p).json()
    r = c.post(f"/long/{new_id_}/forget", params=p, json={"reason": "this is wrong"})
    assert r.status_code == 202, r.text
    flag = r.json()
    assert set(flag) == {
        "id",
        "fact_id",
        "reason",
        "status",
        "created_at",
        "redactions",
        "flagged_by",
        "admin",
    }
    # An open server: the caller is its operator, who may delete for good.
    assert (flag["flagged_by"], flag["admin"]) == (None, True)
    assert flag["id"].startswith("f_")
    assert (flag["fact_id"], flag["reason"]) == (new_id_, "this is wrong")
    assert flag["status"] == "pending"
    assert c.get(f"/long/{new_id_}", params=p).json() == before
    assert search(c, store_name, query="where does Mira live now?", tiers=["long"])[0]["id"] == (
        new_id_
    )
    assert counts(c, store_name)["forget_flags"] == 1
    assert counts(c, store_name)["long"] == 2


def test_forget_bad_requests_change_nothing(server, store_name, chain) -> None:
    """Forget with a bad id, unknown id, or missing/blank reason is refused; no flag is stored."""
    _, new_id_ = chain
    c = server.client()
    before = snapshot(c, store_name)
    unknown = new_id("long")
    for path, body, status, code in (
        (f"/long/{unknown}/forget", {"reason": "pii"}, 404, "not_found"),
        ("/long/not-an-id/forget", {"reason": "pii"}, 400, "invalid_input"),
        (f"/long/{new_id('short')}/forget", {"reason": "pii"}, 400, "invalid_input"),
        (f"/long/{new_id_}/forget", {}, 422, "invalid_request"),
        (f"/long/{new_id_}/forget", {"reason": ""}, 422, "invalid_request"),
        (f"/long/{new_id_}/forget", {"reason": "   "}, 400, "invalid_input"),
        (f"/long/{new_id_}/forget", {"reason": "x", "purge": True}, 422, "invalid_request"),
    ):
        assert_error(post(c, path, store_name, body), status, code)
    assert snapshot(c, store_name) == before
    assert counts(c, store_name)["forget_flags"] == 0
    assert_error(c.get(f"/long/{unknown}", params={"store": store_name}), 404, "not_found")
    assert_error(c.get("/long/l_bad", params={"store": store_name}), 400, "invalid_input")


def test_no_endpoint_writes_long_term_facts(server, store_name, chain) -> None:
    """There is no create or edit of facts over HTTP (an admin's DELETE purges: test_erase)."""
    _, new_id_ = chain
    c = server.client()
    before = snapshot(c, store_name)
    p = {"store": store_name}
    assert_error(c.post("/long", params=p, json={"content": "x"}), 405, "method_not_allowed")
    assert_error(c.put(f"/long/{new_id_}", params=p, json={"content": "x"}), 405,
                 "method_not_allowed")  # fmt: skip
    assert snapshot(c, store_name) == before


def test_superseded_fact_is_searchable_only_when_asked(server, store_name, chain) -> None:
    """Search leaves superseded facts out by default and includes them with include_superseded."""
    old_id, new_id_ = chain
    c = server.client()
    query = "Mira commuting to Leeds by train"
    default = [h["id"] for h in search(c, store_name, query=query, tiers=["long"])]
    assert default == [new_id_]
    wide = search(c, store_name, query=query, tiers=["long"], include_superseded=True)
    assert {h["id"] for h in wide} == {old_id, new_id_}
    old = next(h for h in wide if h["id"] == old_id)
    assert old["content"] == OLD_TEXT and old["tier"] == "long"
    # The evidence multiplier of a fact confirmed 10 times shows in its score detail.
    active = next(h for h in wide if h["id"] == new_id_)
    assert active["score_detail"]["evidence"] > 1.0 and active["score_detail"]["tier_weight"] == 0.8


def test_brief_is_stored_for_the_consolidator(server, store_name) -> None:
    """POST /brief answers 201 with the stored brief; bad briefs are refused and store nothing."""
    c = server.client()
    body = created(
        c, "/brief", store_name,
        {"summary": "Planned the Lisbon trip; Ana prefers window seats.",
         "promote_hints": ["Ana prefers window seats"], "completed_intents": ["book flights"]},
    )  # fmt: skip
    assert set(body) == {"id", "summary", "promote_hints", "completed_intents", "noise",
                         "created_at", "redactions"}  # fmt: skip
    assert body["id"].startswith("b_")
    assert body["summary"] == "Planned the Lisbon trip; Ana prefers window seats."
    assert body["promote_hints"] == ["Ana prefers window seats"]
    assert body["completed_intents"] == ["book flights"] and body["noise"] == []
    minimal = created(c, "/brief", store_name, {"summary": "quiet session"})
    assert (minimal["promote_hints"], minimal["completed_intents"]) == ([], [])
    noisy = created(c, "/brief", store_name, {"summary": "chit-chat", "noise": ["the weather"]})
    assert noisy["noise"] == ["the weather"]
    assert counts(c, store_name)["briefs"] == 3

    before = snapshot(c, store_name)
    for bad, status, code in (
        ({"summary": "  "}, 400, "invalid_input"),
        ({"summary": "s", "promote_hints": ["ok", " "]}, 400, "invalid_input"),
        ({"summary": "s", "completed_intents": [""]}, 400, "invalid_input"),
        ({"summary": "s", "promote_hints": "not a list"}, 422, "invalid_request"),
        ({"promote_hints": []}, 422, "invalid_request"),
    ):
        assert_error(post(c, "/brief", store_name, bad), status, code)
    assert snapshot(c, store_name) == before
