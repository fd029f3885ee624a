"""Given names for the judge, offline: is a capitalised word opening a statement a name?

Notes often leave their subject out, so a capital that opens a statement is
as often a verb or a common noun ("Prefers dark mode", "Production runs
Postgres 16") as a name ("Lena works at Siemens"). The judge reads it as a
name when it is a given name of the table and no common English word: the
words WordNet gives a synonym for ("Will", "Mark", "Grace", and, as the
price of that rule, "Tom") are left to the other readings. The table
(``data/names.txt.gz``, 51 KiB, 19,162 names of every locale of Faker,
folded to ASCII) is built by ``scripts/build_names.py``. Without the table
no opening word is a name.
"""

from __future__ import annotations

import gzip
from functools import lru_cache
from importlib import resources

from halls.consolidate.judge import synonyms

TABLE = "data/names.txt.gz"


@lru_cache(maxsize=1)
def _table() -> frozenset[str]:
    try:
        path = resources.files("halls.consolidate.judge").joinpath(TABLE)
        with path.open("rb") as fh:
            text = gzip.decompress(fh.read()).decode()
    except (FileNotFoundError, OSError):
        return frozenset()
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


def is_name(word: str) -> bool:
    """Whether a word (any case) is a given name and no common English word."""
    w = word.lower()
    return w in _table() and not synonyms.senses(w)
