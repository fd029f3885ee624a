"""Memory strength (pure): how far a record has faded since it was last of use.

    strength = 0.5 ** (age / half_life), in (0, 1]

- age: time since the record was last used (opened by id, or shown in a
  context block; being returned by a search is not use: counted, it favoured
  whatever ranked high once, issue 52) or, never used, since it happened (a
  fact: since it was last confirmed by a later statement);
- half_life = ``recency_half_life_days`` x (1 + ln(1 + access_count)), and
  for a fact also x (1 + ln(evidence_count)): every use and every
  confirmation makes a memory fade more slowly, as the spacing effect of
  forgetting curves has it, with diminishing returns;
- a memory its writer marked important (``halls.importance``) fades more
  slowly, a low one faster: the half-life is also multiplied by
  ``importance_half_life_factor ** (2 x importance - 1)`` (x 1 unset);
- superseded and demoted facts fade ``superseded_decay`` times faster: they
  are history;
- pinned records (a pinned short-term entry, a pinned fact) never fade;
- a fact with at least ``strength_floor_evidence`` confirmations never falls
  below ``strength_floor``: what was established many times is not lost to
  a quiet season.

Recall weighs a hit by (1 - recency_weight) + recency_weight x strength; the
consolidator retires an unpinned fact whose strength fell below
``consolidator.retire_below``. With the defaults (30 days, 0.2), a memory
nobody used for a year keeps 80% of its score and an unconfirmed fact is
retired after about four months; one opened ten times halves every 102 days.
"""

from __future__ import annotations

import math

from halls.config import RecallSettings
from halls.importance import lifetime_factor
from halls.models import LongFact, Record, Retention, ShortEntry

DAY = 86400.0


def half_life_days(record: Record, retention: Retention | None, cfg: RecallSettings) -> float:
    accessed = retention.access_count if retention is not None else 0
    days = cfg.recency_half_life_days * (1.0 + math.log1p(max(accessed, 0)))
    importance = getattr(record, "importance", None)
    if importance is not None:
        days *= lifetime_factor(importance, cfg.importance_half_life_factor)
    if isinstance(record, LongFact):
        days *= 1.0 + math.log(max(record.evidence_count, 1))
        if record.status in ("superseded", "demoted"):
            days /= cfg.superseded_decay
    return days


def last_used(record: Record, retention: Retention | None) -> float:
    """When the record was last of use: reinforced, confirmed, or written."""
    when = record.last_confirmed if isinstance(record, LongFact) else record.occurred_at
    at = when.timestamp()
    return max(at, retention.last_accessed) if retention is not None else at


def pinned(record: Record) -> bool:
    return isinstance(record, (ShortEntry, LongFact)) and record.pinned


def strength(record: Record, retention: Retention | None, now: float, cfg: RecallSettings) -> float:
    if pinned(record):
        return 1.0
    age_days = max(0.0, now - last_used(record, retention)) / DAY
    value = 0.5 ** (age_days / half_life_days(record, retention, cfg))
    if (
        isinstance(record, LongFact)
        and record.status == "active"
        and record.evidence_count >= cfg.strength_floor_evidence
    ):
        value = max(value, cfg.strength_floor)
    return value


def weight(strength_value: float, cfg: RecallSettings) -> float:
    """The factor a hit's score is multiplied by: in [1 - recency_weight, 1]."""
    return (1.0 - cfg.recency_weight) + cfg.recency_weight * strength_value
