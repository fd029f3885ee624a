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

__all__ = [
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
    "default_judge",
    "read",
    "restates_change",
    "same_change",
]
