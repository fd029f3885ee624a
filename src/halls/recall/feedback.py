"""Pseudo-relevance feedback over full text: the best hits' rare words (pure).

A question often names one side of what it asks about ("Who is John's
favourite basketball player?") while the answer sits in turns that share
another word with the first hits ("LeBron"). The rare words the best few
hits have in common are what the question is about, in the memories' own
words; a second full-text query with them (RM3-style, interpolated as a
bonus) reaches turns the question itself does not match.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence

import numpy as np

from halls.config import RecallSettings
from halls.models import Match
from halls.recall.fusion import Normaliser, Signals, cosines
from halls.recall.speakers import query_words, speaker_of
from halls.recall.text import query_terms

# Below this many memories holding it, a word is never too common to use.
MIN_COMMON = 10


def candidate_terms(texts: Sequence[str], exclude: frozenset[str]) -> dict[str, int]:
    """Content words of ``texts`` (speaker labels dropped), with how many texts hold each."""
    out: dict[str, int] = {}
    for text in texts:
        label = speaker_of(text)
        for word in query_terms(text, limit=1000):
            if word not in exclude and word not in label and not word.isdigit():
                out[word] = out.get(word, 0) + 1
    return out


def choose(
    shared: Mapping[str, int], df: Mapping[str, int], total: int, limit: int, max_share: float
) -> list[str]:
    """The ``limit`` terms weighing most by (texts holding them) x idf.

    ``df`` counts the memories holding each term, of ``total``. A term held
    by more than ``max_share`` of them (and by more than ``MIN_COMMON``, so
    that a small store still has rare words) names no particular thing, and
    would make the second query read a long posting list; one no memory
    holds (the store changed meanwhile) is left out.
    """
    common = max(max_share * total, MIN_COMMON)
    weighed = []
    for term, n in shared.items():
        d = df.get(term, 0)
        if d <= 0 or d > common:
            continue
        idf = math.log(1.0 + (total - d + 0.5) / (d + 0.5))
        weighed.append((-(n * idf), term))
    weighed.sort()
    return [t for _, t in weighed[:limit]]


def top(found: Mapping[str, Signals], n: int) -> list[str]:
    """The ids of the ``n`` most relevant records (ties by id): the feedback documents."""
    return [i for _, i in heapq.nsmallest(n, ((-s.relevance, i) for i, s in found.items()))]


def query_exclusions(query: str) -> frozenset[str]:
    """Words of the query itself, which a feedback query must not repeat."""
    return frozenset(query_terms(query)) | query_words(query)


def _useful(hits: Sequence[Match]) -> bool:
    return bool(hits) and hits[0].score > 0


def unscored(found: Mapping[str, Signals], hits: Sequence[Match], norm: Normaliser) -> list[str]:
    """The feedback hits that are new and can be scored: their vectors are wanted."""
    if not _useful(hits) or not norm.scores_unranked:
        return []
    return [m.id for m in hits if m.id not in found]


def with_feedback(
    found: Mapping[str, Signals],
    hits: Sequence[Match],
    vectors: Mapping[str, np.ndarray],
    query: np.ndarray,
    norm: Normaliser,
    cfg: RecallSettings,
) -> dict[str, Signals]:
    """``found`` with the feedback hits: a bonus for those found, new ones scored by cosine.

    ``vectors`` are the stored vectors of the ``unscored`` hits (in the
    store's order; one gone meanwhile is simply missing). The bonus is
    ``feedback_weight`` x the hit's score relative to the best feedback hit.
    """
    out = dict(found)
    if not _useful(hits):
        return out
    found_cosines = cosines(list(vectors.values()), query)
    for i, c, r in zip(vectors, found_cosines, norm.dense_relevance(found_cosines), strict=True):
        out[i] = Signals(cosine=c, relevance=r)
    for m in hits:
        if m.id in out:
            out[m.id] = out[m.id]._replace(feedback=cfg.feedback_weight * m.score / hits[0].score)
    return out
