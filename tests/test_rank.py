"""Cross-tier ranking (halls.recall.rank): pure functions, checked by hand-made candidates."""

from __future__ import annotations

import math

import pytest

from halls.config import RecallSettings
from halls.models import Hit, LongFact, OpenLoop, Record, ShortEntry, new_id, to_datetime
from halls.recall.fusion import rrf
from halls.recall.rank import DAY, Candidate, rank, recency, tier_weight

NOW = 1_700_000_000.0
CFG = RecallSettings()
K = CFG.rrf_k


def short(when: float = NOW) -> ShortEntry:
    t = to_datetime(when)
    return ShortEntry(id=new_id("short"), content="s", created_at=t, occurred_at=t)


def loop(when: float = NOW) -> OpenLoop:
    t = to_datetime(when)
    return OpenLoop(id=new_id("near"), intent="n", created_at=t, occurred_at=t)


def fact(evidence: int = 1, status: str = "active", confirmed: float = NOW) -> LongFact:
    t = to_datetime(confirmed)
    return LongFact(
        id=new_id("long"),
        content="f",
        evidence_count=evidence,
        status=status,  # type: ignore[arg-type]
        first_seen=t,
        last_confirmed=t,
        created_at=t,
        occurred_at=t,
    )


def cand(record: Record, bm25_rank: int | None = 1, dense_rank: int | None = 1) -> Candidate:
    """A candidate fused by reciprocal rank over two lists."""
    return Candidate(
        record=record,
        bm25_rank=bm25_rank,
        bm25=None if bm25_rank is None else 10.0 / bm25_rank,
        dense_rank=dense_rank,
        cosine=None if dense_rank is None else 1.0 / dense_rank,
        relevance=rrf((bm25_rank, dense_rank), K, lists=2),
    )


def score(c: Candidate, now: float, cfg: RecallSettings) -> Hit:
    """The hit of one candidate ranked alone."""
    return rank([c], now, cfg, 1)[0]


def test_superseded_fact_ranks_below_its_replacement() -> None:
    """With include_superseded, history (better evidenced) still ranks below the current fact."""
    old = fact(evidence=5, status="superseded")
    new = fact(evidence=1)
    hits = rank([cand(old, 1, 1), cand(new, 2, 2)], NOW, CFG, 2)
    assert [h.id for h in hits] == [new.id, old.id]


def test_relevance_is_one_for_first_in_both_lists() -> None:
    """Rank 1 in both lists normalises to relevance 1.0 exactly."""
    hit = score(cand(short()), NOW, CFG)
    assert hit.score_detail["relevance"] == 1.0
    assert hit.score == 1.0


def test_relevance_follows_rrf_formula() -> None:
    """relevance = sum(1/(k+rank)) / (2/(k+1)); one list alone gives at most 0.5."""
    only_text = score(cand(short(), 1, None), NOW, CFG)
    assert only_text.score_detail["relevance"] == pytest.approx(0.5)
    mixed = score(cand(short(), 3, 7), NOW, CFG)
    expected = (1 / (K + 3) + 1 / (K + 7)) / (2 / (K + 1))
    assert mixed.score_detail["relevance"] == pytest.approx(expected, abs=1e-6)
    assert mixed.score == pytest.approx(expected, abs=1e-6)


def test_relevance_falls_with_rank() -> None:
    """A better rank in either list never scores lower."""
    scores = [score(cand(short(), r, r), NOW, CFG).score for r in range(1, 30)]
    assert scores == sorted(scores, reverse=True)
    assert len(set(scores)) == len(scores)


def test_tier_weights_short_near_long() -> None:
    """Equal ranks and times: short 1.0, near 0.9, long 0.8 (evidence 1)."""
    s, n, f = (score(cand(r), NOW, CFG) for r in (short(), loop(), fact()))
    assert (s.score, n.score, f.score) == pytest.approx((1.0, 0.9, 0.8))
    assert [s.score_detail["tier_weight"], n.score_detail["tier_weight"]] == [1.0, 0.9]
    assert f.score_detail["evidence"] == 1.0


def test_tier_weights_come_from_settings() -> None:
    """Configured tier weights replace the defaults."""
    cfg = RecallSettings(tier_weight_short=0.5, tier_weight_near=2.0, tier_weight_long=1.5)
    assert tier_weight(short(), cfg) == (0.5, 1.0)
    assert tier_weight(loop(), cfg) == (2.0, 1.0)
    assert tier_weight(fact(), cfg) == (1.5, 1.0)


@pytest.mark.parametrize("evidence", [1, 2, 5, 10, 100])
def test_evidence_multiplier_is_one_plus_gain_log(evidence: int) -> None:
    """The long-tier evidence multiplier is 1 + gain x ln(evidence_count)."""
    _, mult = tier_weight(fact(evidence), CFG)
    assert mult == pytest.approx(1 + CFG.evidence_gain * math.log(evidence))


def test_evidence_multiplier_grows_and_lifts_confirmed_facts() -> None:
    """More evidence, higher score; a 10x-confirmed fact beats a one-off at the same rank."""
    mults = [tier_weight(fact(n), CFG)[1] for n in (1, 2, 4, 8, 16)]
    assert mults == sorted(mults) and len(set(mults)) == 5
    # Logarithmic: each doubling adds the same amount.
    steps = [b - a for a, b in zip(mults, mults[1:], strict=False)]
    assert steps == pytest.approx([steps[0]] * 4)
    one, ten = fact(1), fact(10)
    hits = rank([cand(one), cand(ten)], NOW, CFG, 2)
    assert [h.id for h in hits] == [ten.id, one.id]


