"""The pair judge: same, update, retract or unrelated? A sealed box.

Callers (clustering, the planner, the LLM engine) give pairs of statements
with their embeddings and read ``Judgement`` s or ``Readings``; they never
read the words. Inside: the cross-encoder (``cross``) decides, a few rules
measured on pairs nobody tuned to may move its reading (``rules``), and the
pair facts a judgement carries are read from the words (``lexical`` and its
``columns``, over statements read by ``reading`` with ``flags``,
``negation``, ``quantities``, ``shortenings``, ``forms`` and ``values``,
the word lists in ``lexicon/`` and the tables ``synonyms`` and ``names``).
``local.LocalJudge`` is the shipped judge.
"""

from halls.consolidate.judge.local import CROSS_BUDGET, LocalJudge, default_judge
from halls.consolidate.judge.protocol import (
    LABELS,
    RETRACT,
    SAME,
    UNRELATED,
    UPDATE,
    Judge,
    Judgement,
    Label,
    Pair,
    Readings,
    read,
    restates_change,
    same_change,
)


def clear_caches() -> None:
    """Forget the parses, stems and senses read so far (``halls.consolidate.caches``:
    a run clears them as it ends). A text read again reads the same: its words keep
    their ids in ``reading``'s vocabulary."""
    from halls.consolidate.judge import forms, reading, synonyms

    for cached in (reading.parse, forms.snowball, synonyms.senses):
        cached.cache_clear()


def unload() -> None:
    """Let the cross-encoder go (``halls.consolidate.caches``: when no run has started
    for a while); the next judge loads it again."""
    from halls.consolidate.judge import cross

    cross.default_reader.cache_clear()


__all__ = [
    "unload",
    "CROSS_BUDGET",
    "LABELS",
    "RETRACT",
    "SAME",
    "UNRELATED",
    "UPDATE",
    "Judge",
    "Judgement",
    "Label",
    "LocalJudge",
    "Pair",
    "Readings",
    "clear_caches",
    "default_judge",
    "read",
    "restates_change",
    "same_change",
]
