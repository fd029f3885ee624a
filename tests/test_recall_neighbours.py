"""Score fusion, neighbours and episodes, speakers, and the /search retrievers."""

from __future__ import annotations

import pytest

from halls.config import RecallSettings
from halls.models import Match, NewShort
from halls.recall.fusion import Normaliser, fuse, signals
from halls.recall.neighbours import Placed, boosts


def _m(i: str, score: float) -> Match:
    return Match(i, "short", score)


def test_score_fusion_normalises_each_list_by_its_best() -> None:
    """The best of both lists scores 1; a BM25-only hit scores its share of the BM25 half."""
    text = [_m("a", 8.0), _m("b", 4.0)]
    dense = [_m("a", 0.6), _m("c", 0.3)]
    cfg = RecallSettings(bm25_weight=0.5)
    found = fuse(signals(text, dense), Normaliser(text, dense, cfg), cfg)
    assert found["a"].relevance == pytest.approx(1.0)
    assert found["b"].relevance == pytest.approx(0.25)
    assert found["c"].relevance == pytest.approx(0.25)
    assert (found["b"].bm25_rank, found["c"].dense_rank) == (2, 2)


def test_score_fusion_with_one_list_uses_it_whole() -> None:
    """With BM25 alone (retriever bm25), relevance is the BM25 share of the best."""
    text = [_m("a", 8.0), _m("b", 2.0)]
    cfg = RecallSettings()
    found = fuse(signals(text, []), Normaliser(text, [], cfg), cfg)
    assert found["b"].relevance == pytest.approx(0.25)


def test_negative_cosines_add_nothing() -> None:
    """A cosine below zero is no evidence of relevance, not negative evidence."""
    dense = [_m("a", 0.5), _m("b", -0.2)]
    cfg = RecallSettings()
    found = fuse(signals([], dense), Normaliser([], dense, cfg), cfg)
    assert found["b"].relevance == 0.0


def test_rrf_fusion_is_kept_as_an_option() -> None:
    """fusion=rrf gives 1.0 to a record first in both lists, by the RRF formula."""
    text, dense = [_m("a", 3.0), _m("b", 1.0)], [_m("a", 0.9)]
    cfg = RecallSettings(fusion="rrf", rrf_k=60)
    found = fuse(signals(text, dense), Normaliser(text, dense, cfg), cfg)
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
        r = c.post(
            "/search",
            params={"store": store_name},
            json={"query": "when does Mel run?", "retriever": retriever},
        )
        assert r.status_code == 200, r.text
        assert r.json()["results"][0]["content"] == "Mel runs on Sundays"
    r = c.post("/search", params={"store": store_name}, json={"query": "x", "retriever": "magic"})
    assert 400 <= r.status_code < 500
    assert "error" in r.json() and "Traceback" not in r.text


def test_query_dates_become_windows() -> None:
    """Day, month-and-year, bare month and year phrasings each give their span."""
    from datetime import UTC, datetime

    from halls.recall.when import windows

    def ts(*a: int) -> float:
        return datetime(*a, tzinfo=UTC).timestamp()

    (day,) = windows("What did Mel paint on October 13, 2023?")
    assert (day.start, day.end) == (ts(2023, 10, 13), ts(2023, 10, 14))
    assert windows("found on 1 February, 2023")[0].start == ts(2023, 2, 1)
    (month,) = windows("her workout class in December 2023")
    assert (month.start, month.end) == (ts(2023, 12, 1), ts(2024, 1, 1))
    assert windows("camping in June")[0].month == 6
    assert windows("the beach in 2023")[0].start == ts(2023, 1, 1)
    assert windows("May I ask what she likes?") == []
    # An impossible day falls back to the month it names.
    assert windows("on 31 February, 2023")[0].start == ts(2023, 2, 1)


def test_time_bonus_is_full_inside_and_halves_outside() -> None:
    """Inside a named day: time_weight; one half-life after it: half of that."""
    from halls.recall.when import time_bonus, windows

    cfg = RecallSettings(time_weight=0.2, time_half_life_days=7)
    (day,) = windows("on 13 October 2023")
    assert day.start is not None and day.end is not None
    assert time_bonus(day.start + 3600, [day], cfg) == pytest.approx(0.2)
    assert time_bonus(day.end + 7 * 86400, [day], cfg) == pytest.approx(0.1)
    assert time_bonus(day.start, [], cfg) == 0.0


def test_speaker_labels_match_names_in_the_query() -> None:
    """'Caroline: ...' is said by Caroline; a colon later in a sentence is no label."""
    from halls.recall.speakers import query_words, speaker_bonus, speaker_of

    cfg = RecallSettings(speaker_weight=0.2)
    assert speaker_of("Caroline: I went to a support group") == {"caroline"}
    assert speaker_of("user: remind me at 9:30") == {"user"}
    assert speaker_of("The plan was simple and we followed it: ship on Friday") == frozenset()
    assert speaker_of("no label here") == frozenset()
    words = query_words("What is Caroline's identity?")
    assert speaker_bonus("Caroline: I am a transgender woman", words, cfg) == 0.2
    assert speaker_bonus("Melanie: that is great", words, cfg) == 0.0


def test_speaker_and_date_bonuses_show_in_score_detail(memory, store_name) -> None:
    """A turn by the named speaker on the named day carries both bonuses, explained."""
    memory.remember_many(
        [
            _entry("Melanie: I painted a lake at sunrise.", "2023-10-13T15:00:00Z"),
            _entry("Caroline: I painted my first portrait.", "2023-03-02T15:00:00Z"),
        ],
        store=store_name,
    )
    hits = memory.search("What did Melanie paint on October 13, 2023?", store=store_name)
    top = hits[0]
    assert top.content.startswith("Melanie:")
    assert top.score_detail["speaker"] > 0 and top.score_detail["time"] > 0
    other = next(h for h in hits if h.content.startswith("Caroline:"))
    assert other.score_detail["speaker"] == 0 and other.score_detail["time"] < 0.01
    plain = memory.search(
        "What did Melanie paint on October 13, 2023?", store=store_name, retriever="fused"
    )
    assert all(h.score_detail["speaker"] == 0 and h.score_detail["time"] == 0 for h in plain)
