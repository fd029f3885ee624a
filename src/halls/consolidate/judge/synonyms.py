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
synonyms, they stand for each other when they are all that differs.
"""

from __future__ import annotations

import gzip
from functools import lru_cache
from importlib import resources

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
