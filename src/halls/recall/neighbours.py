"""Neighbours in ranking: the memories written next to a hit, and episodes (pure).

A memory is rarely self-contained. "Yes, it was so powerful" is the answer
to "how was the support group?" only next to the turn before it; a question
about a trip is about the whole conversation in which the trip came up. Two
signals bring that context into the score, with no model and no LLM:

- neighbours: the memories written just before and after a memory
  (``context_radius`` places either way, same tier), if they happened within
  ``episode_gap_seconds`` of it. A memory gains ``context_weight`` x the best
  neighbour relevance, divided by its distance in places. So a short reply
  is found through the question it answers, and vice versa.
- episodes: memories of one tier whose times lie within
  ``episode_gap_seconds`` of each other (chained) form an episode, such as
  one conversation session. Every memory gains ``episode_weight`` x the best
  relevance in its episode, so that among equal matches those of the
  conversation the question is about come first.

Both act on the fused relevance of the candidates and of their neighbours
(which the service fetches); none can make a memory outrank the best
direct match by more than the weights allow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from halls.config import RecallSettings
from halls.models import Written
from halls.recall.fusion import Normaliser, Signals, cosines


@dataclass(frozen=True, slots=True)
class Placed:
    """Where a record sits: its tier, place in the write sequence and when it happened."""

    id: str
    tier: str
    seq: int
    occurred_at: float


@dataclass(frozen=True, slots=True)
class Boost:
    context: float
    episode: float


def boosts(
    relevance: Mapping[str, float], placed: Sequence[Placed], cfg: RecallSettings
) -> dict[str, Boost]:
    """The context and episode bonus of every placed record."""
    gap = cfg.episode_gap_seconds
    by_tier: dict[str, list[Placed]] = {}
    for p in placed:
        by_tier.setdefault(p.tier, []).append(p)
    out: dict[str, Boost] = {}
    for members in by_tier.values():
        episode = _episode_best(members, relevance, gap)
        members.sort(key=lambda p: p.seq)
        for n, p in enumerate(members):
            best = 0.0
            for step in (-1, 1):
                j = n + step
                while 0 <= j < len(members):
                    q = members[j]
                    distance = abs(q.seq - p.seq)
                    if distance > cfg.context_radius:
                        break
                    if abs(q.occurred_at - p.occurred_at) <= gap:
                        best = max(best, relevance.get(q.id, 0.0) / distance)
                    j += step
            out[p.id] = Boost(cfg.context_weight * best, cfg.episode_weight * episode[p.id])
    return out


def around(found: Mapping[str, Signals], n: int) -> list[str]:
    """The ids of the ``n`` best records by total (ties by id): whose neighbours to fetch."""
    return sorted(found, key=lambda i: (-found[i].total, i))[:n]


def with_neighbours(
    found: Mapping[str, Signals],
    written: Sequence[Written],
    query: np.ndarray,
    norm: Normaliser,
    cfg: RecallSettings,
) -> tuple[dict[str, Signals], dict[str, Boost]]:
    """``found`` with the new neighbours scored by cosine, and every placed record's bonus.

    ``written`` are the records around the best hits (the hits among them),
    as the store returns them. A neighbour no search found joins only when
    it can be scored (score fusion with a dense list): otherwise it only
    passes its place on to the hits around it.
    """
    out = scored(found, written, query, norm)
    totals = {i: sig.total for i, sig in out.items()}
    placed = [Placed(w.id, w.tier, w.seq, w.occurred_at) for w in written]
    return out, boosts(totals, placed, cfg)


def scored(
    found: Mapping[str, Signals], written: Sequence[Written], query: np.ndarray, norm: Normaliser
) -> dict[str, Signals]:
    """``found`` plus the records of ``written`` it lacks, scored by their cosine alone.

    Only with score fusion and a dense list: rank fusion has no score to give
    a record neither search ranked.
    """
    out = dict(found)
    new = [w for w in written if w.id not in found]
    if new and norm.scores_unranked:
        for w, c in zip(new, cosines([w.vector for w in new], query), strict=True):
            out[w.id] = Signals(cosine=c, relevance=norm.relevance(None, c))
    return out


def _episode_best(
    members: list[Placed], relevance: Mapping[str, float], gap: float
) -> dict[str, float]:
    """Per record, the best relevance among the records of its episode."""
    ordered = sorted(members, key=lambda p: (p.occurred_at, p.seq))
    out: dict[str, float] = {}
    start = 0
    for i in range(1, len(ordered) + 1):
        if i == len(ordered) or ordered[i].occurred_at - ordered[i - 1].occurred_at > gap:
            group = ordered[start:i]
            best = max(relevance.get(p.id, 0.0) for p in group)
            for p in group:
                out[p.id] = best
            start = i
    return out
