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
from typing import NamedTuple

import numpy as np

from halls.config import RecallSettings
from halls.models import Written
from halls.recall.fusion import Normaliser, Signals, cosines


class Placed(NamedTuple):
    """Where a record sits: its tier, place in the write sequence and when it happened."""

    id: str
    tier: str
    seq: int
    occurred_at: float


class Boost(NamedTuple):
    context: float
    episode: float


def boosts(
    relevance: Mapping[str, float], placed: Sequence[Placed | Written], cfg: RecallSettings
) -> dict[str, Boost]:
    """The context and episode bonus of every placed record.

    In numpy over all placed records at once (a search places a few hundred):
    the same floats as a loop over each record's neighbours, a tenth of the time.
    """
    if not placed:
        return {}
    gap, radius = cfg.episode_gap_seconds, cfg.context_radius
    # One transposition, not a generator per column (a search places hundreds).
    ids, names, seqs, ats = list(zip(*placed, strict=False))[:4]
    code = {t: k for k, t in enumerate(dict.fromkeys(names))}
    tier = np.array([code[t] for t in names], dtype=np.int64)
    seq = np.array(seqs, dtype=np.int64)
    at = np.array(ats, dtype=np.float64)
    rel = np.array([relevance.get(i, 0.0) for i in ids], dtype=np.float64)
    context = _context_best(tier, seq, at, rel, radius, gap)
    episode = _episode_best(tier, seq, at, rel, gap)
    contexts = (cfg.context_weight * context).tolist()
    episodes = (cfg.episode_weight * episode).tolist()
    return dict(zip(ids, map(Boost, contexts, episodes), strict=True))


def _context_best(
    tier: np.ndarray, seq: np.ndarray, at: np.ndarray, rel: np.ndarray, radius: int, gap: float
) -> np.ndarray:
    """Per record, the best relevance / distance among its neighbours within
    ``radius`` places (same tier, within ``gap`` seconds), or 0."""
    order = np.lexsort((seq, tier))
    t, s, a, r = tier[order], seq[order], at[order], rel[order]
    best = np.zeros(len(order))
    # Places are unique within a tier, so a neighbour within the radius is at
    # most ``radius`` positions away in this order.
    for step in range(1, radius + 1):
        distance = (s[step:] - s[:-step]).astype(np.float64)
        near = t[step:] == t[:-step]
        near &= (distance <= radius) & (np.abs(a[step:] - a[:-step]) <= gap)
        later = np.divide(r[step:], distance, out=np.zeros(len(near)), where=near)
        earlier = np.divide(r[:-step], distance, out=np.zeros(len(near)), where=near)
        best[:-step] = np.maximum(best[:-step], later)
        best[step:] = np.maximum(best[step:], earlier)
    out = np.empty_like(best)
    out[order] = best
    return out


def around(found: Mapping[str, Signals], n: int) -> list[str]:
    """The ids of the ``n`` best records by total (ties by id): whose neighbours to fetch."""
    keyed = sorted((-(s.relevance + s.feedback), i) for i, s in found.items())
    return [i for _, i in keyed[:n]]


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
    # Only the placed records' totals are read (a few hundred of ``out``).
    totals = {w.id: out[w.id].total for w in written if w.id in out}
    # A Written is placed as it is: its first four fields are a Placed's.
    return out, boosts(totals, written, cfg)


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
        found_cosines = cosines([w.vector for w in new], query)
        for w, c, r in zip(new, found_cosines, norm.dense_relevance(found_cosines), strict=True):
            out[w.id] = Signals(cosine=c, relevance=r)
    return out


def _episode_best(
    tier: np.ndarray, seq: np.ndarray, at: np.ndarray, rel: np.ndarray, gap: float
) -> np.ndarray:
    """Per record, the best relevance among the records of its episode: those
    of its tier whose times chain within ``gap`` seconds of each other."""
    order = np.lexsort((seq, at, tier))
    t, a = tier[order], at[order]
    breaks = np.r_[False, (t[1:] != t[:-1]) | (np.diff(a) > gap)]
    starts = np.flatnonzero(breaks | (np.arange(len(t)) == 0))
    group = np.cumsum(breaks)
    best = np.maximum.reduceat(rel[order], starts)[group]
    out = np.empty_like(best)
    out[order] = best
    return out
