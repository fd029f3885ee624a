"""Word lists the judge reads, as data: ``lexicon/<name>.txt``, one entry a line.

Each file opens with ``#`` lines saying what its list means; the lists are
loaded once. They are inputs of the judge's word features (``reading``),
never of the planner: what a list changes is measured through the rules
that read those features (``rules``).
"""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def words(name: str) -> frozenset[str]:
    """The entries of ``lexicon/<name>.txt``."""
    text = resources.files("halls.consolidate.judge").joinpath(f"lexicon/{name}.txt")
    lines = text.read_text("utf-8").splitlines()
    return frozenset(w.strip() for w in lines if w.strip() and not w.startswith("#"))


def stem(word: str) -> str:
    """A plural's singular, roughly ("policies" -> "policy", "cats" -> "cat")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


STOP = words("stop")
CHANGE = words("change")
NEGATION = words("negation")
