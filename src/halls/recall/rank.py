"""Cross-tier ranking (pure): the fused relevance and bonuses, weighed by tier and time.

    score = relevance x tier_weight x evidence x recency x importance

- relevance: the fused relevance of the BM25 and dense searches, in
  [0, 1] (``halls.recall.fusion``: normalised scores by default, or
  reciprocal-rank fusion), plus, with the full retriever, the feedback
  bonus of ``halls.recall.feedback``, the context and episode bonuses of
  ``halls.recall.neighbours``, the speaker bonus of ``halls.recall.speakers``,
  the date bonuses of ``halls.recall.when``, the substance prior of
  ``halls.recall.substance`` and the association bonus of
  ``halls.recall.spread`` (spreading activation over the graph).
- tier_weight: short 1.0, near 0.9, long 0.8, journal 0.7 (configurable).
- evidence (long only): 1 + gain x ln(evidence_count), so a fact confirmed
  10 times outranks a one-off mention; a demoted or superseded fact is
  multiplied by ``demoted_factor`` and sinks below every active one.
- recency: (1 - w) + w x strength, in [1 - w, 1], where strength
  (``halls.recall.strength``) halves with the time since the record was last
  of use (recalled, confirmed or written), more slowly the more it was
  recalled and confirmed.
- importance: 1 + importance_weight x (2 x importance - 1), in
  [1 - w, 1 + w] (``halls.importance``): the writer's word on how much the
  memory matters; 1 when it is unset, so an unmarked store ranks as before.
"""

from __future__ import annotations

import heapq
import math
from typing import NamedTuple

from halls.config import RecallSettings
from halls.importance import rank_factor
from halls.models import Hit, JournalEvent, LongFact, OpenLoop, Record, Retention
from halls.recall.strength import strength, weight
from halls.recall.substance import substance_bonus

DAY = 86400.0


class Candidate(NamedTuple):
    # Named tuples (here and in fusion): a search builds hundreds per stage.
    record: Record
    bm25_rank: int | None
    bm25: float | None
    dense_rank: int | None
    cosine: float | None
    # The fused relevance of halls.recall.fusion, in [0, 1].
    relevance: float
    context: float = 0.0
    episode: float = 0.0
    speaker: float = 0.0
    time: float = 0.0
    feedback: float = 0.0
    substance: float = 0.0
    retention: Retention | None = None
    association: float = 0.0


def tier_weight(record: Record, cfg: RecallSettings) -> tuple[float, float]:
    """(tier weight, evidence multiplier) for a record."""
    if isinstance(record, LongFact):
        evidence = 1.0 + cfg.evidence_gain * math.log(max(record.evidence_count, 1))
        # Demoted facts, and superseded ones (history, shown only when asked),
        # sink below every active fact on the same subject.
        if record.status in ("demoted", "superseded"):
            evidence *= cfg.demoted_factor
        return cfg.tier_weight_long, evidence
    if isinstance(record, OpenLoop):
        return cfg.tier_weight_near, 1.0
    if isinstance(record, JournalEvent):
        return cfg.tier_weight_journal, 1.0
    return cfg.tier_weight_short, 1.0


def recency(
    record: Record, now: float, cfg: RecallSettings, retention: Retention | None = None
) -> float:
    return weight(strength(record, retention, now, cfg), cfg)


class _Weighed(NamedTuple):
    """A candidate's score and the factors it came from."""

    candidate: Candidate
    relevance: float
    weight: float
    evidence: float
    strength: float
    fresh: float
    important: float
    score: float


def importance_of(record: Record) -> float | None:
    return getattr(record, "importance", None)


def _weigh(c: Candidate, now: float, cfg: RecallSettings) -> _Weighed:
    tier, evidence = tier_weight(c.record, cfg)
    strong = strength(c.record, c.retention, now, cfg)
    important = rank_factor(importance_of(c.record), cfg.importance_weight)
    return _scored(c, tier, evidence, strong, weight(strong, cfg), important)


def _scored(
    c: Candidate, tier: float, evidence: float, strong: float, fresh: float, important: float
) -> _Weighed:
    bonus = c.feedback + c.context + c.episode + c.speaker + c.time + c.substance + c.association
    total = (c.relevance + bonus) * tier * evidence * fresh * important
    return _Weighed(c, c.relevance, tier, evidence, strong, fresh, important, round(total, 6))


