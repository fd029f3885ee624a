"""The rules the judge may apply over its model's reading: one registry, each rule measured.

A rule reads a pair's word features (``lexical``, computed inside the judge;
its columns by name: ``columns``, imported as ``W``) and moves probability
between labels for the pairs it applies to. Every rule is an entry of
``RULES`` with its name; ``scripts/ablate_rules.py`` prints what leaving
each one out does to the pairs nobody tuned to
(``training/pairs_unseen.txt``, ``pairs_blind.txt``), and only the names in
``ACTIVE`` run. A rule that pays neither there nor on the scenarios of
``halls bench dreams`` is deleted, not left switched off.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from halls.consolidate.judge import columns as W

SAME, UPDATE, RETRACT, UNRELATED = 0, 1, 2, 3


@dataclass(frozen=True)
class Rule:
    name: str
    what: str  # one line: the pairs it applies to, and the reading it moves
    applies: Callable[[np.ndarray], np.ndarray]  # word features -> bool per pair
    move: Callable[[np.ndarray, np.ndarray], None]  # (probabilities, rows) -> in place


def _to(target: int, *labels: int) -> Callable[[np.ndarray, np.ndarray], None]:
    def move(p: np.ndarray, rows: np.ndarray) -> None:
        for k in labels:
            p[rows, target] += p[rows, k]
            p[rows, k] = 0.0

    return move


def _only(label: int) -> Callable[[np.ndarray, np.ndarray], None]:
    def move(p: np.ndarray, rows: np.ndarray) -> None:
        p[rows] = 0.0
        p[rows, label] = 1.0

    return move


def marked(x: np.ndarray) -> np.ndarray:
    """The later statement says a word of change (or both do, and it claims something
    new), negation or retraction."""
    change = (x[:, W.CHANGE_B] > 0) | ((x[:, W.CHANGE_BOTH] > 0) & (x[:, W.CLAIMED] > 0))
    return change | (x[:, W.NEG_B] > 0) | (x[:, W.RETRACT_B] > 0)


def _addition(x: np.ndarray) -> np.ndarray:
    return (x[:, W.ADDITION] > 0) & ~(x[:, W.NEG_B] > 0) & ~(x[:, W.RETRACT_B] > 0)


def _never_same(p: np.ndarray, rows: np.ndarray) -> None:
    p[rows, SAME] = 0.0
    p[rows] /= np.maximum(p[rows].sum(axis=1, keepdims=True), 1e-12)


def _added_alike(x: np.ndarray) -> np.ndarray:
    """Both add one value past their subjects, end nothing, claim no other number."""
    ended = (x[:, W.NEG_B] > 0) | (x[:, W.RETRACT_B] > 0)
    return (x[:, W.ADDED_ALIKE] > 0) & ~ended & (x[:, W.SWAPPED_NUMBERS] == 0)


RULES: tuple[Rule, ...] = (
    Rule(
        "many-valued",
        "a second value of a many-valued verb (likes, plays), no change word: update -> unrelated",
        lambda x: (x[:, W.MANY] > 0) & ~marked(x),
        _to(UNRELATED, UPDATE),
    ),
    Rule(
        "new-addition",
        "an addition sharing at most half its words: same -> unrelated",
        lambda x: _addition(x) & (x[:, W.JACCARD] <= 0.5),
        _to(UNRELATED, SAME),
    ),
    Rule(
        "nothing-new",
        "the later claims no new word, or keeps every word of the earlier, unmarked: "
        "update -> same",
        lambda x: ((x[:, W.CLAIMED] == 0) | (x[:, W.DROPPED] == 0)) & ~marked(x),
        _to(SAME, UPDATE),
    ),
    Rule(
        "changed-alike",
        "both say a change to the same value: update -> same",
        lambda x: (
            (x[:, W.CHANGED_ALIKE] > 0)
            & ~((x[:, W.SWAPPED_NUMBERS] > 0) | (x[:, W.SWAPPED_NAMES] > 0))
        ),
        _to(SAME, UPDATE),
    ),
    Rule(
        "added-alike",
        "both add the same one value: update -> same",
        lambda x: _added_alike(x),
        _to(SAME, UPDATE),
    ),
    Rule(
        "also-alike",
        "both say 'also' of the same one value: unrelated -> same",
        lambda x: _added_alike(x) & (x[:, W.ALSO_ALIKE] > 0),
        _to(SAME, UNRELATED),
    ),
    Rule(
        "same-values",
        "read as an update, the same values and no change word: update -> same",
        lambda x: (x[:, W.SAME_VALUES] > 0) & ~marked(x),
        lambda p, rows: _to(SAME, UPDATE)(p, rows & (p.argmax(axis=1) == UPDATE)),
    ),
    Rule(
        "renumbered",
        "another number past the first word, all else equal: unrelated -> update",
        lambda x: (
            (x[:, W.RENUMBERED_ONLY] > 0)
            & (x[:, W.FIRST_MISSING_A] > 0)
            & ~marked(x)
            & (x[:, W.ADDITIVE_B] == 0)
        ),
        _to(UPDATE, UNRELATED),
    ),
    Rule(
        "other-numbers",
        "each claims a number the other lacks, or a counterpart relation: never same",
        lambda x: (x[:, W.SWAPPED_NUMBERS] > 0) | (x[:, W.COUNTERPART] > 0),
        _never_same,
    ),
    Rule(
        "other-person",
        "the same words about two people: all -> unrelated",
        lambda x: x[:, W.OTHER_PERSON] > 0,
        _only(UNRELATED),
    ),
)
# The rules that run: each of them, and "substitution" (a rule over a batch of
# pairs, below). ``scripts/ablate_rules.py`` measures each on the pairs nobody
# tuned to; docs/benchmarks.md has what each does there and on the scenarios
# of ``halls bench dreams``. Nine more were measured and deleted (2026-11-28):
# left out one at a time, the scenarios and the labelled pairs read as well or
# better without each (new-person: a blind pair worse, an unseen pair and a
# scenario better).
ACTIVE: frozenset[str] = frozenset({r.name for r in RULES} | {"substitution"})


def active(names: frozenset[str] | None = None) -> frozenset[str]:
    """The rules that run: ``names``, or the registry's ``ACTIVE``."""
    return ACTIVE if names is None else names


