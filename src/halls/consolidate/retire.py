"""Retirement (pure): long-term facts that faded past use leave search.

A run retires an active, unpinned fact whose strength
(``halls.recall.strength``: time since it was last recalled or confirmed,
stretched by how often it was and by its importance) fell below ``consolidator.retire_below``, so
long-term memory does not grow without bound. Retiring keeps the fact as
history (status ``retired``, out of default search) and is a reviewable
action that a revert undoes. A fact the engine acts on in the same run
(confirmed, superseded, flagged) is left to that action.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from halls.config import RecallSettings
from halls.consolidate.engine import Proposal
from halls.models import LongFact, Retention
from halls.recall.strength import DAY, last_used, strength


def retirements(
    facts: Iterable[LongFact],
    planned: Sequence[Proposal],
    retention: Mapping[str, Retention],
    now: float,
    recall: RecallSettings,
    below: float,
) -> list[Proposal]:
    if below <= 0:
        return []
    busy = {p.target_id for p in planned}
    out = []
    for fact in facts:
        if fact.status != "active" or fact.pinned or fact.id in busy:
            continue
        kept = retention.get(fact.id)
        value = strength(fact, kept, now, recall)
        if value >= below:
            continue
        idle = (now - last_used(fact, kept)) / DAY
        recalled = kept.access_count if kept else 0
        out.append(
            Proposal(
                kind="retire",
                target_id=fact.id,
                reason=f"strength {value:.3f} fell below {below}: unused for {idle:.0f} days, "
                f"recalled {recalled} times, confirmed {fact.evidence_count} times"
                + ("" if fact.importance is None else f", importance {fact.importance:g}"),
            )
        )
    return out
