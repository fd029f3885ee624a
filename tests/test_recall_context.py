"""Score fusion, conversation context and the /search retrievers."""

from __future__ import annotations

import pytest

from halls.config import RecallSettings
from halls.models import NewShort
from halls.recall.context import Placed, boosts
from halls.recall.fusion import fuse, signals
from halls.store.base import Match


def _m(i: str, score: float) -> Match:
    return Match(i, "short", score)


def test_score_fusion_normalises_each_list_by_its_best() -> None:
    """The best of both lists scores 1; a BM25-only hit scores its share of the BM25 half."""
    text = [_m("a", 8.0), _m("b", 4.0)]
    dense = [_m("a", 0.6), _m("c", 0.3)]
    found = signals(text, dense)
    fuse(found, text, dense, RecallSettings(bm25_weight=0.5))
    assert found["a"].relevance == pytest.approx(1.0)
    assert found["b"].relevance == pytest.approx(0.25)
    assert found["c"].relevance == pytest.approx(0.25)
    assert (found["b"].bm25_rank, found["c"].dense_rank) == (2, 2)


def test_score_fusion_with_one_list_uses_it_whole() -> None:
    """With BM25 alone (retriever bm25), relevance is the BM25 share of the best."""
    text = [_m("a", 8.0), _m("b", 2.0)]
    found = signals(text, [])
    fuse(found, text, [], RecallSettings())
    assert found["b"].relevance == pytest.approx(0.25)


def test_negative_cosines_add_nothing() -> None:
    """A cosine below zero is no evidence of relevance, not negative evidence."""
    dense = [_m("a", 0.5), _m("b", -0.2)]
    found = signals([], dense)
    fuse(found, [], dense, RecallSettings())
    assert found["b"].relevance == 0.0


def test_rrf_fusion_is_kept_as_an_option() -> None:
    """fusion=rrf gives 1.0 to a record first in both lists, by the RRF formula."""
    text, dense = [_m("a", 3.0), _m("b", 1.0)], [_m("a", 0.9)]
    found = signals(text, dense)
    fuse(found, text, dense, RecallSettings(fusion="rrf", rrf_k=60))
    assert found["a"].relevance == pytest.approx(1.0)
    assert found["b"].relevance == pytest.approx((1 / 62) / (2 / 61))


def test_neighbours_lend_relevance_over_distance() -> None:
    """A memory gains context_weight x the best neighbour relevance over its distance."""
    cfg = RecallSettings(context_weight=0.4, context_radius=2, episode_weight=0.0)
    placed = [Placed(i, "short", pos, 1000.0) for pos, i in enumerate("abcde", start=10)]
    got = boosts({"c": 1.0}, placed, cfg)
    assert got["b"].context == pytest.approx(0.4)
    assert got["d"].context == pytest.approx(0.4)
    assert got["a"].context == pytest.approx(0.2)
    assert got["c"].context == 0.0


def test_context_stops_at_time_gaps_tiers_and_radius() -> None:
    """No context across an episode gap, across tiers, or beyond the radius."""
    cfg = RecallSettings(context_weight=0.5, context_radius=1, episode_gap_seconds=60)
    placed = [
        Placed("a", "short", 1, 0.0),
        Placed("b", "short", 2, 10_000.0),  # written next, but hours later
        Placed("c", "near", 3, 10_000.0),
        Placed("d", "short", 5, 10_000.0),  # two places from b
    ]
    got = boosts({"a": 1.0, "c": 1.0, "d": 1.0}, placed, cfg)
    assert got["b"].context == 0.0


def test_episodes_share_their_best_relevance() -> None:
    """Memories within the gap of each other (chained) share the best one's relevance."""
    cfg = RecallSettings(context_weight=0.0, episode_weight=0.3, episode_gap_seconds=100)
    placed = [
        Placed("a", "short", 1, 0.0),
        Placed("b", "short", 2, 90.0),
        Placed("c", "short", 3, 180.0),  # 180 s after a, but chained through b
        Placed("d", "short", 4, 1000.0),
    ]
    got = boosts({"a": 0.9, "d": 0.2}, placed, cfg)
    assert [got[i].episode for i in "abc"] == [pytest.approx(0.27)] * 3
    assert got["d"].episode == pytest.approx(0.06)


CHAT = [
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: Wow, that's cool, Caroline! What happened that was so awesome?",
    "Caroline: The transgender stories were so inspiring, I was so happy and thankful.",
]
FILLER = [
    "Melanie: We went camping in the mountains with the kids last weekend.",
    "Caroline: I painted a sunset over the lake for my art class.",
    "Melanie: My daughter started learning to play the violin.",
    "Caroline: I am reading a novel about a lighthouse keeper.",
    "Melanie: The pottery workshop made me feel calm and creative.",
    "Caroline: I adopted a small grey cat from the shelter.",
]


def _entry(text: str, when: str) -> NewShort:
    return NewShort(content=text, occurred_at=when)


def test_full_retriever_lifts_the_exchange_around_a_match(memory, store_name) -> None:
    """With context, the turns next to a match pull ahead of unrelated memories."""
    memory.remember_many([_entry(t, "2023-05-01T10:00:00Z") for t in FILLER[:3]], store=store_name)
    memory.remember_many([_entry(t, "2023-05-08T13:56:00Z") for t in CHAT], store=store_name)
    memory.remember_many([_entry(t, "2023-06-01T09:00:00Z") for t in FILLER[3:]], store=store_name)
    query = "Did Caroline go to a support group?"

    def lead(retriever: str) -> float:
        hits = memory.search(query, store=store_name, n_results=9, retriever=retriever)
        assert hits[0].content == CHAT[0]
        replies = [h for h in hits if h.content in CHAT[1:]]
        if retriever == "full":
            assert all(h.score_detail["context"] > 0 for h in replies)
        else:
            assert all(h.score_detail["context"] == 0 for h in replies)
        best_filler = max(h.score for h in hits if h.content in FILLER)
        return min(h.score for h in replies) / best_filler

    with_context, without = lead("full"), lead("fused")
    assert with_context > 1.5
    assert with_context > without


def test_search_refuses_an_unknown_retriever_over_http(server, store_name) -> None:
    """retriever must be full, fused, bm25 or dense: anything else is a 4xx, no trace."""
    c = server.client()
    c.post("/short", params={"store": store_name}, json={"content": "Mel runs on Sundays"})
    for retriever in ("full", "fused", "bm25", "dense"):
        r = c.post("/search", params={"store": store_name},
                   json={"query": "when does Mel run?", "retriever": retriever})
        assert r.status_code == 200, r.text
        assert r.json()["results"][0]["content"] == "Mel runs on Sundays"
    r = c.post("/search", params={"store": store_name}, json={"query": "x", "retriever": "magic"})
    assert 400 <= r.status_code < 500
    assert "error" in r.json() and "Traceback" not in r.text
