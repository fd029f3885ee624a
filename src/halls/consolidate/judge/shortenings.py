"""Shortenings (pure): a word that stands for a run of words, and where the other spells it.

Notes shorten names and phrases: "NYT" is "the New York Times", "BP med" a
"blood pressure pill", "PS5" a "PlayStation 5", "FedEx" "Federal Express",
"Amex" "American Express". ``shortening`` says what one word of a statement
may shorten (its letters, and the pieces they come in, when known);
``word_parts`` and ``part_openings`` keep what another statement's
shortening is spelled against; ``shared`` reads, for pairs of statements,
a shortening and the run it spells as the same words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from halls.consolidate.judge import names, synonyms

# A word in capitals may shorten a run of words by their initials ("NYT", "the
# New York Times"; "BP", "blood pressure"; "US", "United States"), the parts of
# a word in camel case among them ("PS", "PlayStation").
_ACRONYM = re.compile(r"[A-Z]{2,5}")
# A name glued from the openings of the words it shortens: in camel case
# ("FedEx", Federal Express) or not ("Amex", American Express). Such a word
# is no common word and no given name (``shortening``).
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_CAMEL_EDGE = re.compile(r"[a-z][A-Z]")
CONTRACTION_LETTERS = (4, 7)

Parts = tuple[tuple[tuple[str, ...], int], ...]  # per token: its parts, its slot or -1
# (slot, letters, pieces) of a word that may shorten others (``Parsed.shortenings``)
Short = tuple[int, str, tuple[str, ...]]


def shortening(raw: str, low: str) -> tuple[str, tuple[str, ...]] | None:
    """What a word may shorten, as (letters, pieces): a word in capitals its
    initials ("NYT"), a short word in camel case the openings of its parts
    ("FedEx"), a capitalised word that is no common word and no given name
    openings of two letters or more (``()``: "Amex"); else None."""
    if _ACRONYM.fullmatch(raw):
        return low, tuple(low)
    lo, hi = CONTRACTION_LETTERS
    if not (raw.isalpha() and lo <= len(raw) <= hi and raw[:1].isupper()):
        return None
    if _CAMEL_EDGE.search(raw):
        return low, tuple(p.lower() for p in _CAMEL.findall(raw))
    if raw[1:].islower() and not synonyms.senses(low) and not names.is_name(low):
        return low, ()
    return None


def word_parts(raw: str, low: str) -> tuple[str, ...]:
    """A token's parts, lower case: those of a word in camel case ("PlayStation":
    play, station), else the token itself."""
    camel = _CAMEL_EDGE.search(raw) is not None
    return tuple(p.lower() for p in _CAMEL.findall(raw)) if camel else (low,)


def part_openings(parts: Iterable[tuple[tuple[str, ...], int]]) -> frozenset[str]:
    """The first one and two letters of every part: what another statement's
    shortening must find before it is spelled out (``_may_spell``)."""
    return frozenset(o for token, _ in parts for part in token for o in (part[:1], part[:2]))


def _openings(letters: str, pieces: tuple[str, ...], words: list[str]) -> bool:
    """Whether ``letters`` are the openings of ``words`` in order: the ``pieces``
    given ("nyt": n, y, t; "fedex": fed, ex), or, none given, any of two letters
    or more ("amex": am, ex)."""
    if pieces:
        return len(pieces) == len(words) and all(
            w.startswith(p) for p, w in zip(pieces, words, strict=True)
        )
    if not words:
        return not letters
    first, rest = words[0], words[1:]
    return any(
        first.startswith(letters[:k]) and _openings(letters[k:], (), rest)
        for k in range(2, len(letters) - 2 * len(rest) + 1)
    )


def _spelled(short: Short, parts: Parts) -> list[int]:
    """The slots of a run of words whose openings spell a shortening (opening and
    closing on a compared word: "work from home" spells "wfh", "PlayStation"
    "PS", "American Express" "Amex"), or none."""
    _, letters, pieces = short
    flat = [(part, slot) for token, slot in parts for part in token]
    sizes = [len(pieces)] if pieces else range(2, len(letters) // 2 + 1)
    for n in sizes:
        for start in range(len(flat) - n + 1):
            run = flat[start : start + n]
            if run[0][1] < 0 or run[-1][1] < 0 or run[0][0][:1] != letters[:1]:
                continue
            if _openings(letters, pieces, [part for part, _ in run]):
                return sorted({slot for _, slot in run if slot >= 0})
    return []


def _may_spell(short: Short, openings: frozenset[str]) -> bool:
    """Whether a statement whose parts open with ``openings`` may hold the run a
    shortening spells: each of its pieces opens some part (a quick test)."""
    _, letters, pieces = short
    return all(p[:2] in openings for p in pieces) if pieces else letters[:2] in openings


def shared(
    shortenings: tuple[list[tuple[Short, ...]], list[tuple[Short, ...]]],
    parts: tuple[list[Parts], list[Parts]],
    openings: tuple[list[frozenset[str]], list[frozenset[str]]],
    rows: tuple[np.ndarray, np.ndarray],
    shared: tuple[np.ndarray, np.ndarray],
    valid: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair of rows, which words of each statement the other has (``shared``,
    updated): a word that shortens a run of words standing for that run when the
    other has it and not the word ("NYT" / "the New York Times", "BP med" /
    "blood pressure pill", "Amex" / "American Express")."""
    todo = [
        r for r in range(len(rows[0])) if shortenings[0][rows[0][r]] or shortenings[1][rows[1][r]]
    ]
    if not todo:
        return shared
    out = (shared[0].copy(), shared[1].copy())
    for r in todo:
        for side in (0, 1):
            mine, other = out[side], out[1 - side]
            theirs = parts[1 - side][rows[1 - side][r]]
            opens = openings[1 - side][rows[1 - side][r]]
            for short in shortenings[side][rows[side][r]]:
                slot = short[0]
                if mine[r, slot] or not valid[side][r, slot] or not _may_spell(short, opens):
                    continue
                run = _spelled(short, theirs)
                if run and not other[r, run].all():  # "Ubiquiti UDR": "Ubiquiti" was shared
                    mine[r, slot] = True
                    other[r, run] = True
    return out
