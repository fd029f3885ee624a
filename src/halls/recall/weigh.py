"""The weigh stage (pure): which records to read, and their candidates for ranking.

Tier, evidence and recency weigh within about x0.6..x2, so only the best few
by relevance (plus bonuses) can reach the top n: the service reads just the
``shortlist``, and each read record becomes a ``Candidate`` carrying every
signal and bonus that ``halls.recall.rank`` turns into one explained score.

Reading a record costs more than everything else its score needs, so the
shortlist is read in two goes: ``first_reads``, then, once their scores set
the bar of the n-th best, only the records whose ``reach`` (the most they
could score once read) still clears it (``worth_reading``). The hits are the
same as if every shortlisted record had been read.
"""

from __future__ import annotations

from collections.abc import Mapping

from halls.config import RecallSettings
from halls.importance import rank_factor
from halls.models import ID_PREFIX, Hit, Record, Retention
from halls.recall.fusion import Signals
from halls.recall.neighbours import Boost
from halls.recall.rank import Candidate
from halls.recall.speakers import query_words, speaker_bonus
from halls.recall.text import STOPWORDS
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
    keyed = sorted((-(s.relevance + s.feedback + bonus.get(i, 0.0)), i) for i, s in found.items())
    return [i for _, i in keyed[:n]]


# Scores are rounded to 1e-6 (halls.recall.rank): a record whose reach is
# below the bar by more than that cannot tie with the n-th best.
_ROUNDING = 1e-6
# Read at once: the n best by reach, and at least this many.
_FIRST_READS = 20


def reach(
    found: Mapping[str, Signals],
    boost: Mapping[str, Boost],
    ids: list[str],
    query: str,
    cfg: RecallSettings,
    full: bool,
    association: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """The most each record of ``ids`` can score once it is read.

    What is known before reading (relevance, feedback, neighbour and
    association bonuses), plus the most the bonuses read from its text and
    time can add for this query (speaker, date, substance), at its tier's
    weight with evidence 1, full recency and the highest importance (its
    importance is read with it). A fact's evidence has no upper bound: its
    reach is infinite, so facts are always read.
    """
    association = association or {}
    ceiling = 0.0
    if full:
        # A speaker label's words are never stop words (speakers.speaker_of).
        ceiling += cfg.speaker_weight if query_words(query) - STOPWORDS else 0.0
        ceiling += cfg.time_weight if windows(query) else 0.0
        ceiling += cfg.when_weight if asks_when(query) else 0.0
        ceiling += cfg.substance_weight
    most = rank_factor(1.0, cfg.importance_weight)
    tiers = {
        ID_PREFIX["short"]: cfg.tier_weight_short * most,
        ID_PREFIX["near"]: cfg.tier_weight_near * most,
    }
    out = {}
    for i in ids:
        b = boost.get(i)
        known = found[i].total + association.get(i, 0.0) + (b.context + b.episode if b else 0.0)
        tier = tiers.get(i.split("_", 1)[0])
        out[i] = (known + ceiling) * tier if tier is not None else float("inf")
    return out


def first_reads(shortlisted: list[str], reach: Mapping[str, float], n: int) -> list[str]:
    """The records to read first: every fact, then the best by reach, ``max(2n, 20)`` in all."""
    ordered = sorted(
        shortlisted, key=lambda i: -reach[i]
    )  # stable: ties keep the shortlist's order
    return ordered[
        : max(2 * n, _FIRST_READS, sum(1 for i in shortlisted if reach[i] == float("inf")))
    ]


def worth_reading(
    shortlisted: list[str], read: list[str], reach: Mapping[str, float], hits: list[Hit], n: int
) -> list[str]:
    """The shortlisted records not yet read that could still enter the ``n`` best ``hits``."""
    done = set(read)
    if len(hits) < n:
        return [i for i in shortlisted if i not in done]
    bar = hits[n - 1].score - _ROUNDING
    return [i for i in shortlisted if i not in done and reach[i] >= bar]


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
    # By the records read (a few dozen), not by everything found (hundreds):
    # ranking orders candidates by score and id, whatever order they come in.
    for i, record in records.items():
        sig = found.get(i)
        if sig is None:
            continue
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
