"""The journal in search over the live HTTP API: tiers ["journal"] and per-event visibility."""

from __future__ import annotations

import pytest

from conftest import LiveServer
from http_helpers import assert_error, created, post, search, snapshot


@pytest.fixture(scope="session")
def server(api_server: LiveServer) -> LiveServer:
    """These HTTP API tests run on both backends (conftest's ``api_server``)."""
    return api_server


FULL = "We chose the Kestrel gateway for the billing rollout after the load test"
PRIVATE = "My therapist appointment about the Kestrel anxiety is on Thursday at four"
SUMMARY = "The Kestrel contract renewal costs forty thousand euros a year"


def everything(c, store: str, query: str, **extra) -> list[dict]:
    return search(c, store, query=query, min_relevance=0, n_results=100, **extra)


def test_journal_event_found_only_when_the_tier_is_named(server, store_name) -> None:
    """A journal event is a hit with tiers ["journal"], explained like any; never by default."""
    c = server.client()
    event = created(c, "/journal", store_name, {"content": FULL, "role": "user"})
    note = created(c, "/short", store_name, {"content": "Kestrel is the name of our API gateway"})
    hits = everything(c, store_name, FULL, tiers=["journal"])
    assert [h["id"] for h in hits] == [event["id"]]
    hit = hits[0]
    assert hit["tier"] == "journal" and hit["content"] == FULL
    detail = hit["score_detail"]
    assert detail["bm25_rank"] == 1 and detail["bm25"] is not None
    assert detail["cosine"] is not None and detail["cosine"] > 0.9
    assert detail["tier_weight"] == 0.7
    assert 0 <= hit["relevance"] <= 1 and hit["score"] > 0
    # The default tiers (none given, or [] ) never return the journal, even for its exact text.
    for tiers in (None, []):
        found = everything(c, store_name, FULL, tiers=tiers)
        assert [h["id"] for h in found] == [note["id"]]
    # Named beside the others, both come back, merged by score.
    both = everything(c, store_name, FULL, tiers=["short", "journal"])
    assert {h["id"] for h in both} == {event["id"], note["id"]}
    assert [h["score"] for h in both] == sorted((h["score"] for h in both), reverse=True)
    # The dense retriever finds nothing in the journal (it keeps no vectors).
    assert everything(c, store_name, FULL, tiers=["journal"], retriever="dense") == []


def test_default_search_ranks_as_if_the_journal_were_not_there(server, store_name) -> None:
    """Journaling many events with the query's words changes no default hit, score or detail."""
    c = server.client()
    for text in (
        "The Kestrel gateway handles billing traffic",
        "Billing rollout is planned for March",
        "Load tests run every night",
    ):
        created(c, "/short", store_name, {"content": text})  # fmt: skip
    queries = ("Kestrel gateway billing rollout", "when is the load test?")
    before = {q: everything(c, store_name, q) for q in queries}
    items = [{"content": f"{FULL} (turn {n})", "role": "user"} for n in range(30)]
    created(c, "/journal/batch", store_name, {"items": items})
    for q in queries:
        after = everything(c, store_name, q)
        assert [(h["id"], h["score"], h["score_detail"]) for h in after] == [
            (h["id"], h["score"], h["score_detail"]) for h in before[q]
        ]


def test_private_event_never_returned(server, store_name) -> None:
    """A private event is never a hit, whatever the tiers and the query (even its exact text)."""
    c = server.client()
    hidden = created(c, "/journal", store_name, {"content": PRIVATE, "visibility": "private"})
    assert hidden["visibility"] == "private"
    for tiers in (["journal"], ["short", "near", "long", "journal"], None):
        for retriever in ("full", "fused", "bm25", "dense"):
            for query in (PRIVATE, "therapist appointment", "Kestrel anxiety"):
                found = everything(c, store_name, query, tiers=tiers, retriever=retriever)
                assert all(h["id"] != hidden["id"] for h in found), (tiers, retriever, query)
                assert all("therapist" not in h["content"] for h in found)
    # It stays in the journal, whole, for whoever reads the store.
    listed = c.get("/journal", params={"store": store_name}).json()
    assert [(e["id"], e["content"]) for e in listed] == [(hidden["id"], PRIVATE)]


