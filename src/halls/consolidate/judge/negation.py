"""Negation's scope (pure): which words a negation covers, and what one statement denies.

A negating word ("not", "never", "no") covers the words after it to the end
of its clause: "I never go by Samantha" negates "go" and "Samantha", "goes by
Sam, not Samantha" only "Samantha". ``in_scope`` marks them per token of one
statement (``reading.parse``); ``denies`` reads, for pairs of statements, how
much of what the later one negates the earlier one affirms (``lexical``).
"""

from __future__ import annotations

import re

import numpy as np

from halls.consolidate.judge.lexicon import words

# Words that open a negation's scope; it runs to the end of the clause.
_NEGATING = words("negating")
_CLAUSE_END = re.compile(r"[,;!?()]|\.(?:\s|$)")
_CLAUSE_WORDS = words("clause_words")


def in_scope(text: str, spans: list[re.Match[str]], low: list[str]) -> list[bool]:
    """Per token: whether it stands in the scope of a negation, from the negating
    word to the end of its clause ("I never go by Samantha": "go", "Samantha";
    "goes by Sam, not Samantha": "Samantha" only)."""
    out, scope, end = [], False, 0
    for m, w in zip(spans, low, strict=True):
        if _CLAUSE_END.search(text, end, m.start()) or w in _CLAUSE_WORDS:
            scope = False
        out.append(scope)
        if w in _NEGATING:
            scope = True
        end = m.end() - 1 if m.group().endswith(".") else m.end()
    return out


def denies(
    eq: np.ndarray, valid: tuple[np.ndarray, np.ndarray], negated: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """The share of the later statement's negated words that the earlier one affirms,
    less those it negates too (``eq``: P x W_earlier x W_later word equality)."""
    scope = negated[1] & valid[1]
    affirmed = (eq & (valid[0] & ~negated[0])[:, :, None]).any(axis=1) & scope
    denied = (eq & (valid[0] & negated[0])[:, :, None]).any(axis=1) & scope
    net = affirmed.sum(axis=1) - denied.sum(axis=1)
    return np.maximum(net, 0) / np.maximum(scope.sum(axis=1), 1)
