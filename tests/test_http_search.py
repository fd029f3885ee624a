"""Recall over the live HTTP API: result shape, filters, isolation, needle in 1,000 memories.

Also the system endpoints that report on stores: /stats, /stores, /healthz.
"""

from __future__ import annotations

import itertools
import random
import re

import pytest

from conftest import LiveServer
from http_helpers import assert_error, counts, created, post, search


@pytest.fixture(scope="session")
def server(api_server: LiveServer) -> LiveServer:
    """These HTTP API tests run on both backends (conftest's ``api_server``)."""
    return api_server


HIT_KEYS = {
    "id", "tier", "content", "topic", "metadata", "occurred_at", "created_at", "score", "relevance",
    "score_detail", "importance", "scope", "sources", "store",
}  # fmt: skip
# The parts every score breakdown shows; retrievers may add more (context, episode).
DETAIL_KEYS = {
    "bm25_rank", "bm25", "dense_rank", "cosine", "relevance", "tier_weight", "evidence", "recency",
    "importance",
}  # fmt: skip

PEOPLE = [
    "Alice", "Bruno", "Carmen", "Deepa", "Elif", "Farid", "Greta", "Hiro", "Ines", "Jonas",
    "Kemal", "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tariq",
]  # fmt: skip
EVENTS = [
    "team offsite", "quarterly report", "server migration", "book club meeting",
    "soccer practice", "piano recital", "kitchen renovation", "budget review", "product launch",
    "tax filing", "yoga class", "conference talk", "car inspection", "garden party",
    "code review", "photo exhibition", "wine tasting", "charity run", "client demo",
    "board game night", "choir rehearsal", "sprint planning", "bike repair workshop",
    "volunteer shift at the food bank",
]  # fmt: skip
WHEN = [
    "next Monday", "on Tuesday afternoon", "at the end of March", "in early June",
    "this weekend", "after the holidays", "on Friday morning", "in mid-October",
    "before the long weekend", "on the first Thursday of the month",
]  # fmt: skip
TEMPLATES = [
    "{p} said the {e} was moved and now happens {w}.",
    "The {e} is confirmed for {w}, according to {p}.",
    "{p} is looking for two more volunteers for the {e} {w}.",
    "{p} thinks the {e} ran over budget and wants to review it {w}.",
    "Reminder from {p}: the {e} starts an hour earlier {w}.",
    "{p} could not make the {e} {w} because of a cold.",
    "The notes from the {e} {w} were shared by {p} in the group chat.",
    "{p} booked a larger room for the {e} {w}.",
]  # fmt: skip
NEEDLE = "I keep the spare house key under the blue flowerpot next to the back door."
PARAPHRASE = "Where is the extra key to get into my home hidden?"
# No word in common at all: only the dense side of the fusion can find it.
NO_OVERLAP = "How do I get in if I'm locked out?"
STOPWORDS = {"i", "the", "to", "my", "is", "where", "get", "into", "under", "next", "a", "in"}


def distractors(n: int, seed: int = 7) -> list[str]:
    """n distinct, realistic sentences about unrelated everyday events."""
    combos = list(itertools.product(TEMPLATES, PEOPLE, EVENTS, WHEN))
    picked = random.Random(seed).sample(combos, n)
    return [t.format(p=p, e=e, w=w) for t, p, e, w in picked]


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower())) - STOPWORDS


