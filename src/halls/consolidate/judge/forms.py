"""A word's forms (pure): the one form its spellings, plurals and endings are compared by.

``base`` is the form a statement's word is read as: lower case, without its
plural, spelled the American way ("colour" is "color"), a shortening notes
use read as the word it shortens ("svc" is "service"). ``snowball`` gives a
word's Snowball (Porter 2) stem, which its regular forms share ("swimming",
"swim"), and ``agent_verb`` the verb of an agent noun ("player", "play"):
``reading.parse`` roots content words with them.
"""

from __future__ import annotations

import threading
from functools import lru_cache

import snowballstemmer
from breame.spelling import BRITISH_ENGLISH_SPELLINGS

from halls.consolidate.judge import lexicon

# Words notes shorten ("bday", "svc", "repo"), stemmed: read as the word they
# shorten, so that "checkout svc" and "the checkout service" share it.
_SHORT = lexicon.table("short_words")

# British spellings and their American ones (breame's table, 1,730 words).
_AMERICAN: dict[str, str] = BRITISH_ENGLISH_SPELLINGS


def base(low: str) -> str:
    """A lower-case word without its plural "s", a shortening read as its word,
    written whole or in the plural ("svcs", "k8s")."""
    whole = low.removesuffix("'s")
    whole = _AMERICAN.get(whole, whole)  # "fibre", "colour", "organised": one spelling
    stem = lexicon.stem(whole)
    short = _SHORT.get(whole) or _SHORT.get(stem)
    return stem if short is None else lexicon.stem(short)


_STEMMER = snowballstemmer.stemmer("english")
_STEMMING = threading.Lock()  # a Snowball stemmer keeps its word in the object


@lru_cache(maxsize=65536)
def snowball(word: str) -> str:
    """The word's Snowball (Porter 2) stem: its regular forms share it."""
    with _STEMMING:
        return str(_STEMMER.stemWord(word))


def agent_verb(word: str) -> str:
    """The verb of an agent noun: "player" -> "play", "drummer" -> "drum"."""
    if len(word) < 6 or not word.endswith("er"):
        return word
    base = word[:-2]
    if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiouls":
        base = base[:-1]
    return base