def test_summary_event_shows_only_the_redacted_line(server, store_name) -> None:
    """A summary event is found by its words but shows one redacted line and no metadata."""
    c = server.client()
    event = created(
        c, "/journal", store_name,
        {"content": SUMMARY, "role": "user", "session_id": "sess-9", "visibility": "summary",
         "metadata": {"amount": "forty thousand"}},
    )  # fmt: skip
    hits = everything(c, store_name, "Kestrel contract renewal cost", tiers=["journal"])
    assert [h["id"] for h in hits] == [event["id"]]
    hit = hits[0]
    assert hit["content"] == "[summary] user event in session sess-9: content withheld (10 words)"
    assert hit["metadata"] == {}
    assert hit["occurred_at"] == event["occurred_at"]
    for word in ("Kestrel", "contract", "forty", "euros"):
        assert word not in str(hit), word
    # The journal itself keeps the event whole.
    listed = c.get("/journal", params={"store": store_name}).json()
    assert listed[0]["content"] == SUMMARY and listed[0]["visibility"] == "summary"


def test_bad_visibility_is_422_and_stores_nothing(server, store_name) -> None:
    """visibility other than full, summary or private is a 422; nothing is written."""
    c = server.client()
    created(c, "/journal", store_name, {"content": "already here"})
    before = snapshot(c, store_name)
    for bad in ("secret", "PRIVATE", "", None, 1, ["private"]):
        body = {"content": "a turn", "visibility": bad}
        assert_error(post(c, "/journal", store_name, body), 422, "invalid_request")
        items = {"items": [{"content": "fine"}, body]}
        assert_error(post(c, "/journal/batch", store_name, items), 422, "invalid_request")
    assert snapshot(c, store_name) == before


def test_unknown_tier_is_still_refused(server, store_name) -> None:
    """A tier other than short, near, long or journal is a 400 naming the choices."""
    c = server.client()
    r = post(c, "/search", store_name, {"query": "anything", "tiers": ["diary"]})
    body = assert_error(r, 400, "invalid_input")
    assert "journal" in body["message"]


def test_a_journal_hit_below_min_relevance_pushes_out_no_memory(server, store_name) -> None:
    """Each pass has its own relevance: thresholded first, then the best n_results are kept."""
    c = server.client()
    best = created(
        c, "/short", store_name, {"content": "Priya owns the nightly backup of the HR database"}
    )
    second = created(
        c, "/short", store_name, {"content": "The office plants are watered on Fridays"}
    )
    weak = created(c, "/journal", store_name, {"content": "backup"})
    query = "who owns the nightly backup of the HR database?"
    # "fused": no conversation-context bonus lifts the second memory by its neighbour.
    each = everything(c, store_name, query, tiers=["short", "journal"], retriever="fused")
    relevance = {h["id"]: h["relevance"] for h in each}
    score = {h["id"]: h["score"] for h in each}
    # The setting: the weak journal hit outscores the second memory, but its own
    # pass (one word in common) is judged far less relevant than the memories'.
    assert score[weak["id"]] > score[second["id"]]
    assert relevance[weak["id"]] < relevance[best["id"]] == relevance[second["id"]]
    threshold = (relevance[weak["id"]] + relevance[best["id"]]) / 2
    hits = search(c, store_name, query=query, tiers=["short", "journal"], n_results=2,
                  retriever="fused", min_relevance=threshold)  # fmt: skip
    assert [h["id"] for h in hits] == [best["id"], second["id"]]
    one = search(
        c, store_name, query=query, tiers=["short", "journal"], n_results=1, min_relevance=0
    )
    assert [h["id"] for h in one] == [best["id"]]