def apply(x: np.ndarray, p: np.ndarray, names: frozenset[str] | None = None) -> np.ndarray:
    """The model's probabilities ``p`` after the active rules, in registry order."""
    names = active(names)
    out = p.copy()
    for rule in RULES:
        if rule.name in names:
            rows = rule.applies(x)
            if rows.any():
                rule.move(out, rows)
    return np.clip(out, 0.0, 1.0)


# A word that tells two statements apart is counted in the rows of this many
# pairs at most (a word in most statements tells nothing apart).
MAX_SUBSTITUTED = 4096
SURE = 0.8  # a pair read ``unrelated`` this surely is read apart ...
SAME_FLOOR = 0.1  # ... when it leaves ``same`` less than this


def substitution(
    words: np.ndarray, a: np.ndarray, b: np.ndarray, p: np.ndarray, differ: np.ndarray
) -> np.ndarray:
    """Pairs of a batch read apart by one word put in another's place keep their
    restatements apart too (rule "substitution"): ``unrelated``, surely.

    "The orders-db replica lives in eu-west-1" / "The users-db replica lives
    in eu-west-1" differ in one word each, and are read as two facts; their
    restatements "orders-db read replica is hosted in eu-west-1" / "users-db
    read replica: eu-west-1 region" differ in many, and would read as a
    paraphrase. The word that told the first two apart ("orders" for
    "users", "Berlin" for "Munich") tells apart any two of which one has the
    first word only and the other the second only. ``words`` are the rows'
    content word ids (-1 past the end), ``differ`` the pairs whose values differ.
    """
    ids = [frozenset(row[row >= 0].tolist()) for row in words]
    # Read apart: surely another fact with hardly a chance of the same one, or
    # values each lacks where the reading is not ``same`` (as clustering reads
    # them: ``heuristic``).
    labels = p.argmax(axis=1)
    apart = ((p[:, UNRELATED] >= SURE) & (p[:, SAME] < SAME_FLOOR)) | (differ & (labels != SAME))
    swaps: set[tuple[int, int]] = set()
    for x, y in zip(a[apart].tolist(), b[apart].tolist(), strict=True):
        first, second = ids[x] - ids[y], ids[y] - ids[x]
        if len(first) == 1 and len(second) == 1:
            swaps.add((next(iter(first)), next(iter(second))))
    if not swaps:
        return p
    needed = {w for pair in swaps for w in pair}
    has: dict[int, set[int]] = {w: set() for w in needed}
    for r, row in enumerate(ids):
        for w in row & needed:
            has[w].add(r)
    together = np.flatnonzero(~apart | (p[:, SAME] >= SAME_FLOOR))
    x, y = a[together], b[together]
    out = p.copy()
    for u, v in swaps:
        only_u, only_v = list(has[u] - has[v]), list(has[v] - has[u])
        if len(only_u) * len(only_v) > MAX_SUBSTITUTED:
            continue
        hit = np.isin(x, only_u) & np.isin(y, only_v)
        hit |= np.isin(x, only_v) & np.isin(y, only_u)
        out[together[hit]] = 0.0
        out[together[hit], UNRELATED] = 1.0
    return out


def decided(x: np.ndarray) -> np.ndarray:
    """The pairs whose label a rule sets whatever the model says ("other-person"):
    the MLP is not trained on them (they would teach it that a word added up
    front makes another fact, which is true of "Eli's son" only)."""
    return next(r for r in RULES if r.name == "other-person").applies(x)
