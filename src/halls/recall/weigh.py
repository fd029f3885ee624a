"""The weigh stage (pure): which records to read, and their candidates for ranking.

Tier, evidence and recency weigh within about x0.6..x2, so only the best few
by relevance (plus bonuses) can reach the top n: the service reads just the
``shortlist``, and each read record becomes a ``Candidate`` carrying every
signal and bonus that ``halls.recall.rank`` turns into one explained score.
"""

from __future__ import annotations

from collections.abc import Mapping

from halls.config import RecallSettings
from halls.models import Record, Retention
from halls.recall.fusion import Signals
from halls.recall.neighbours import Boost
from halls.recall.rank import Candidate
from halls.recall.speakers import query_words, speaker_bonus
from halls.recall.when import asks_when, tells_when, time_bonus, windows


def shortlist(
    found: Mapping[str, Signals],
    boost: Mapping[str, Boost],
    n: int,
    association: Mapping[str, float] | None = None,
) -> list[str]:
    """The ids of the ``n`` best records by total plus neighbour and association
    bonuses (ties by id)."""
    bonus = {i: b.context + b.episode for i, b in boost.items()}
    for i, a in (association or {}).items():
        bonus[i] = bonus.get(i, 0.0) + a
    return sorted(found, key=lambda i: (-(found[i].total + bonus.get(i, 0.0)), i))[:n]


def candidates(
    found: Mapping[str, Signals],
    boost: Mapping[str, Boost],
    records: Mapping[str, Record],
    query: str,
    cfg: RecallSettings,
    full: bool,
    retention: Mapping[str, Retention] | None = None,
    association: Mapping[str, float] | None = None,
) -> list[Candidate]:
    """A candidate per read record; ``full`` adds the speaker and date bonuses.

    ``retention`` is the reinforcement of the records that have any;
    ``association`` the graph bonus of ``halls.recall.spread``.
    """
    retention = retention or {}
    association = association or {}
    said = query_words(query)
    named = windows(query) if full else []
    when = cfg.when_weight if full and asks_when(query) else 0.0
    out = []
    for i, sig in found.items():
        if i not in records:
            continue
        record = records[i]
        content = getattr(record, "content", "")
        at = record.occurred_at.timestamp()
        out.append(
            Candidate(
                record=record,
                bm25_rank=sig.bm25_rank,
                bm25=sig.bm25,
                dense_rank=sig.dense_rank,
                cosine=sig.cosine,
                relevance=sig.relevance,
                feedback=sig.feedback,
                context=boost[i].context if i in boost else 0.0,
                episode=boost[i].episode if i in boost else 0.0,
                speaker=speaker_bonus(content, said, cfg) if full else 0.0,
                time=(time_bonus(at, named, cfg) if named else 0.0)
                + (when if when and tells_when(content) else 0.0),
                retention=retention.get(i),
                association=association.get(i, 0.0),
            )
        )
    return out
