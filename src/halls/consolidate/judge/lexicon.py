"""Word lists the judge reads, as data: ``lexicon/<name>.txt``, one entry a line.

Each file opens with ``#`` lines saying what its list means and which module
reads it. Three shapes: a list of words (``words``), a table of a word and a
value split by a tab (``table``; numbers parsed by ``number``), and groups of
words one line each (``groups``: a group's place is its identity). The lists
are loaded once. They are inputs of the judge's word features (``reading``
and the modules it reads a statement with: ``flags``, ``negation``,
``quantities``, ``forms``; ``values``, ``synonyms``), never of the planner:
what a list changes is measured through the rules that read those features
(``rules``).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources


@cache
def _entries(name: str) -> tuple[str, ...]:
    """The lines of ``lexicon/<name>.txt`` that are no ``#`` comment, in file order."""
    text = resources.files("halls.consolidate.judge").joinpath(f"lexicon/{name}.txt")
    lines = text.read_text("utf-8").splitlines()
    return tuple(w.strip() for w in lines if w.strip() and not w.startswith("#"))


@cache
def words(name: str) -> frozenset[str]:
    """The entries of ``lexicon/<name>.txt``."""
    return frozenset(_entries(name))


def table(name: str) -> dict[str, str]:
    """The ``word<TAB>value`` lines of ``lexicon/<name>.txt`` in file order (a word
    with no tab has the value ``""``)."""
    out: dict[str, str] = {}
    for line in _entries(name):
        word, _, value = line.partition("\t")
        if word.strip() in out:
            raise ValueError(f"lexicon/{name}.txt: {word.strip()!r} twice")
        out[word.strip()] = value.strip()
    return out


def groups(name: str) -> tuple[tuple[str, ...], ...]:
    """The lines of ``lexicon/<name>.txt`` as groups of words split by spaces, in order."""
    return tuple(tuple(line.split()) for line in _entries(name))


def alternation(name: str) -> str:
    """The entries of ``lexicon/<name>.txt`` as a regular expression's alternatives
    (``a|b|c``, each escaped), in file order."""
    return "|".join(re.escape(w) for w in _entries(name))


def number(text: str) -> float:
    """A table's value as a number: "7", "0.001", "1e-6" or a fraction ("1/24")."""
    numerator, _, denominator = text.partition("/")
    return float(numerator) / float(denominator) if denominator else float(numerator)


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
