"""Synonyms for the judge: WordNet's most frequent senses, offline.

Two words are synonyms when they share one of their first two noun or verb
senses in Princeton WordNet 3.0 ("shut"/"close", "film"/"movie",
"sofa"/"couch"). Regular endings are read ("closing", "stopped",
"studies"); irregular forms ("bought", "children") are not. The table
(``data/synonyms.txt.gz``, 182 KiB, the 30,445 words with at least
one synonym) is built by ``scripts/build_synonyms.py``, which says why only
the first senses, why no adjectives and why no looser thesaurus. Without
the table every word is only itself.

WordNet links no attribute to the verb that gives its value: "Lena's
manager is Tom" and "Lena reports to Tom", "Mia's birthday is March 3" and
"Mia was born on March 3", "my sister's car is a Camry" and "my sister
drives a Camry" say one thing each. ``ALTERNATIONS`` (``lexicon/alternations.txt``)
lists such words for the attributes memory notes keep about people (a short,
fixed list, written for the kinds of fact, not for any statement): like
synonyms, they stand for each other when they are all that differs
(``shared``, which the pair features read).
"""

from __future__ import annotations

import gzip
from functools import lru_cache
from importlib import resources

import numpy as np

from halls.consolidate.judge.lexicon import groups

TABLE = "data/synonyms.txt.gz"
MIN_LETTERS = 3  # "us", "it", "id": WordNet's senses of short words are mostly acronyms
NONE: frozenset[int] = frozenset()
# Per attribute, its nouns, then the words that give its value (each form
# written out: no stemming here, so "drive" is no "driveway"). A line's place
# is its identity: sense ids below WordNet's.
ALTERNATIONS = groups("alternations")
_ALTERNATION: dict[str, frozenset[int]] = {}
for _n, _group in enumerate(ALTERNATIONS):
    for _w in _group:
        _ALTERNATION[_w] = _ALTERNATION.get(_w, NONE) | {-1 - _n}  # below WordNet's ids


@lru_cache(maxsize=1)
def _table() -> dict[str, frozenset[int]]:
    try:
        path = resources.files("halls.consolidate.judge").joinpath(TABLE)
        with path.open("rb") as fh:
            text = gzip.decompress(fh.read()).decode()
    except (FileNotFoundError, OSError):
        return {}
    table: dict[str, frozenset[int]] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            word, *ids = line.split()
            table[word] = frozenset(map(int, ids))
    return table


def _lemmas(word: str) -> list[str]:
    """The word and the base forms its regular endings may stand for ("closed",
    "closing" -> "close"; "stopped" -> "stop"; "studies" -> "study")."""
    out = [word]
    for end, base in (("ies", "y"), ("ied", "y"), ("es", ""), ("s", "")):
        if word.endswith(end):
            out.append(word[: -len(end)] + base)
    for end in ("ing", "ed"):
        stem = word[: -len(end)]
        if word.endswith(end) and len(stem) > 1:
            out += [stem + "e", stem]
            if stem[-1] == stem[-2]:  # "stopped", "running"
                out.append(stem[:-1])
    return [w for w in dict.fromkeys(out) if len(w) >= MIN_LETTERS]


@lru_cache(maxsize=65536)
def senses(word: str) -> frozenset[int]:
    """The ids of the word's frequent senses that it shares with another word, over
    every base form it may stand for ("closing" is a noun and a form of "close")."""
    if len(word) < MIN_LETTERS or not word.isalpha():
        return NONE
    table = _table()
    found = [table[lemma] for lemma in _lemmas(word.lower()) if lemma in table]
    return frozenset().union(*found) if found else NONE


def alternations(word: str) -> frozenset[int]:
    """The attributes (``ALTERNATIONS``) the word names or gives, as sense ids."""
    return _ALTERNATION.get(word.lower(), NONE)


def synonyms(a: str, b: str) -> bool:
    """Whether two words share a frequent sense (a word is not its own synonym here)."""
    return a != b and bool(senses(a) & senses(b))


def shared(
    word_senses: tuple[list[tuple[frozenset[int], ...]], list[tuple[frozenset[int], ...]]],
    rows: tuple[np.ndarray, np.ndarray],
    shared: tuple[np.ndarray, np.ndarray],
    synonymous: tuple[np.ndarray, np.ndarray],
    valid: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair of rows, which words of each statement the other has (``shared``,
    updated): synonyms (``word_senses``, per statement its words' ``senses``)
    standing for each other when they are all that differs ("The library closes
    at 8" / "The library shuts at 8", "Noah bought a sofa" / "Noah bought a couch").

    Only a pair whose every differing word finds its synonym changes: where other
    words differ too, the judge's reading of what was dropped and added (trained
    without synonyms) stays as it was, so "Liam commutes by bike" / "Liam rides
    his bicycle to the office" is not read as an addition.
    """
    a_in_b, b_in_a = shared
    lack_a, lack_b = valid[0] & ~a_in_b, valid[1] & ~b_in_a
    only = ~(lack_a & ~synonymous[0]).any(axis=1) & ~(lack_b & ~synonymous[1]).any(axis=1)
    todo = np.flatnonzero(only & lack_a.any(axis=1) & lack_b.any(axis=1))
    if not todo.size:
        return a_in_b, b_in_a
    a_in_b, b_in_a = a_in_b.copy(), b_in_a.copy()
    for r in todo.tolist():
        xs, ys = word_senses[0][rows[0][r]], word_senses[1][rows[1][r]]
        ia, ib = np.flatnonzero(lack_a[r]).tolist(), np.flatnonzero(lack_b[r]).tolist()
        found_a = {i for i in ia if any(xs[i] & ys[j] for j in ib)}
        found_b = {j for j in ib if any(xs[i] & ys[j] for i in ia)}
        if len(found_a) == len(ia) and len(found_b) == len(ib):
            a_in_b[r, ia] = b_in_a[r, ib] = True
    return a_in_b, b_in_a
