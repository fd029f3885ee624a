"""The substance prior: how much a memory states, and how it enters the ranking."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from halls import Memory, Settings
from halls.config import RecallSettings
from halls.embed import Embedder
from halls.models import NewShort, ShortEntry, new_id, to_datetime
from halls.recall.rank import Candidate, rank
from halls.recall.speakers import without_label
from halls.recall.substance import stated_words, substance_bonus

NOW = 1_700_000_000.0
CFG = RecallSettings(substance_weight=0.2, substance_words=20)
LONG = (
    "Melanie: I ran a charity race for mental health last Saturday, raised money for the "
    "local shelter, met volunteers from three towns and finished the course in record time "
    "despite the rain, wind and a sore ankle from training."
)


def _short(content: str, when: float = NOW) -> ShortEntry:
    t = to_datetime(when)
    return ShortEntry(id=new_id("short"), content=content, created_at=t, occurred_at=t)


def _cand(content: str, relevance: float, when: float = NOW) -> Candidate:
    return Candidate(
        record=_short(content, when),
        bm25_rank=None,
        bm25=None,
        dense_rank=None,
        cosine=None,
        relevance=relevance,
    )


def test_without_label_strips_only_a_speaker_label() -> None:
    """'Name: ' goes; a colon inside a sentence, or a long run of words before one, stays."""
    assert without_label("Caroline: I went to a support group") == "I went to a support group"
    assert without_label("user: remind me at 9:30") == "remind me at 9:30"
    plain = "The plan was simple and we followed it: ship on Friday"
    assert without_label(plain) == plain
    assert without_label("no label here") == "no label here"


def test_stated_words_count_distinct_content_words_outside_questions() -> None:
    """Stop words, repeats, the speaker label and question sentences add nothing."""
    assert stated_words("Nate: Sure thing! See you later!", 20) == 4  # sure thing see later
    assert stated_words("Caroline: Wow! Did you see that band?", 20) == 1  # wow
    assert stated_words("Melanie: What type of music do you play?", 20) == 0
    assert stated_words("Tim: The dog, the dog and the dog.", 20) == 1
    assert stated_words("Jon: Opening night is tomorrow? Yes. Studio opens Friday.", 20) == 4
    assert stated_words("", 20) == 0


def test_stated_words_stop_counting_at_the_limit() -> None:
    """The count saturates at the limit, whatever the memory's length."""
    assert stated_words(LONG, 1000) > 20
    assert stated_words(LONG, 20) == 20
    assert stated_words(LONG, 5) == 5


def test_substance_bonus_is_the_weighted_share_of_the_words_needed() -> None:
    """weight x min(1, stated / substance_words); a bare question or weight 0 gains nothing."""
    assert substance_bonus(LONG, CFG) == pytest.approx(0.2)
    assert substance_bonus("Nate: Sure thing! See you later!", CFG) == pytest.approx(0.2 * 4 / 20)
    assert substance_bonus("Melanie: What type of music do you play?", CFG) == 0.0
    assert substance_bonus(LONG, RecallSettings(substance_weight=0.0)) == 0.0
    assert substance_bonus(LONG, RecallSettings(substance_weight=0.5, substance_words=100)) == (
        pytest.approx(0.5 * stated_words(LONG, 100) / 100)
    )


def test_rank_with_substance_breaks_a_relevance_tie_for_the_statement() -> None:
    """Equal relevance: the memory that states something ranks above the bare question."""
    question = _cand("Melanie: What did you run last Saturday?", 0.8)
    statement = _cand(LONG, 0.8)
    plain = rank([question, statement], NOW, CFG, 2)
    assert [h.score for h in plain] == [plain[0].score] * 2
    assert all(h.score_detail["substance"] == 0 for h in plain)
    hits = rank([question, statement], NOW, CFG, 2, substance=True)
    assert [h.id for h in hits] == [statement.record.id, question.record.id]
    top, bottom = hits[0].score_detail, hits[1].score_detail
    assert top["substance"] == pytest.approx(0.2) and bottom["substance"] == 0.0
    parts = top["tier_weight"] * top["evidence"] * top["recency"]
    assert hits[0].score == pytest.approx((0.8 + 0.2) * parts, abs=1e-5)


def test_substance_is_a_prior_not_a_match() -> None:
    """A clearly more relevant short memory stays above a long one that matches less."""
    short = _cand("Nate: I recommend Dune.", 0.9)
    long = _cand(LONG, 0.5)
    hits = rank([long, short], NOW, CFG, 2, substance=True)
    assert [h.id for h in hits] == [short.record.id, long.record.id]


def test_rank_skips_only_candidates_that_cannot_reach_the_top() -> None:
    """The bounded pass returns exactly what scoring every candidate's substance would."""
    rng = random.Random(5)
    words = ["the", "a", "ship", "paint", "race", "dog", "music", "lake", "we", "did", "what"]
    cands = []
    for i in range(300):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 40)))
        if rng.random() < 0.3:
            text += "?"
        when = NOW - rng.uniform(0, 90) * 86400
        cands.append(_cand(f"P{i % 3}: {text}", rng.uniform(0.0, 1.0), when))
    full = [c._replace(substance=substance_bonus(c.record.content, CFG)) for c in cands]
    for n in (1, 5, 10, 20, 100):
        expected = [(h.id, h.score) for h in rank(full, NOW, CFG, n)]
        got = [(h.id, h.score) for h in rank(cands, NOW, CFG, n, substance=True)]
        assert got == expected, n


def test_search_explains_substance_for_the_full_retriever_only(
    tmp_path: Path, embedder: Embedder, store_name: str
) -> None:
    """Through Memory.search: the bonus shows in score_detail with 'full', never with 'fused'."""
    entries = [
        NewShort(content=LONG, occurred_at="2023-05-01T10:00:00Z"),
        NewShort(content="Caroline: Did you run the race?", occurred_at="2023-07-01T10:00:00Z"),
    ]
    settings = Settings(data_dir=tmp_path / "data")
    with Memory(settings, embedder=embedder) as m:
        m.remember_many(entries, store=store_name)
        full = {h.content: h.score_detail for h in m.search("charity race", store=store_name)}
        fused = m.search("charity race", store=store_name, retriever="fused")
    assert full[LONG]["substance"] == pytest.approx(0.2)
    assert full["Caroline: Did you run the race?"]["substance"] == 0.0
    assert len(fused) == 2 and all(h.score_detail["substance"] == 0 for h in fused)
    off = Settings(data_dir=tmp_path / "data", recall=RecallSettings(substance_weight=0))
    with Memory(off, embedder=embedder) as m:
        hits = m.search("charity race", store=store_name)
    assert len(hits) == 2 and all(h.score_detail["substance"] == 0 for h in hits)
