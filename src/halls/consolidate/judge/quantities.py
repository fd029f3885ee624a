"""Numbers and amounts (pure): what a statement claims of them, and how two statements' compare.

A statement claims numbers in digits, in number words ("seats twelve",
"twice a week") and in cadences ("biweekly": every 14 days), and amounts in
a unit of ``values.MEASURES`` ("12 km"). ``numbers_in`` and ``measured``
read them off one word of a statement (``reading.parse``); ``swapped`` and
``amounts_shared`` compare two statements' (``lexical``): two numbers are two
values, unless one is an amount the other gives in another unit ("12 km" /
"7.5 miles").
"""

from __future__ import annotations

import re

import numpy as np

from halls.consolidate.judge import lexicon, values

# Number words are values like digits ("seats twelve", "twice a week"), and
# stand for their numbers, so that "every two weeks" and "2 weeks" give the
# same number and "once a month" another (``values.normalise`` writes most of
# them as digits already). "one" is left out, it is mostly a pronoun ("the one
# I use").
NUMBER_VALUES: dict[str, float] = {
    **{w: float(n) for w, n in values.SMALL.items() if w != "one"},
    **{w: float(n) for w, n in (values.TENS | values.SCALES).items()},
    **{w: lexicon.number(n) for w, n in lexicon.table("times").items()},
}
# A cadence (``values.normalise`` writes each one word) is a number too: the
# days from one time to the next. "We release biweekly" and "We release
# monthly" each claim one the other lacks, as "every 2 weeks" and "every 30
# days" would: another value, never the same one.
CADENCE_DAYS = {w: lexicon.number(days) for w, days in lexicon.table("cadence_days").items()}
# "half" is a value but no number of its own ("half an hour" is "30 minutes").
NUMBER_WORDS = frozenset(NUMBER_VALUES) | {"half"}
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
# (measure, size in its base unit, number, unit, slot of the number, slot of
# the unit or -1): an amount a statement claims (``Parsed.amounts``).
Amount = tuple[str, float, float, str, int, int]
Amounts = tuple[Amount, ...]


def numbers_in(word: str) -> set[float]:
    """The numbers a word (lower case) claims: a number word's, a cadence's days,
    its digits."""
    out: set[float] = set()
    if word in NUMBER_VALUES:
        out.add(NUMBER_VALUES[word])
    elif word == "biweekly":  # "every two weeks" keeps its number
        out.add(2.0)
    if word in CADENCE_DAYS:
        out.add(CADENCE_DAYS[word])
    out.update(float(d) for d in _DIGITS.findall(word))
    return out


def measured(low: list[str], n: int) -> tuple[str, float, float, str] | None:
    """The amount token ``n`` and the unit after it give ("12 km"), as (measure,
    size in its base unit, number, unit); None when they give none."""
    digits = low[n].lstrip("~")  # "~7.5 miles": about 7.5
    if n + 1 >= len(low) or not _DIGITS.fullmatch(digits):
        return None
    number = float(digits)
    found = values.amount(number, low[n + 1])
    return None if found is None else (*found, number, low[n + 1])


def swapped(
    numbers: tuple[list[frozenset[float]], list[frozenset[float]]],
    amounts: tuple[list[Amounts], list[Amounts]],
    a: np.ndarray,
    b: np.ndarray,
) -> np.ndarray:
    """Per pair of rows: each statement claims a number the other does not ("every
    two weeks" / "once a month"; number words read as numbers, contrasts aside),
    an amount in another unit of the same size aside ("12 km" / "7.5 miles")."""
    out = []
    for i, j in zip(a.tolist(), b.tolist(), strict=True):
        x, y = numbers[0][i], numbers[1][j]
        if x - y and y - x and amounts[0][i] and amounts[1][j]:
            x, y = (
                x - _converted(amounts[0][i], amounts[1][j]),
                y - _converted(amounts[1][j], amounts[0][i]),
            )
        out.append(bool(x - y and y - x))
    return np.array(out, dtype=bool)


def _matches(mine: Amounts, theirs: Amounts) -> Amounts:
    """The amounts of ``mine`` that one of ``theirs`` gives in another unit: the same
    size, within ``values.TOLERANCE`` ("12 km" / "7.5 miles", "90 minutes" / "1.5
    hours"; in one unit, "82 kg" / "78 kg", two numbers are two values)."""
    return tuple(
        m for m in mine if any(values.same_amount(m[:2], t[:2]) and m[3] != t[3] for t in theirs)
    )


def _converted(mine: Amounts, theirs: Amounts) -> frozenset[float]:
    """The numbers of ``mine`` that ``theirs`` gives in another unit (``_matches``)."""
    return frozenset(m[2] for m in _matches(mine, theirs))


def amounts_shared(
    amounts: tuple[list[Amounts], list[Amounts]],
    rows: tuple[np.ndarray, np.ndarray],
    shared: tuple[np.ndarray, np.ndarray],
    valid: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair of rows, which words of each statement the other has (``shared``,
    updated): an amount's number and unit standing for the same amount in another
    unit ("12 km" / "7.5 miles")."""
    todo = [r for r in range(len(rows[0])) if amounts[0][rows[0][r]] and amounts[1][rows[1][r]]]
    if not todo:
        return shared
    out = (shared[0].copy(), shared[1].copy())
    for r in todo:
        mine, theirs = amounts[0][rows[0][r]], amounts[1][rows[1][r]]
        for side, found in ((0, _matches(mine, theirs)), (1, _matches(theirs, mine))):
            for *_, number, unit in found:
                for slot in (number, unit):
                    if slot >= 0 and valid[side][r, slot]:
                        out[side][r, slot] = True
    return out