def _hit(w: _Weighed) -> Hit:
    c, r = w.candidate, w.candidate.record
    return Hit(
        id=r.id,
        tier=r.tier,  # type: ignore[attr-defined]
        content=r.content,  # type: ignore[attr-defined]
        topic=r.topic,
        metadata=r.metadata,
        occurred_at=r.occurred_at,
        created_at=r.created_at,
        score=w.score,
        # Set by halls.recall.relevance.scored, from the whole search's bests.
        relevance=0.0,
        importance=importance_of(r),
        scope=r.scope,
        score_detail={
            "bm25_rank": c.bm25_rank,
            "bm25": None if c.bm25 is None else round(c.bm25, 4),
            "dense_rank": c.dense_rank,
            "cosine": None if c.cosine is None else round(c.cosine, 4),
            "relevance": round(w.relevance, 6),
            "feedback": round(c.feedback, 6),
            "context": round(c.context, 6),
            "episode": round(c.episode, 6),
            "speaker": round(c.speaker, 6),
            "time": round(c.time, 6),
            "substance": round(c.substance, 6),
            "association": round(c.association, 6),
            "tier_weight": w.weight,
            "evidence": round(w.evidence, 4),
            "strength": round(w.strength, 4),
            "recency": round(w.fresh, 4),
            "importance": round(w.important, 4),
        },
    )


def rank(
    candidates: list[Candidate], now: float, cfg: RecallSettings, n: int, substance: bool = False
) -> list[Hit]:
    """The ``n`` best hits; ``substance`` adds the prior of ``halls.recall.substance``."""
    # Scores first; only the n returned become Hits (a Hit costs more than its score).
    weighed = [_weigh(c, now, cfg) for c in candidates]
    weighed.sort(key=_order)
    if substance and cfg.substance_weight > 0:
        weighed = _with_substance(weighed, now, cfg, n)
    return [_hit(w) for w in weighed[:n]]


def merge(first: list[Hit], second: list[Hit], n: int) -> list[Hit]:
    """The ``n`` best of two rankings of disjoint candidates (the order ``rank`` gives)."""
    return sorted(first + second, key=lambda h: (-h.score, h.id))[:n]


def _order(w: _Weighed) -> tuple[float, str]:
    return (-w.score, w.candidate.record.id)


def _with_substance(
    weighed: list[_Weighed], now: float, cfg: RecallSettings, n: int
) -> list[_Weighed]:
    """Add the substance bonus to every candidate that could reach the top ``n`` with it.

    Reading a memory's words costs more than the rest of its score; the bonus
    is at most ``substance_weight``, so a candidate whose score cannot reach
    the n-th best even with all of it is left as it is (it is not returned).
    """
    best: list[float] = []  # a min-heap of the n best scores so far
    out = []
    for w in weighed:  # best first, so the bar only rises
        ceiling = w.score + cfg.substance_weight * w.weight * w.evidence * w.fresh * w.important
        if len(best) < n or ceiling + 1e-6 >= best[0]:  # scores are rounded to 1e-6
            content = getattr(w.candidate.record, "content", "")
            c = w.candidate._replace(substance=substance_bonus(content, cfg))
            # Only the bonus changed: the record's weights stand as weighed.
            scored = _scored(c, w.weight, w.evidence, w.strength, w.fresh, w.important)
            if len(best) < n:
                heapq.heappush(best, scored.score)
            else:
                heapq.heappushpop(best, scored.score)
            out.append(scored)
        else:
            out.append(w)
    out.sort(key=_order)
    return out


def below_facts(hits: list[Hit], candidates: list[Candidate]) -> list[Hit]:
    """``hits`` with each short-term entry folded into a fact among them ranked after it.

    A consolidation folds the entries a fact was made from into it (the
    fact's ``derived_from``); they stay findable until their TTL. When a
    folded entry and its fact are both hits, the entry's score is capped
    just below the fact's (``FOLD_GAP``) and its ``score_detail`` names the
    fact (``folded_into``). An entry whose fact is not a hit keeps its own
    score: it may be the only trace of what it said.
    """
    facts = {h.id: h for h in hits if h.tier == "long"}
    if not facts:
        return hits
    into: dict[str, str] = {}
    for c in candidates:
        r = c.record
        if r.id in facts:
            for src in getattr(r, "derived_from", ()):
                into.setdefault(src, r.id)
    out = []
    for h in hits:
        fid = into.get(h.id) if h.tier == "short" else None
        if fid is None:
            out.append(h)
            continue
        score = min(h.score, round(facts[fid].score - FOLD_GAP, 6))
        out.append(
            h.model_copy(
                update={"score": score, "score_detail": {**h.score_detail, "folded_into": fid}}
            )
        )
    return sorted(out, key=lambda h: (-h.score, h.id))


# How far below its fact a folded entry's score is capped.
FOLD_GAP = 1e-6
