"""Conversation context in ranking: neighbouring memories and episodes (pure).

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

- speakers: a transcript line starting with a speaker label ("Caroline:
  ...", "user: ...") gains ``speaker_weight`` when the query names that
  speaker: "what did Caroline research?" is about what Caroline said.

All act on the fused relevance of the candidates and of their neighbours
(which the service fetches); none can make a memory outrank the best
direct match by more than the weights allow.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from halls.config import RecallSettings
from halls.recall.text import STOPWORDS


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


# A transcript line's speaker label: "Caroline: ...", "user: ...", "Dr. Lee: ...".
_LABEL = re.compile(r"^\s*([^\W\d_][\w.'’ -]{0,38}?)\s*:\s", re.UNICODE)
_NAME = re.compile(r"[^\W\d_]+", re.UNICODE)


def speaker_of(content: str) -> frozenset[str]:
    """The lower-cased words of a memory's leading speaker label, if it has one."""
    m = _LABEL.match(content)
    if m is None:
        return frozenset()
    words = [w.lower() for w in _NAME.findall(m.group(1))]
    return frozenset(w for w in words if w not in STOPWORDS) if len(words) <= 3 else frozenset()


def without_label(content: str) -> str:
    """``content`` without its leading speaker label, if ``speaker_of`` finds one."""
    m = _LABEL.match(content)
    return content[m.end() :] if m is not None and speaker_of(content) else content


def query_words(query: str) -> frozenset[str]:
    """Lower-cased words of a query, possessives stripped ("Caroline's" -> "caroline")."""
    return frozenset(w.lower() for w in _NAME.findall(query.replace("’", "'")))


def speaker_bonus(content: str, words: frozenset[str], cfg: RecallSettings) -> float:
    """``speaker_weight`` when the memory was said by someone the query names."""
    return cfg.speaker_weight if speaker_of(content) & words else 0.0
