"""Synonyms for the judge: WordNet's most frequent senses, offline.

Two words are synonyms when they share one of their first two noun or verb
senses in Princeton WordNet 3.0 ("shut"/"close", "film"/"movie",
"sofa"/"couch"). Regular endings are read ("closing", "stopped",
"studies"); irregular forms ("bought", "children") are not. The table
(``judge_data/synonyms.txt.gz``, 182 KiB, the 30,445 words with at least
one synonym) is built by ``scripts/build_synonyms.py``, which says why only
the first senses, why no adjectives and why no looser thesaurus. Without
the table every word is only itself.
"""

from __future__ import annotations

import gzip
from functools import lru_cache
from importlib import resources

TABLE = "judge_data/synonyms.txt.gz"
MIN_LETTERS = 3  # "us", "it", "id": WordNet's senses of short words are mostly acronyms
NONE: frozenset[int] = frozenset()


@lru_cache(maxsize=1)
def _table() -> dict[str, frozenset[int]]:
    try:
        path = resources.files("halls.consolidate").joinpath(TABLE)
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


def synonyms(a: str, b: str) -> bool:
    """Whether two words share a frequent sense (a word is not its own synonym here)."""
    return a != b and bool(senses(a) & senses(b))