def test_zero_evidence_is_treated_as_one() -> None:
    """evidence_count below 1 cannot make the multiplier negative or undefined."""
    assert tier_weight(fact(0), CFG)[1] == 1.0


def test_demoted_fact_ranks_below_active_ones() -> None:
    """A demoted fact, even best-matched and well-evidenced, sinks below active facts."""
    demoted = fact(evidence=10, status="demoted")
    twin = fact(evidence=10)
    weak_active = fact(evidence=1)
    hits = rank([cand(demoted, 1, 1), cand(twin, 1, 1), cand(weak_active, None, 20)], NOW, CFG, 3)
    assert [h.id for h in hits] == [twin.id, weak_active.id, demoted.id]
    d = next(h for h in hits if h.id == demoted.id)
    assert d.score_detail["evidence"] == pytest.approx(
        (1 + CFG.evidence_gain * math.log(10)) * CFG.demoted_factor, abs=1e-4
    )


def test_recency_is_one_now_and_bounded_below() -> None:
    """Recency is 1 for now (and the future), halves its boost per half-life, stays >= 1-w."""
    w, half = CFG.recency_weight, CFG.recency_half_life_days
    assert recency(short(NOW), NOW, CFG) == 1.0
    assert recency(short(NOW + 5 * DAY), NOW, CFG) == 1.0
    assert recency(short(NOW - half * DAY), NOW, CFG) == pytest.approx(1 - w / 2)
    ages = [0, 1, 10, 100, 1000, 100_000]
    values = [recency(short(NOW - a * DAY), NOW, CFG) for a in ages]
    assert values == sorted(values, reverse=True)
    assert all(1 - w <= v <= 1 for v in values)
    assert values[-1] == pytest.approx(1 - w)


def test_recency_weight_zero_disables_it() -> None:
    """With recency_weight 0, age does not matter."""
    cfg = RecallSettings(recency_weight=0.0)
    assert recency(short(NOW - 1000 * DAY), NOW, cfg) == 1.0


def test_fact_recency_uses_last_confirmed() -> None:
    """A long-term fact ages from last_confirmed, not from when it was first seen."""
    f = fact(confirmed=NOW).model_copy(update={"occurred_at": to_datetime(NOW - 1000 * DAY)})
    assert recency(f, NOW, CFG) == 1.0


def test_newer_memory_wins_a_tie_in_relevance() -> None:
    """Same ranks and tier: the more recent memory scores higher."""
    old, new = short(NOW - 90 * DAY), short(NOW - DAY)
    hits = rank([cand(old), cand(new)], NOW, CFG, 2)
    assert [h.id for h in hits] == [new.id, old.id]


def test_rank_sorts_truncates_and_explains() -> None:
    """rank() returns the n best, best first, each with every score part."""
    records = [short() for _ in range(6)]
    cands = [cand(r, i + 1, i + 1) for i, r in enumerate(records)]
    hits = rank(list(reversed(cands)), NOW, CFG, 4)
    assert [h.id for h in hits] == [r.id for r in records[:4]]
    detail = hits[1].score_detail
    assert set(detail) >= {
        "bm25_rank", "bm25", "dense_rank", "cosine", "relevance", "tier_weight", "evidence",
        "recency",
    }  # fmt: skip
    assert detail["bm25_rank"] == 2 and detail["dense_rank"] == 2
    assert detail["bm25"] == 5.0 and detail["cosine"] == 0.5
    parts = detail["tier_weight"] * detail["evidence"] * detail["recency"]
    assert hits[1].score == pytest.approx(detail["relevance"] * parts, abs=1e-5)


def test_missing_list_shows_as_none_in_detail() -> None:
    """A hit found by one search only has None for the other's rank and score."""
    hit = score(cand(short(), None, 4), NOW, CFG)
    assert hit.score_detail["bm25_rank"] is None and hit.score_detail["bm25"] is None
    assert hit.score_detail["dense_rank"] == 4


def test_ties_break_by_id_for_a_stable_order() -> None:
    """Equal scores come back in id order, so pages of results are stable."""
    records = [short() for _ in range(5)]
    hits = rank([cand(r) for r in reversed(records)], NOW, CFG, 5)
    assert [h.id for h in hits] == sorted(r.id for r in records)


def test_rank_returns_the_best_n_of_every_candidate_scored() -> None:
    """rank(n) = every candidate scored, sorted by (-score, id), cut to n; ties by id."""
    records = [short(NOW - d * DAY) for d in range(12)] + [loop(), fact(3), fact(1, "demoted")]
    cands = [cand(r, 1 + i % 5, 1 + (i * 7) % 11) for i, r in enumerate(records)]
    # Two equal candidates whose ids decide their order.
    twin = short()
    cands += [cand(twin, 2, 2), cand(short(), 2, 2)]
    every = sorted((score(c, NOW, CFG) for c in cands), key=lambda h: (-h.score, h.id))
    for n in (1, 4, len(cands), len(cands) + 3):
        assert rank(cands, NOW, CFG, n) == every[:n]
