"""What briefs ask of a run (pure): hints to promote, noise, finished intents.

A hint, a noise item or a completed intent matches by topic (exact,
case-insensitive), by text (one contains the other, ignoring case and
spacing, or every content word of the phrase is in the text, words that
share their first five letters counting as one: "passport expiry" and
"the passport expires in 2031"), or by embedding similarity at the cluster
threshold. A hint that matches nothing so goes to the one cluster nearest
to it, if that is at least ``HINT_FLOOR`` close (``nearest``): a hint
names something said in the session it summarises. A completed
intent may also be an open loop's id. Each completed intent closes at most
one loop: the best-matching one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from halls.consolidate.judge.lexicon import STOP

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[a-z0-9]+")
ROOT = 5  # words sharing this many first letters count as one
HINT_FLOOR = 0.6  # the nearest cluster takes an unmatched hint down to this cosine


def norm(text: str) -> str:
    return _SPACE.sub(" ", text.casefold()).strip(" .!?")


@dataclass(frozen=True, slots=True)
class Phrase:
    """A hint, noise item or intent with its vector (unit length)."""

    text: str
    vector: np.ndarray
    source: str  # the brief id


def _roots(text: str) -> set[str]:
    return {w[:ROOT] for w in _WORD.findall(text.casefold()) if w not in STOP and len(w) > 2}


def matches(
    phrase: Phrase, text: str, topic: str | None, vector: np.ndarray, threshold: float
) -> bool:
    p, t = norm(phrase.text), norm(text)
    if topic is not None and p == norm(topic):
        return True
    if p and (p in t or (len(t) >= 8 and t in p)):
        return True
    words = _roots(phrase.text)
    if words and words <= _roots(text):
        return True
    return float(phrase.vector @ vector) >= threshold


def nearest(phrases: Sequence[Phrase], groups: Sequence[np.ndarray]) -> dict[int, Phrase]:
    """For each phrase, the group (of unit vectors) nearest to it, if ``HINT_FLOOR`` close."""
    out: dict[int, Phrase] = {}
    best: dict[int, float] = {}
    for phrase in phrases:
        scores = [float((g @ phrase.vector).max()) if len(g) else -1.0 for g in groups]
        if not scores:
            continue
        n = int(np.argmax(scores))
        if scores[n] >= HINT_FLOOR and scores[n] > best.get(n, -1.0):
            out[n], best[n] = phrase, scores[n]
    return out


def any_match(
    phrases: Sequence[Phrase],
    texts: Sequence[str],
    topics: Sequence[str | None],
    vectors: np.ndarray,
    threshold: float,
) -> Phrase | None:
    for phrase in phrases:
        for text, topic, vector in zip(texts, topics, vectors, strict=True):
            if matches(phrase, text, topic, vector, threshold):
                return phrase
    return None


def completed(
    intents: Sequence[Phrase],
    loop_ids: Sequence[str],
    loop_texts: Sequence[str],
    loop_vectors: np.ndarray,
    threshold: float,
) -> dict[int, Phrase]:
    """Which open loops (by index) the intents close, with the closing intent."""
    closed: dict[int, Phrase] = {}
    for intent in intents:
        if intent.text.strip() in loop_ids:
            closed.setdefault(loop_ids.index(intent.text.strip()), intent)
            continue
        best, best_score = None, -1.0
        for n, (text, vector) in enumerate(zip(loop_texts, loop_vectors, strict=True)):
            if n in closed:
                continue
            score = float(intent.vector @ vector)
            p, t = norm(intent.text), norm(text)
            if p == t or (len(p) >= 8 and (p in t or t in p)):
                score = 2.0  # a text match beats any similarity
            if score >= threshold and score > best_score:
                best, best_score = n, score
        if best is not None:
            closed[best] = intent
    return closed