def test_search_result_shape(server, store_name) -> None:
    """POST /search answers {results, due} with exactly the documented fields, best first."""
    c = server.client()
    mine = created(c, "/short", store_name, {"content": "The dog's vet is Dr. Okafor on Mill Lane",
                                             "topic": "pets", "metadata": {"a": 1}})  # fmt: skip
    for i in range(8):
        created(c, "/short", store_name, {"content": f"a note about the dog walk number {i}"})
    r = post(c, "/search", store_name, {"query": "who is the dog's vet?"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"results", "due"} and body["due"] == []
    results = body["results"]
    assert len(results) == 5, "n_results defaults to 5"
    top = results[0]
    assert set(top) == HIT_KEYS
    assert top["sources"] == []  # only a long-term fact has sources
    assert (top["id"], top["tier"], top["content"]) == (mine["id"], "short", mine["content"])
    assert (top["topic"], top["metadata"]) == ("pets", {"a": 1})
    assert top["store"] == store_name  # a search of one store names it too
    assert (top["occurred_at"], top["created_at"]) == (mine["occurred_at"], mine["created_at"])
    detail = top["score_detail"]
    assert set(detail) >= DETAIL_KEYS, detail
    assert all(v is None or isinstance(v, int | float) for v in detail.values()), detail
    assert top["score_detail"]["tier_weight"] == 1.0 and top["score_detail"]["evidence"] == 1.0
    assert top["score_detail"]["dense_rank"] == 1
    scores = [h["score"] for h in results]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    # A one-word query: every hit (min_relevance 0), to count them.
    assert len(search(c, store_name, query="dog", n_results=2, min_relevance=0)) == 2
    assert len(search(c, store_name, query="dog", n_results=100, min_relevance=0)) == 9


def test_needle_among_1000_distractors_by_paraphrase(server, store_name) -> None:
    """A memory is rank 1 among 1,000 unrelated ones for a query that shares almost no words."""
    c = server.client()
    noise = distractors(1000)
    assert len(set(noise)) == 1000
    assert words(NEEDLE) & words(PARAPHRASE) == {"key"}, "the query is a real paraphrase"
    ids = created(c, "/short/batch", store_name, {"items": [{"content": t} for t in noise[:500]]})
    needle = created(c, "/short", store_name, {"content": NEEDLE})
    created(c, "/short/batch", store_name, {"items": [{"content": t} for t in noise[500:]]})
    assert len(ids["ids"]) == 500 and counts(c, store_name)["short"] == 1001
    hits = search(c, store_name, query=PARAPHRASE, n_results=10)
    assert hits[0]["id"] == needle["id"], [h["content"] for h in hits[:3]]
    assert hits[0]["score"] > hits[1]["score"]
    assert words(NEEDLE) & words(NO_OVERLAP) == set()
    # With no word in common the search's best match is its cosine alone
    # (0.32), and its relevance is near 0: the ranking is what is tested here.
    hits = search(c, store_name, query=NO_OVERLAP, n_results=10, min_relevance=0)
    assert hits[0]["id"] == needle["id"], [h["content"] for h in hits[:3]]
    assert hits[0]["score_detail"]["bm25_rank"] is None


def test_topic_and_time_filters(server, store_name) -> None:
    """topic, since and until (ISO or unix seconds) restrict results by topic and occurred_at."""
    c = server.client()
    spring = created(c, "/short", store_name, {"content": "planted tomatoes in the garden",
                                               "topic": "garden",
                                               "occurred_at": "2024-04-10T09:00:00Z"})  # fmt: skip
    summer = created(c, "/short", store_name, {"content": "harvested tomatoes from the garden",
                                               "topic": "garden",
                                               "occurred_at": "2024-08-01T09:00:00Z"})  # fmt: skip
    other = created(c, "/short", store_name, {"content": "tomatoes are on the shopping list",
                                              "topic": "errands",
                                              "occurred_at": "2024-08-02T09:00:00Z"})  # fmt: skip
    q = "tomatoes"

    def ids(**f: object) -> set[str]:
        return {h["id"] for h in search(c, store_name, query=q, n_results=10, **f)}

    assert ids() == {spring["id"], summer["id"], other["id"]}
    assert ids(topic="garden") == {spring["id"], summer["id"]}
    assert ids(topic="errands") == {other["id"]}
    assert ids(topic="nothing-here") == set()
    assert ids(since="2024-07-01T00:00:00Z") == {summer["id"], other["id"]}
    assert ids(until="2024-07-01") == {spring["id"]}
    assert ids(since=1717200000, until="2024-08-01T12:00:00+00:00") == {summer["id"]}
    assert ids(since="2024-08-01T09:00:00Z", until="2024-08-01T09:00:00Z") == {summer["id"]}
    assert ids(topic="garden", since="2024-08-02") == set()


def test_tiers_filter(server, store_name) -> None:
    """tiers limits results to the named tiers; omitted, every searchable tier is searched."""
    c = server.client()
    short = created(c, "/short", store_name, {"content": "the plumber comes about the leaking tap"})
    loop = created(c, "/near", store_name, {"intent": "call the plumber about the leaking tap"})
    q = "plumber leaking tap"

    def tiers(**f: object) -> dict[str, str]:
        return {h["id"]: h["tier"] for h in search(c, store_name, query=q, **f)}

    assert tiers() == {short["id"]: "short", loop["id"]: "near"}
    assert tiers(tiers=["short"]) == {short["id"]: "short"}
    assert tiers(tiers=["near"]) == {loop["id"]: "near"}
    assert tiers(tiers=["long"]) == {}
    assert tiers(tiers=["near", "short", "near"]) == tiers()


def test_store_isolation(server, store_name) -> None:
    """A memory in store A never appears in store B's search, listings, reads or counts."""
    c = server.client()
    a, b = f"{store_name}-a", f"{store_name}-b"
    secret = created(c, "/short", a, {"content": "Ravi's locker combination is 3-14-15"})
    loop = created(c, "/near", a, {"intent": "ask Ravi about the locker"})
    created(c, "/journal", a, {"content": "Ravi mentioned his locker"})
    created(c, "/short", b, {"content": "the office fridge is cleaned on Fridays"})

    query = "What is Ravi's locker combination?"
    assert search(c, a, query=query)[0]["id"] == secret["id"]
    # B knows nothing about Ravi: no hit at the default, and none of A's with every hit.
    assert search(c, b, query=query) == []
    hits_b = search(c, b, query=query, n_results=100, min_relevance=0)
    assert all("Ravi" not in h["content"] for h in hits_b) and len(hits_b) == 1
    for path in ("/short", "/near", "/journal"):
        listed = c.get(path, params={"store": b}).json()
        assert all("Ravi" not in str(x) for x in listed), path
    assert_error(c.get(f"/short/{secret['id']}", params={"store": b}), 404, "not_found")
    assert_error(c.get(f"/near/{loop['id']}", params={"store": b}), 404, "not_found")
    assert_error(c.delete(f"/short/{secret['id']}", params={"store": b}), 404, "not_found")
    assert c.get(f"/short/{secret['id']}", params={"store": a}).status_code == 200
    assert counts(c, b) == {"short": 1, "near": 0, "long": 0, "journal": 0, "briefs": 0,
                            "forget_flags": 0}  # fmt: skip


def test_stats_counts_every_tier(server, store_name) -> None:
    """GET /stats reports the store, counts per tier, size in bytes and the embedder."""
    c = server.client()
    created(c, "/short/batch", store_name, {"items": [{"content": f"s{i}"} for i in range(3)]})
    created(c, "/near", store_name, {"intent": "follow up"})
    created(c, "/journal/batch", store_name, {"items": [{"content": "j1"}, {"content": "j2"}]})
    created(c, "/brief", store_name, {"summary": "a session"})
    r = c.get("/stats", params={"store": store_name})
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"store", "counts", "size_bytes", "embedder", "hot"}
    assert body["hot"]["verbose"]["facts"] == 0  # no long-term fact yet (test_hot_http)
    assert body["store"] == store_name
    assert body["counts"] == {"short": 3, "near": 1, "long": 0, "journal": 2, "briefs": 1,
                              "forget_flags": 0}  # fmt: skip
    assert isinstance(body["size_bytes"], int) and body["size_bytes"] > 0
    assert body["embedder"] == "all-MiniLM-L6-v2/onnx-int8-v3:384"


def test_stores_and_healthz(server, store_name) -> None:
    """GET /stores lists stores made by a first write or POST /stores; /healthz says ok."""
    c = server.client()
    assert c.get("/healthz").json() == {"status": "ok"}
    assert store_name not in c.get("/stores").json()["stores"]
    created(c, "/short", store_name, {"content": "first write creates the store"})
    empty = f"{store_name}-empty"
    r = c.post("/stores", json={"name": empty})
    assert r.status_code == 201 and r.json() == {"name": empty}
    body = c.get("/stores").json()
    assert set(body) == {"stores"}
    assert {store_name, empty, "default"} <= set(body["stores"])
    assert body["stores"] == sorted(body["stores"])
    assert c.get("/short", params={"store": empty}).json() == []
    assert search(c, empty, query="anything") == []
    assert_error(c.post("/stores", json={"name": "Not-Valid"}), 400, "invalid_store_name")
