"""Speakers in ranking: whose line a memory is, and whether the query names them (pure).

A transcript line starting with a speaker label ("Caroline: ...", "user:
...") gains ``speaker_weight`` when the query names that speaker: "what did
Caroline research?" is about what Caroline said. The label is also what
feedback and the substance prior leave out of a memory's words.
"""

from __future__ import annotations

import re

from halls.config import RecallSettings
from halls.recall.text import STOPWORDS

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
