"""The judge of statement pairs (pure): same, update, retract or unrelated?

One small protocol answers both questions a run asks: do two short-term
entries say the same thing (clustering), and how does a candidate relate to
a known fact (reconciliation). A pair is (earlier, later); the answer is a
label with a confidence:

- ``same``: the later statement restates the earlier one (a paraphrase or
  a confirmation, contrast and negation words included);
- ``update``: it gives a new value for the same thing ("Lena's employer is
  Bosch" after "Lena works at Siemens");
- ``retract``: it says the earlier one stopped being true, nothing new;
- ``unrelated``: a different fact: another subject or object, an addition
  beside the first ("also plays the piano"), or merely the same topic.

``LocalJudge`` (the default) is a small MLP over cheap lexical pair
features and the cosine (content words shared, added or dropped, a word
and its WordNet synonym counting as one where they are all that differs
(``synonyms``), a cadence as one word however written, names and
numbers that differ, where the first difference sits, change, negation,
additive, retraction and contrast words, many-valued and one-at-a-time
verbs, how much of what one statement negates the other affirms), computed in
numpy over a batch of pairs (``Statements`` parses each statement once), and,
when its weights carry a projection, over the two sentence embeddings (their
product and distance in a few principal directions: ``semantic``). How
one statement is read before two are compared (its content words, names,
values, negation scope, flags) is ``reading``. Its weights
(``judge_data/judge.npz``, 6 KB; several MLPs whose probabilities are
averaged, when trained so) are trained by ``scripts/train_judge.py`` on
``judge_data/pairs.txt`` and ``pairs_voices.txt`` and ship in the package:
nothing is downloaded. ``WordJudge`` is the word-list rule of
``reconcile`` behind the same protocol: the last resort when the weights are
missing, and the baseline the trained judge is measured against. The word
lists are features of the local judge, not its decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal, Protocol

import numpy as np

from halls.consolidate import values
from halls.consolidate.cross import N_LABELS as N_CROSS
from halls.consolidate.cross import Reader, default_reader
from halls.consolidate.reading import FLAG_ADDITIVE, MAX_WORDS, N_FLAGS, Parsed, denies, parse
from halls.consolidate.reconcile import Decision, Known, decide

Label = Literal["same", "update", "retract", "unrelated"]
LABELS: tuple[Label, ...] = ("same", "update", "retract", "unrelated")


@dataclass(frozen=True, slots=True)
class Pair:
    """Two statements, the earlier first; vectors are unit-length embeddings."""

    earlier: str
    later: str
    earlier_vec: np.ndarray
    later_vec: np.ndarray

    @property
    def similarity(self) -> float:
        return float(self.earlier_vec @ self.later_vec)


@dataclass(frozen=True, slots=True)
class Judgement:
    label: Label
    confidence: float  # the judge's probability of the label, 0..1
    by: str  # which judge answered
    # The probability of each of LABELS, when the judge gives them (the local one).
    probabilities: tuple[float, ...] = ()


class Judge(Protocol):
    name: str

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]: ...


def _pad(parsed: Sequence[Parsed], fill: int) -> tuple[np.ndarray, ...]:
    """Statements as (P x MAX_WORDS) arrays: roots (``fill`` if empty), name, number,
    contrast, capital, value, person, attribute, and whether the word has synonyms."""
    ids = np.full((len(parsed), MAX_WORDS), fill, dtype=np.int64)
    name = np.zeros((len(parsed), MAX_WORDS), dtype=bool)
    number = np.zeros_like(name)
    contrast = np.zeros_like(name)
    negated = np.zeros_like(name)
    capital = np.zeros_like(name)
    value = np.zeros_like(name)
    person = np.zeros_like(name)
    attribute = np.zeros_like(name)
    synonymous = np.zeros_like(name)
    for r, p in enumerate(parsed):
        k = len(p.ids)
        ids[r, :k], name[r, :k], number[r, :k], contrast[r, :k] = (
            p.roots,
            p.name,
            p.number,
            p.contrast,
        )
        capital[r, :k], value[r, :k], person[r, :k] = p.capital, p.value, p.person
        attribute[r, :k], negated[r, :k] = p.attribute, p.negated
        synonymous[r, :k] = [bool(s) for s in p.senses]
    return ids, name, number, contrast, capital, value, person, attribute, synonymous, negated


def _counterparts(
    first: list[frozenset[tuple[int, str]]],
    second: list[frozenset[tuple[int, str]]],
    a: np.ndarray,
    b: np.ndarray,
) -> np.ndarray:
    """Each statement names a relation the other lacks, of one pair of counterparts
    (``reading.COUNTERPARTS``: "my son" / "my daughter", "Mom" / "Dad")."""
    out = np.zeros(len(a), dtype=bool)
    for r, (i, j) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        x, y = first[i], second[j]
        if x and y and x != y:
            only_x, only_y = {n for n, _ in x - y}, {n for n, _ in y - x}
            out[r] = bool(only_x & only_y)
    return out


def _tail(
    valid: tuple[np.ndarray, np.ndarray], shared: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """The later statement has every word of the earlier one, and more, all of it
    after the last word they share."""
    (va, vb), (a_in_b, b_in_a) = valid, shared
    slots = np.arange(vb.shape[1])
    last_shared = np.where(vb & b_in_a, slots, -1).max(axis=1)
    first_new = np.where(vb & ~b_in_a, slots, vb.shape[1]).min(axis=1)
    return ~(va & ~a_in_b).any(axis=1) & (first_new < vb.shape[1]) & (first_new > last_shared)  # type: ignore[no-any-return]


def _family() -> int:
    """The root of "family": a relation, but of no one in particular."""
    return int(parse("family").roots[0])


def _first_missing(valid: np.ndarray, shared: np.ndarray) -> np.ndarray:
    """Where (0 = first word .. 1 = last) the first content word the other lacks sits."""
    missing = valid & ~shared
    count = valid.sum(axis=1)
    at = missing.argmax(axis=1) / np.maximum(count - 1, 1)
    return np.where(missing.any(axis=1), at, 1.0)  # type: ignore[no-any-return]


def _same_values(
    a_in_b: np.ndarray,
    b_in_a: np.ndarray,
    values: tuple[np.ndarray, np.ndarray],
    named: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """Both statements give values (names, numbers, addresses), one of them past its
    first word, and each one's values and capitalised words (a subject's name opening
    the sentence too) are all in the other.

    A name that opens both is only their subject ("Yusuf is training for a
    triathlon" / "... for a marathon"): the two give no value in common.
    """
    past = values[0][:, 1:].any(axis=1) | values[1][:, 1:].any(axis=1)
    some = values[0].any(axis=1) & values[1].any(axis=1) & past
    kept_a, kept_b = values[0] | named[0], values[1] | named[1]
    return some & ~(kept_a & ~a_in_b).any(axis=1) & ~(kept_b & ~b_in_a).any(axis=1)  # type: ignore[no-any-return]


Amounts = tuple[tuple[str, float, float, str, int, int], ...]  # ``Parsed.amounts``
N_LEXICAL = 53
# Columns of ``lexical`` that ``_kind_rules`` reads.
_JACCARD, _CHANGE_B, _NEG_B, _RETRACT_B, _ADDITION, _MANY, _CLAIMED = 2, 10, 12, 17, 27, 29, 31
_SINGLE = 30
_NOVEL, _DROPPED, _ADDITIVE_B, _DENIES = 5, 6, 15, 40
_NOVEL_NAMES, _NUMBERS_DIFFER, _CHANGE_BOTH, _FIRST_MISSING_A = 7, 9, 11, 25
# ... and those only the rules read: the MLP does not see them (``mlp_inputs``).
_SAME_VALUES, _SWAPPED_NUMBERS, _ONLY_NAMES, _OTHER_PERSON, _ATTRIBUTE = 34, 35, 36, 37, 38
_SWAPPED_NAMES, _DENIED, _CHANGED_ALIKE, _OTHER_RELATION, _RENUMBERED = 39, 41, 42, 43, 44
_OTHER_SUBJECT, _COUNTERPART, _TAIL, _RENUMBERED_ONLY, _NEW_PERSON = 45, 46, 47, 48, 49
_BOTH_END, _ADDED_ALIKE, _ALSO_ALIKE = 50, 51, 52
_NEG_A = 13
RULE_ONLY = (
    _SAME_VALUES,
    _SWAPPED_NUMBERS,
    _ONLY_NAMES,
    _OTHER_PERSON,
    _ATTRIBUTE,
    _SWAPPED_NAMES,
    _CHANGED_ALIKE,
    _OTHER_RELATION,
    _RENUMBERED,
    _OTHER_SUBJECT,
    _COUNTERPART,
    _TAIL,
    _RENUMBERED_ONLY,
    _NEW_PERSON,
    _BOTH_END,
    _ADDED_ALIKE,
    _ALSO_ALIKE,
)
N_MLP_LEXICAL = N_LEXICAL - len(RULE_ONLY)


def mlp_inputs(x: np.ndarray) -> np.ndarray:
    """The columns of ``features`` the MLP reads: all but the rules' own."""
    return np.delete(x, RULE_ONLY, axis=1)


class Statements:
    """Statements parsed and padded once, so that many pairs of them compare by row."""

    def __init__(self, texts: Sequence[str], vectors: np.ndarray | None = None) -> None:
        self.texts = list(texts)
        self.vectors = vectors
        parsed = [parse(t) for t in texts]
        self.words = _pad(parsed, -1)
        self.senses = [p.senses for p in parsed]
        self.numbers = [p.numbers for p in parsed]
        self.heads = [p.heads for p in parsed]
        self.shortenings = [p.shortenings for p in parsed]
        self.amounts = [p.amounts for p in parsed]
        self.kin = [p.kin for p in parsed]
        self.joins = np.array([p.joins for p in parsed], dtype=bool)
        self.parts = [p.parts for p in parsed]
        self.openings = [p.openings for p in parsed]
        self.owner = np.array([p.owner for p in parsed], dtype=bool)
        self.also = np.array([p.also for p in parsed], dtype=bool)
        self.flags = (
            np.stack([p.flags for p in parsed]) if parsed else np.zeros((0, N_FLAGS), np.float32)
        )

    def pairs(self, a: np.ndarray, b: np.ndarray) -> list[Pair]:
        """Rows a[i] (earlier) and b[i] (later) as ``Pair`` objects (needs vectors)."""
        assert self.vectors is not None
        t, v = self.texts, self.vectors
        return [Pair(t[x], t[y], v[x], v[y]) for x, y in zip(a.tolist(), b.tolist(), strict=True)]


def lexical(earlier: Sequence[str], later: Sequence[str], similarity: np.ndarray) -> np.ndarray:
    """The lexical features of many pairs at once (P x N_LEXICAL), numpy over the batch."""
    rows = np.arange(len(earlier))
    return lexical_rows(Statements(earlier), Statements(later), rows, rows, similarity)


def _equal_words(ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """Which word of one statement is which of the other's: (P x W x W) equality of
    word ids, empty slots (-1) never equal."""
    return ia[:, :, None] == np.where(ib >= 0, ib, -2)[:, None, :]  # type: ignore[no-any-return]


def _shared_words(
    first: Statements, second: Statements, a: np.ndarray, b: np.ndarray, eq: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair (first[a[i]], second[b[i]]), which words of each statement the other
    has: the same word (``eq``, P x W x W: ``_equal_words``), a synonym
    (``_synonyms_shared``), a word in capitals for the run it shortens
    (``_shortenings_shared``) or an amount in another unit (``_amounts_shared``)."""
    valid = (first.words[0][a] >= 0, second.words[0][b] >= 0)
    synonymous = (first.words[8][a], second.words[8][b])
    equal = (np.asarray(eq.any(axis=2)), np.asarray(eq.any(axis=1)))
    shared = _synonyms_shared((first.senses, second.senses), (a, b), equal, synonymous, valid)
    shared = _shortenings_shared(
        (first.shortenings, second.shortenings),
        (first.parts, second.parts),
        (first.openings, second.openings),
        (a, b),
        shared,
        valid,
    )
    return _amounts_shared((first.amounts, second.amounts), (a, b), shared, valid)


def lexical_rows(
    first: Statements, second: Statements, a: np.ndarray, b: np.ndarray, similarity: np.ndarray
) -> np.ndarray:
    """The lexical features of pairs (first[a[i]], second[b[i]]), numpy over the batch."""
    ia, na_, ua, ca, capa, vala, pa, ata, sa, nega = (m[a] for m in first.words)
    ib, nb_, ub, cb, capb, valb, pb, atb, sb, negb = (m[b] for m in second.words)
    eq = _equal_words(ia, ib)
    ib = np.where(ib >= 0, ib, -2)  # empty slots never match the other side's
    va, vb = ia >= 0, ib >= 0
    a_in_b, b_in_a = _shared_words(first, second, a, b, eq)
    fa, fb = first.flags[a], second.flags[b]
    n_a, n_b = va.sum(axis=1), vb.sum(axis=1)
    shared = a_in_b.sum(axis=1)
    novel_w, dropped_w = vb & ~b_in_a, va & ~a_in_b
    novel, dropped = novel_w.sum(axis=1), dropped_w.sum(axis=1)
    novel_names, dropped_names = (novel_w & nb_).sum(axis=1), (dropped_w & na_).sum(axis=1)
    novel_nums, dropped_nums = (novel_w & ub).sum(axis=1), (dropped_w & ua).sum(axis=1)
    novel_contrast = (novel_w & cb).sum(axis=1)
    dropped_contrast = (dropped_w & ca).sum(axis=1)
    change_a, neg_a, add_a, ret_a, epi_a, multi_a, single_a, len_a = fa.T
    change_b, neg_b, add_b, ret_b, epi_b, multi_b, single_b, len_b = fb.T
    first_same = (ia[:, 0] == ib[:, 0]).astype(np.float32)
    # What is new beyond contrasts ("never in Word") is a new value.
    claimed = np.maximum(novel - novel_contrast, 0)
    sim = similarity.astype(np.float32)
    cols = [
        sim,
        sim * sim,
        shared / np.maximum(n_a + n_b - shared, 1),
        novel / np.maximum(n_b, 1),
        dropped / np.maximum(n_a, 1),
        np.minimum(novel, 5) / 5,
        np.minimum(dropped, 5) / 5,
        np.minimum(novel_names, 3) / 3,
        np.minimum(dropped_names, 3) / 3,
        ((novel_nums + dropped_nums) > 0),
        # Markers count where only the later statement has them: two
        # statements that both say "also" or "now" say the same thing.
        change_b * (1 - change_a),
        change_a * change_b,
        neg_b * (1 - neg_a),
        neg_a * (1 - neg_b),
        neg_a * neg_b,
        add_b * (1 - add_a),
        add_a,
        ret_b * (1 - ret_a),
        epi_b,
        epi_a,
        first_same,
        (len_b - len_a),
        np.minimum(novel, dropped) / 5,
        (novel_names > 0) & (dropped_names > 0),
        (novel_nums > 0) & (dropped_nums > 0),
        # A difference up front is another subject; at the end, another value.
        _first_missing(va, a_in_b),
        _first_missing(vb, b_in_a),
        # An addition says "also" AND brings something new; "also" over the
        # same words is a restatement.
        add_b * (1 - add_a) * (claimed > 0),
        add_b * (claimed == 0),
        # Several values may hold at once for likes, plays, speaks...; one
        # at a time for lives in, works at, is called...
        multi_a * multi_b,
        np.maximum(single_a, single_b),
        np.minimum(claimed, 3) / 3,
        np.minimum(novel_contrast + dropped_contrast, 3) / 3,
        ((novel == 0) & (dropped == 0)),
        # The values a statement gives are mostly its names and numbers: two
        # statements naming the same ones and no others, about the same named
        # subject ("Lena" and "Jonas" opening them are two people), give the same.
        _same_values(a_in_b, b_in_a, (va & vala, vb & valb), (va & capa, vb & capb)),
        _swapped((first.numbers, second.numbers), (first.amounts, second.amounts), a, b),
        # The two share no word but capitalised ones (names, a subject).
        (only_names := ~(a_in_b & va & ~capa).any(axis=1)),
        # They differ in the people they are about, and in nothing else.
        _other_person((dropped_w, novel_w), (pa, pb)),
        # One of them only names the attribute whose value both give.
        _names_attribute((dropped_w, novel_w), (ata, atb)),
        _swapped_names((dropped_w, novel_w), (na_ | vala, nb_ | valb)),
        # How much of what one statement denies the other affirms ("Sven no
        # longer drinks green tea" denies all of "Sven drinks green tea"; "standup
        # at 9:30, not at 10", "no tabs", "never goes by Samantha" after "goes by
        # Sam, not Samantha" deny nothing the other affirms).
        denies(eq, (va, vb), (nega, negb)),
        denies(eq.transpose(0, 2, 1), (vb, va), (negb, nega)),
        # A value both give past the subject ("replaced her Civic with a Toyota
        # RAV4" / "now drives a Toyota RAV4": the RAV4, not Hannah).
        (both_change := change_a * change_b > 0)
        & (
            (a_in_b & vala)[:, 1:].any(axis=1)
            | _shared(first.numbers, second.numbers, a, b, both_change)
        ),
        # Each is about a relation the other does not name ("my sister's
        # birthday" / "my brother's birthday").
        (dropped_w & pa).any(axis=1) & (novel_w & pb).any(axis=1),
        # Each opens with a common word the other lacks ("the staging database" /
        # "the production database", "kitchen tap" / "bathroom tap"): the subject
        # is another (an opening name is left to the model: "Amara is the product
        # owner" / "Kwame is the product owner" changes who is).
        # Each gives a number of the same thing ("Year 3" / "Year 4").
        _shared(first.heads, second.heads, a, b, only_names),
        # (Not where either is said of "I" or "we": its first word is then what
        # is said, no subject: "User speaks Spanish" / "I'm fluent in Spanish".)
        (va & ~a_in_b & ~(capa | vala))[:, 0]
        & (vb & ~b_in_a & ~(capb | valb))[:, 0]
        & ~(first.owner[a] | second.owner[b]),
        # Each names a relation of one pair the other lacks ("son" / "daughter").
        _counterparts(first.kin, second.kin, a, b),
        # The later one is the earlier one and more after it, joined to nothing
        # by "and" ("I speak Spanish" / "User speaks Spanish fluently").
        _tail((va, vb), (a_in_b, b_in_a)) & ~second.joins[b],
        # Only numbers differ: each gives a number the other lacks, and every
        # other word is the same ("takes 500 mg" / "takes 1000 mg").
        (novel > 0) & (dropped > 0) & (novel == novel_nums) & (dropped == dropped_nums),
        # The later one opens with a relation to someone the earlier one does not
        # name ("Rahul's colleague Neha cycles to work" after "Rahul cycles to
        # work", "my roommate smokes" after "I smoke").
        # ("The family dog" names no one; "the user and partner" both.)
        (novel_w & pb & (ib != _family()))[:, :2].any(axis=1)
        & ~(dropped_w & pa).any(axis=1)
        & ~second.joins[b],
        # Both say a thing ended ("Our dog Max died last week" / "Max the dog has
        # passed away", "Sold the car" / "No longer owns a car").
        ret_a * ret_b,
        # Both say a word of addition and name one value past their subjects
        # ("Youssef speaks English too" / "is comfortable in English as well").
        (added_alike := add_a * add_b * _value_shared((va & vala, na_), a_in_b)),
        # ... and both say "also", "too", "as well", "besides" or "in addition".
        added_alike * first.also[a] * second.also[b],
    ]
    return np.stack([np.asarray(c, dtype=np.float32) for c in cols], axis=1)


def _value_shared(values: tuple[np.ndarray, np.ndarray], shared: np.ndarray) -> np.ndarray:
    """A statement names a value past its subject that the other has: past its
    first content word, or that word where it is a name that does not open the
    sentence ("I also have a Honda Civic"). (Past the first word alone, as
    ``_CHANGED_ALIKE`` reads it, lost one never-read scenario and a LoCoMo fact.)"""
    named, late = values[0].copy(), values[1]
    named[:, 0] &= late[:, 0]
    return (named & shared).any(axis=1)  # type: ignore[no-any-return]


def _synonyms_shared(
    senses: tuple[list[tuple[frozenset[int], ...]], list[tuple[frozenset[int], ...]]],
    rows: tuple[np.ndarray, np.ndarray],
    shared: tuple[np.ndarray, np.ndarray],
    synonymous: tuple[np.ndarray, np.ndarray],
    valid: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Which words of each statement the other has, synonyms standing for each other
    when they are all that differs ("The library closes at 8" / "The library shuts
    at 8", "Noah bought a sofa" / "Noah bought a couch").

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
        xs, ys = senses[0][rows[0][r]], senses[1][rows[1][r]]
        ia, ib = np.flatnonzero(lack_a[r]).tolist(), np.flatnonzero(lack_b[r]).tolist()
        found_a = {i for i in ia if any(xs[i] & ys[j] for j in ib)}
        found_b = {j for j in ib if any(xs[i] & ys[j] for i in ia)}
        if len(found_a) == len(ia) and len(found_b) == len(ib):
            a_in_b[r, ia] = b_in_a[r, ib] = True
    return a_in_b, b_in_a


Parts = tuple[tuple[tuple[str, ...], int], ...]  # per token: its parts, its slot or -1
Short = tuple[int, str, tuple[str, ...]]  # a word that may shorten others (``reading.parse``)


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


def _shortenings_shared(
    shortenings: tuple[list[tuple[Short, ...]], list[tuple[Short, ...]]],
    parts: tuple[list[Parts], list[Parts]],
    openings: tuple[list[frozenset[str]], list[frozenset[str]]],
    rows: tuple[np.ndarray, np.ndarray],
    shared: tuple[np.ndarray, np.ndarray],
    valid: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Which words of each statement the other has, a word that shortens a run of
    words standing for that run when the other has it and not the word ("NYT" /
    "the New York Times", "BP med" / "blood pressure pill", "Amex" / "American
    Express")."""
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


def _other_person(
    differ: tuple[np.ndarray, np.ndarray], person: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """The only words one statement has and the other lacks are relations to someone
    ("Eli is allergic to cats" / "Eli's son is allergic to cats", "Dan's boss is
    Fiona" / "Dan's mentor is Fiona"): the same words about two people."""
    some = (differ[0] & person[0]).any(axis=1) | (differ[1] & person[1]).any(axis=1)
    rest = (differ[0] & ~person[0]).any(axis=1) | (differ[1] & ~person[1]).any(axis=1)
    return some & ~rest  # type: ignore[no-any-return]


def _names_attribute(
    differ: tuple[np.ndarray, np.ndarray], attribute: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """All that one statement has beyond the other is the name of an attribute, and the
    other has nothing beyond it ("We release biweekly" / "The release cadence is
    biweekly", "Ahmed is 40" / "Ahmed's age is 40")."""
    out = np.zeros(len(differ[0]), dtype=bool)
    for side in (0, 1):
        here, there, named = differ[side], differ[1 - side], attribute[side]
        out |= here.any(axis=1) & ~(here & ~named).any(axis=1) & ~there.any(axis=1)
    return out


def _swapped_names(
    differ: tuple[np.ndarray, np.ndarray], capital: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """Each statement has a value the other lacks: a name (capitalised past the first
    word, or inside it), a number or an address ("staging.example.com" /
    "stage.example.org"): another subject ("The London office opens at 8" / "The Berlin office
    opens at 8") or another value ("works at Siemens" / "works at Bosch"), never the
    same thing said twice. A capital opening a sentence is a name only when it is a
    given name ("Lena works at Siemens" / "Jonas has a job at Siemens"): notes often
    start with a verb or a common noun ("Prefers aisle seats", "User always books")."""
    return (differ[0] & capital[0]).any(axis=1) & (differ[1] & capital[1]).any(axis=1)  # type: ignore[no-any-return]


def _swapped(
    numbers: tuple[list[frozenset[float]], list[frozenset[float]]],
    amounts: tuple[list[Amounts], list[Amounts]],
    a: np.ndarray,
    b: np.ndarray,
) -> np.ndarray:
    """Each statement claims a number the other does not ("every two weeks" / "once a
    month"; number words read as numbers, contrasts aside), an amount in another
    unit of the same size aside ("12 km" / "7.5 miles")."""
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


def _amounts_shared(
    amounts: tuple[list[Amounts], list[Amounts]],
    rows: tuple[np.ndarray, np.ndarray],
    shared: tuple[np.ndarray, np.ndarray],
    valid: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Which words of each statement the other has, an amount's number and unit
    standing for the same amount in another unit ("12 km" / "7.5 miles")."""
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


def _shared(
    first: Sequence[frozenset[float] | frozenset[int]],
    second: Sequence[frozenset[float] | frozenset[int]],
    a: np.ndarray,
    b: np.ndarray,
    where: np.ndarray,
) -> np.ndarray:
    """Pairs whose two sets meet (both claim a number: "500 Mbps" / "500Mbps"), read
    only ``where`` a rule needs it (a loop in Python, over every pair a clustering
    judges)."""
    out = np.zeros(len(a), dtype=bool)
    rows = np.flatnonzero(where)
    out[rows] = [bool(first[i] & second[j]) for i, j in zip(a[rows], b[rows], strict=True)]
    return out


def swapped_values(statements: Statements, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pair of rows: each statement claims a number the other lacks (``_swapped``),
    or has a value (a name, a number, an address) the other lacks (``_swapped_names``).

    Which words the other has is read as the judge's features read it
    (``_shared_words``): clustering holds apart only what the judge could not
    read as one value ("WSJ" / "the Wall Street Journal" share their name)."""
    capa, capb = statements.words[5][a], statements.words[5][b]  # values: names, numbers, addresses
    numbers, amounts = statements.numbers, statements.amounts
    ia, ib = statements.words[0][a], statements.words[0][b]
    shared = _shared_words(statements, statements, a, b, _equal_words(ia, ib))
    lack_a, lack_b = (ia >= 0) & ~shared[0], (ib >= 0) & ~shared[1]
    named = _swapped_names((lack_a, lack_b), (capa, capb))
    return _swapped((numbers, numbers), (amounts, amounts), a, b) | named  # type: ignore[no-any-return]


def same_values(statements: Statements, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pair of rows: the two name the same values, one past the first word, and
    say no word of change, negation or retraction (``_SAME_VALUES``)."""
    out = np.zeros(len(a), dtype=bool)
    if len(a):
        x = lexical_rows(statements, statements, a, b, np.zeros(len(a), dtype=np.float32))
        marked = (x[:, _CHANGE_B] > 0) | (x[:, _NEG_B] > 0) | (x[:, _RETRACT_B] > 0)
        out = (x[:, _SAME_VALUES] > 0) & ~marked
    return out  # type: ignore[no-any-return]


def same_change(fact: str, first: str, second: str) -> bool:
    """Whether two statements that each change ``fact`` give it the same new value.

    What each says beyond the fact is its new value: its names and numbers
    when it has any ("PostgreSQL 16", "Postgres 16"), else its words ("we
    release monthly", "releases ship monthly"). The two agree when those
    overlap and neither names a value the other lacks while the other names
    one it lacks ("Pixel 8" / "Pixel 9" are two changes)."""
    known = set(parse(fact).roots.tolist())
    news = []
    for text in (first, second):
        p = parse(text)
        new = [n for n, r in enumerate(p.roots.tolist()) if r not in known]
        news.append(
            (
                {int(p.roots[n]) for n in new},
                {int(p.roots[n]) for n in new if p.value[n]},
            )
        )
    (words_a, values_a), (words_b, values_b) = news
    if values_a or values_b:
        return bool(values_a & values_b) and not (values_a - values_b and values_b - values_a)
    return bool(words_a & words_b)


def restates_change(fact: str, changed: str, text: str) -> bool:
    """Whether ``text`` says again the change ``changed`` made to ``fact``: it gives
    the fact the same new value (``same_change``) and names no value beside those
    of the two ("Ana left Zalando and joined Adyen" after "Ana works at Zalando"
    -> "Ana switched jobs, she's at Adyen now"; not "Ana left Adyen for Mollie",
    a change more)."""
    if not same_change(fact, changed, text):
        return False
    p = parse(text)
    named = {int(r) for n, r in enumerate(p.roots.tolist()) if p.value[n]}
    known = set(parse(fact).roots.tolist()) | set(parse(changed).roots.tolist())
    return named <= known


def semantic(u: np.ndarray, v: np.ndarray, projection: np.ndarray | None) -> np.ndarray:
    """Features of the two embeddings: their product and distance in a projected space.

    ``projection`` (dim x k, from training: the principal directions of the
    training statements) keeps the pair classifier small; None: no columns.
    """
    if projection is None or not projection.size:
        return np.zeros((len(u), 0), dtype=np.float32)
    pu, pv = u @ projection, v @ projection
    return np.concatenate([pu * pv, np.abs(pu - pv)], axis=1).astype(np.float32)


def features(pairs: Sequence[Pair], projection: np.ndarray | None = None) -> np.ndarray:
    """One row of features per pair: the lexical ones (the cosine is among them), then
    the ``semantic`` ones when a projection is given."""
    if not pairs:
        k = 0 if projection is None else 2 * projection.shape[1]
        return np.zeros((0, N_LEXICAL + k), dtype=np.float32)
    u = np.stack([p.earlier_vec for p in pairs]).astype(np.float32)
    v = np.stack([p.later_vec for p in pairs]).astype(np.float32)
    sims = np.einsum("ij,ij->i", u, v)
    lex = lexical([p.earlier for p in pairs], [p.later for p in pairs], sims)
    return np.concatenate([lex, semantic(u, v, projection)], axis=1)


# -- the judges --

_SAME, _UPDATE, _RETRACT, _UNRELATED = (LABELS.index(k) for k in LABELS)


def _about_another(x: np.ndarray) -> np.ndarray:
    """The pairs that differ only in the people they are about ("Eli's son")."""
    return x[:, _OTHER_PERSON] > 0  # type: ignore[no-any-return]


def _names_the_attribute(x: np.ndarray) -> np.ndarray:
    """The pairs where one statement only adds the name of the attribute whose value
    the other gives ("the release cadence is biweekly"), marking no change."""
    marked = (x[:, _CHANGE_B] > 0) | (x[:, _NEG_B] > 0) | (x[:, _RETRACT_B] > 0)
    return (x[:, _ATTRIBUTE] > 0) & ~marked  # type: ignore[no-any-return]


def decided(x: np.ndarray) -> np.ndarray:
    """The pairs whose label ``_kind_rules`` sets whatever the MLP says: the MLP is
    trained without them (they would teach it, say, that a word added up front
    makes another fact, which is true of "Eli's son" only)."""
    return _about_another(x) | _names_the_attribute(x)  # type: ignore[no-any-return]


def _kind_rules(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Readings the model may not make, whatever its training pairs say.

    A second value of a many-valued verb (likes, plays, speaks...) without a
    word of change, negation or retraction is another fact, not a change;
    an addition ("also", "too", "as well", "in addition") that brings
    something new and neither negates nor retracts is another fact too.
    Their probability of ``update`` (and, for additions, ``retract``; for
    additions sharing under half their words, ``same``) moves to
    ``unrelated``. A statement that claims nothing new and marks no
    change is no update: that probability moves to ``same`` (so does one
    naming exactly the same values). Two statements that each claim a
    number the other lacks are never ``same``. And a change that shares
    only names with what it changes, says no word of change and names no
    one-at-a-time attribute (lives in, works at, car, version...) is
    another fact: ``update`` and ``retract`` move to ``unrelated``. Two
    statements that differ only in the people they are about ("Eli's son")
    are two facts: all of the probability goes to ``unrelated``; two that
    differ only in one of them naming the attribute whose value both give
    ("the release cadence is biweekly") are one: all of it goes to ``same``;
    so does a later one that is the earlier one with a detail after it ("I
    speak Spanish" / "User speaks Spanish fluently"). Two that each name
    another of a pair of relations ("son" / "daughter"), or whose later one
    opens with a relation to someone the earlier one does not name ("my
    roommate smokes" after "I smoke"), are never ``same``; two that differ
    only in a number past the first word ("takes 500 mg" / "takes 1000 mg")
    are never ``unrelated``. Two that each say a thing ended are no retraction of
    one another.
    """
    change, negation, retraction = x[:, _CHANGE_B] > 0, x[:, _NEG_B] > 0, x[:, _RETRACT_B] > 0
    # Both may say a change ("Switched our DNS to Route 53" / "DNS is now on
    # Cloudflare"): the later one says one too when it claims something new.
    change |= (x[:, _CHANGE_BOTH] > 0) & (x[:, _CLAIMED] > 0)
    addition = (x[:, _ADDITION] > 0) & ~negation & ~retraction
    many = (x[:, _MANY] > 0) & ~(change | negation | retraction)
    # ... and when the addition shares no more than half its words with the
    # earlier statement ("Omar is a guitar player" / "Omar also plays the
    # piano"), it is no restatement of it either.
    new = addition & (x[:, _JACCARD] <= 0.5)
    out = p.copy()
    rules = ((many, (_UPDATE,)), (addition, (_UPDATE, _RETRACT)), (new, (_SAME,)))
    for rows, labels in rules:
        for k in labels:
            out[rows, _UNRELATED] += out[rows, k]
            out[rows, k] = 0.0
    # A change needs something new: a later statement that claims no word
    # the earlier one lacks (contrasts aside) and says no word of change,
    # negation or retraction restates it.
    nothing_new = (x[:, _CLAIMED] == 0) & ~(change | negation | retraction)
    # ... and it replaces something: a later statement that keeps every word of
    # the earlier one and adds to it ("swim practice on Tuesdays" / "swimming
    # practice every Tuesday at 5") says more of the same fact, or another one,
    # unless it says a word of change (none of the 322 labelled pairs so, in
    # the three files, is an ``update``).
    nothing_new |= (x[:, _DROPPED] == 0) & ~(change | negation | retraction)
    out[nothing_new, _SAME] += out[nothing_new, _UPDATE]
    out[nothing_new, _UPDATE] = 0.0
    # Part of what was said, and nothing else, restates it: a later statement
    # with no word the earlier one lacks, that drops some of its words ("never
    # goes by Samantha" after "goes by Sam, not Samantha", "Lena works at
    # Siemens" after "... in Munich"), marks no change, retraction or addition
    # and denies nothing the earlier one affirms, is no other fact. Of the 33
    # such labelled pairs (with the condition below) 32 are ``same``; the
    # other is about another person ("Tariq's son"), read below.
    # It keeps most of it: a brief's hint "Standup" keeps half of "Standup is at
    # 9:30" and names its topic, which restates nothing.
    part = (x[:, _NOVEL] == 0) & (x[:, _DROPPED] > 0) & (x[:, _DENIES] == 0)
    part &= x[:, _JACCARD] > 0.5
    part &= ~(change | retraction) & (x[:, _ADDITIVE_B] == 0)
    for k in (_UNRELATED, _RETRACT):
        out[part, _SAME] += out[part, k]
        out[part, k] = 0.0
    # The later one is the earlier one with more said after it, no value among
    # it, no word of change, negation, retraction or addition, and nothing joined
    # by "and": a detail of the same fact ("I speak Spanish" / "User speaks
    # Spanish fluently", "I play chess" / "I play chess most evenings after
    # dinner"). Of the 29 labelled pairs so (the three files), 28 are ``same``.
    tail = (x[:, _TAIL] > 0) & ~(change | negation | retraction) & (x[:, _ADDITIVE_B] == 0)
    tail &= (x[:, _NOVEL_NAMES] == 0) & (x[:, _NUMBERS_DIFFER] == 0)
    out[tail, _SAME] += out[tail, _UNRELATED] + out[tail, _UPDATE] + out[tail, _RETRACT]
    out[tail, _UNRELATED] = out[tail, _UPDATE] = out[tail, _RETRACT] = 0.0
    # The same words, and no word of change, negation or retraction the other
    # lacks, say the same thing, however the model reads them ("I play the
    # guitar" / "User plays guitar", "I like jazz" / "I really like jazz"). Of
    # the 83 labelled pairs so (the three files), 80 are ``same``; two of the
    # others were relations compared by their first letters ("grandma" /
    # "grandpa", no longer), the third swaps the order ("tabs over spaces").
    alike = (x[:, _NOVEL] == 0) & (x[:, _DROPPED] == 0) & ~(change | negation | retraction)
    alike &= (x[:, _NEG_A] == 0) & (x[:, _DENIES] == 0) & (x[:, _DENIED] == 0)
    out[alike] = 0.0
    out[alike, _SAME] = 1.0
    # Two statements that each say a thing changed, to a value both give past
    # their subject and with no value either lacks, say the same change ("Hannah
    # replaced her Civic with a Toyota RAV4" / "Hannah now drives a Toyota
    # RAV4"): neither changes the other. (None of the 33 labelled pairs so is
    # an ``update``; the seven ``unrelated`` ones, "Standup moved to 10:00" /
    # "Retro moved to 10:00", keep that reading.)
    swapped = (x[:, _SWAPPED_NUMBERS] > 0) | (x[:, _SWAPPED_NAMES] > 0)
    alike = (x[:, _CHANGED_ALIKE] > 0) & ~swapped
    out[alike, _SAME] += out[alike, _UPDATE]
    out[alike, _UPDATE] = 0.0
    # Two statements that each say a word of addition and name one value past
    # their subjects add that value, the one as the other: neither changes the
    # other ("we bought a second car, a Toyota Prius" / "there's a Prius in the
    # driveway now besides the Outback").
    # (Not two that each give a number the other lacks: "coaches the under-10s"
    # / "moved up to coach the under-12s".)
    added = (x[:, _ADDED_ALIKE] > 0) & ~(negation | retraction) & (x[:, _SWAPPED_NUMBERS] == 0)
    out[added, _SAME] += out[added, _UPDATE]
    out[added, _UPDATE] = 0.0
    also = added & (x[:, _ALSO_ALIKE] > 0)
    out[also, _SAME] += out[also, _UNRELATED]
    out[also, _UNRELATED] = 0.0
    # Two statements about two relations of someone ("my sister's birthday is
    # on June 3rd" / "my brother's birthday is on June 30th") are about two
    # people: the one does not change the other (of the 27 labelled pairs so,
    # one is an update, where the relation is the value: "read by her dad" /
    # "her mum reads it").
    relations = x[:, _OTHER_RELATION] > 0
    # ... and two that each name another of a pair ("son" / "daughter", "Mom" /
    # "Dad") are never the same fact either (as other numbers, below).
    kin = x[:, _COUNTERPART] > 0
    # So are two statements that open with two common words ("the staging
    # database is MySQL" / "the production database is PostgreSQL", "the van's
    # MOT is due in June" / "the car's MOT is due in September") and say no
    # word of change: of the 229 labelled pairs so, 10 are updates.
    relations |= (x[:, _OTHER_SUBJECT] > 0) & ~(change | negation | retraction)
    out[relations, _UNRELATED] += out[relations, _UPDATE]
    out[relations, _UPDATE] = 0.0
    # An update gives a new value. Read as one, a later statement that names
    # exactly the earlier one's names, numbers and addresses (and the same
    # capitalised subject), with no word of change, gives none: it says the
    # same thing ("exposes a REST API", "has a REST interface"). Its
    # ``update`` probability moves to ``same``; other readings stand. (Not
    # where the only value is the name both open with: "Yusuf is training for
    # a triathlon" / "... for a marathon". Of the labelled pairs the model
    # read so as an update, 19 are updates and 5 the same fact.)
    kept = (x[:, _SAME_VALUES] > 0) & ~(change | negation | retraction)
    kept &= out.argmax(axis=1) == _UPDATE
    out[kept, _SAME] += out[kept, _UPDATE]
    out[kept, _UPDATE] = 0.0
    # An implicit change that shares only a name with what it changes is a
    # new value of a one-at-a-time attribute ("works at Deloitte" /
    # "employer is KPMG") or nothing: two statements about one person on
    # two subjects are two facts.
    # (A new number of the same thing, "Year 3" / "Year 4", is such a value.)
    loose = (x[:, _ONLY_NAMES] > 0) & (x[:, _SINGLE] == 0) & ~(change | negation | retraction)
    loose &= x[:, _RENUMBERED] == 0
    for k in (_UPDATE, _RETRACT):
        out[loose, _UNRELATED] += out[loose, k]
        out[loose, k] = 0.0
    # A restatement gives the same numbers: when each statement claims a number
    # the other lacks ("every two weeks", "once a month"), the two are a change
    # or two facts, never the same one. ``same`` goes; the other readings keep
    # their odds. (46 of the 544 such pairs of the three training files are
    # ``same``; left to the models, they read the pairs never trained on and
    # the never-read scenarios worse.) A name each lacks no longer rules it
    # out: a name added in passing (a region's country beside its code, a
    # pet's name for "our dog", a brand beside a product) restates. Of the 946
    # training pairs that differ so (names only), 82 are ``same`` (45 of 425
    # in the measured files). The models weigh them; they still read most such
    # restatements as a change ("My sister Ines lives in Porto" / "My sister is
    # based in Porto, Portugal": ``same`` 0.39), but the never-read scenarios
    # and pairs read better without the rule (docs/benchmarks.md, session 27).
    never = (x[:, _SWAPPED_NUMBERS] > 0) | kin
    # ... and so are two where the later one opens with a relation to someone the
    # earlier one does not name ("Mia's best friend has a peanut allergy too",
    # "my roommate smokes on the balcony"): of the 126 labelled pairs so (the three
    # files), 123 are two facts.
    never |= (x[:, _NEW_PERSON] > 0) & ~(change | negation | retraction)
    # Another number where every other word is the same, past the statement's
    # first word ("Dad takes 500 mg of metformin" / "Dad takes 1000 mg of
    # metformin"), with no word of change, negation, retraction or addition, is a
    # new value of the same thing, not another fact: of the 33 labelled pairs so
    # (the three files), 30 are updates, one numbers a floor ("the printer on
    # floor two") and two restate a date in other digits ("May 3 to May 10" /
    # "3-10 may"), whose reading as ``same`` this leaves alone.
    # Opening the statement, a number names the subject ("the 38 bus" / "the 39
    # bus"): that stays the model's to read.
    renumbered = (x[:, _RENUMBERED_ONLY] > 0) & (x[:, _FIRST_MISSING_A] > 0)
    renumbered &= ~(change | negation | retraction) & (x[:, _ADDITIVE_B] == 0)
    out[renumbered, _UPDATE] += out[renumbered, _UNRELATED]
    out[renumbered, _UNRELATED] = 0.0
    out[never, _SAME] = 0.0
    out[never] /= np.maximum(out[never].sum(axis=1, keepdims=True), 1e-12)
    # The same words about two people ("Eli's son is allergic to cats" after
    # "Eli is allergic to cats") are two facts, whatever else is said: neither
    # restates, changes nor retracts the other.
    other = _about_another(x)
    out[other] = 0.0
    out[other, _UNRELATED] = 1.0
    # A statement that only adds the name of the attribute whose value the
    # other gives ("the release cadence is biweekly" after "we release
    # biweekly"), and marks no change, says the same thing.
    named = _names_the_attribute(x)
    out[named] = 0.0
    out[named, _SAME] = 1.0
    # Two statements that each say a thing ended say one ending: the later one
    # ends nothing the earlier one had not ended ("Our dog Max died last week" /
    # "Max the dog has passed away"). Of the 61 labelled pairs so (the three
    # files), 45 are ``same`` and 3 ``retract``; the model read one of the 45 as a
    # retraction and none of the 3.
    ended = x[:, _BOTH_END] > 0
    out[ended, _SAME] += out[ended, _RETRACT]
    out[ended, _RETRACT] = 0.0
    # (Moved in float32, a probability may sum to a hair above 1.)
    return np.clip(out, 0.0, 1.0)


class _MLP:
    """Two-layer MLPs whose probabilities are averaged (an ensemble of members
    trained from several starting points: one MLP's readings of rare pairs swing
    with its seed), the rules applied after them."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.mean = weights["mean"].astype(np.float32)
        self.std = weights["std"].astype(np.float32)
        # One MLP is an ensemble of one: (members, in, hidden) and so on.
        w1 = weights["w1"].astype(np.float32)
        single = w1.ndim == 2
        self.w1 = w1[None] if single else w1
        self.b1 = weights["b1"].astype(np.float32).reshape(len(self.w1), -1)
        w2 = weights["w2"].astype(np.float32)
        self.w2 = w2[None] if single else w2
        self.b2 = weights["b2"].astype(np.float32).reshape(len(self.w2), -1)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        m = (mlp_inputs(x) - self.mean) / self.std
        h = np.maximum(np.einsum("pi,mih->mph", m, self.w1) + self.b1[:, None], 0.0)
        z = np.einsum("mph,mhk->mpk", h, self.w2) + self.b2[:, None]
        z -= z.max(axis=2, keepdims=True)
        e = np.exp(z)
        return _kind_rules(x, (e / e.sum(axis=2, keepdims=True)).mean(axis=0))


CROSS_SURE = 0.9  # in reconciliation, a change the words read this surely is theirs to read
# Pairs the cross-encoder reads per run in each step (``consolidator.cross_pairs``'s
# default): the 10,000-entry run of docs/benchmarks.md took 29.7 s with 1,500,
# 35.4 s with 3,000 and 21.8 s with none on two VNNI cores, and int8 kernels
# without VNNI (plain AVX2) are slower; the scenarios and LoCoMo read the same
# or better with 1,500 (a run over a day's notes stays within it).
CROSS_BUDGET = 1500


class LocalJudge:
    """An MLP over ``features`` (weights from ``judge_data/judge.npz``) and, for
    the pairs the cross-encoder reads (``cross``: up to ``budget`` a run in
    clustering and as many in reconciliation, the pairs the first MLP is
    least sure of first; not those that say a word of addition), a second MLP
    over the same features and the cross-encoder's probabilities
    (``judge_data/judge_cross.npz``); in clustering, the mean of that MLP's
    reading and the cross-encoder's own, under the same rules, where it gives
    ``same`` more weight."""

    name = "local"

    def __init__(
        self,
        weights: dict[str, np.ndarray],
        cross: dict[str, np.ndarray] | None = None,
        reader: Reader | None = None,
        budget: int = CROSS_BUDGET,
    ) -> None:
        projection = weights.get("projection")
        self.projection = None if projection is None else projection.astype(np.float32)
        self.words = _MLP(weights)
        self.cross = _MLP(cross) if cross is not None and reader is not None else None
        self.reader = reader
        # Clustering (``judge_rows``) and reconciliation (``judge``) each have
        # their own: the first may ask about hundreds of thousands of pairs in
        # a run over a backlog; the second decides what supersedes what.
        self.left = {"rows": budget, "pairs": budget}

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """The first MLP's probabilities (the words' reading) of rows of ``features``."""
        return self.words.probabilities(x)

    def _probabilities(
        self, statements: Statements, a: np.ndarray, b: np.ndarray, which: str
    ) -> np.ndarray:
        """P x 4 probabilities of pairs of rows, earlier a[i]: the words' MLP's, and
        for the pairs the cross-encoder reads, its reading (``which``: "rows" in
        clustering, "pairs" in reconciliation)."""
        v = statements.vectors
        assert v is not None
        sims = np.einsum("ij,ij->i", v[a], v[b])
        x = lexical_rows(statements, statements, a, b, sims)
        if self.projection is not None:
            x = np.concatenate([x, semantic(v[a], v[b], self.projection)], axis=1)
        p = self.words.probabilities(x)
        if self.cross is None or self.reader is None or self.left[which] <= 0:
            return p
        # Not the pairs where a statement says a word of addition ("too",
        # "also", "as well"): the cross-encoder reads two statements of one
        # addition ("Omar has taken up the drums too" / "Omar plays drums as
        # well as guitar") as two facts, which the words' rules do not. In
        # reconciliation, not those the words read surely as a change either.
        # Pairs whose statements each claim a value the other lacks it reads
        # too: on the pairs never trained on it tells a new value from another
        # fact or a restatement better than the words (not always: "Hugo sits
        # on the third floor" / "Hugo's desk is on floor five" it reads as two
        # facts), and the rules keep two numbers from reading as the same.
        additive = statements.flags[:, FLAG_ADDITIVE] > 0
        sure = np.isin(p.argmax(axis=1), (_UPDATE, _RETRACT)) & (p.max(axis=1) >= CROSS_SURE)
        clustering = which == "rows"
        asked = np.flatnonzero(~(additive[a] | additive[b]) & (clustering | ~sure))
        n = min(len(asked), self.left[which])
        if n <= 0:
            return p
        self.left[which] -= n
        rows = asked[np.argsort(p[asked].max(axis=1), kind="stable")[:n]]
        t = statements.texts
        c = self.reader.read(
            [(t[i], t[j]) for i, j in zip(a[rows].tolist(), b[rows].tolist(), strict=True)]
        )
        xc = np.concatenate([x[rows], c], axis=1)
        p[rows] = self.cross.probabilities(xc)
        if clustering:
            # Clustering asks whether two statements say the same thing. The
            # second MLP learned from out-of-fold readings, by cross-encoders
            # each trained on three quarters of the pairs and weaker than the
            # shipped one, so it trusts the cross-encoder less than it has
            # earned and misses restatements it reads: where the mean of its
            # reading and the cross-encoder's own (under the same rules) gives
            # ``same`` more weight, the mean stands (docs/benchmarks.md, session
            # 30). Not the other way: the cross-encoder alone reads some plain
            # restatements of a preference as two facts ("Chad prefers absolute
            # paths in config files" / "Chad likes absolute paths in configs").
            # Reconciliation keeps the second MLP alone: which of a change and
            # another fact a statement is, its words (a one-at-a-time
            # attribute, values each lacks) read better.
            mean = (p[rows] + _kind_rules(xc, c)) / 2
            p[rows] = np.where((mean[:, _SAME] > p[rows, _SAME])[:, None], mean, p[rows])
        return p

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]:
        if not pairs:
            return []
        n = len(pairs)
        vectors = np.stack([q.earlier_vec for q in pairs] + [q.later_vec for q in pairs])
        statements = Statements(
            [q.earlier for q in pairs] + [q.later for q in pairs], vectors.astype(np.float32)
        )
        p = self._probabilities(statements, np.arange(n), np.arange(n) + n, "pairs")
        best = p.argmax(axis=1)
        return [
            Judgement(LABELS[int(k)], float(p[r, k]), self.name, tuple(p[r].tolist()))
            for r, k in enumerate(best)
        ]

    def judge_rows(self, statements: Statements, a: np.ndarray, b: np.ndarray) -> Readings:
        """Labels (indices into LABELS), confidences and probabilities of ``same`` of
        pairs of rows, earlier a[i]."""
        p = self._probabilities(statements, a, b, "rows")
        best = p.argmax(axis=1)
        return best, p[np.arange(len(best)), best], p[:, LABELS.index("same")]


class WordJudge:
    """The word-list rule of ``reconcile.decide`` behind the judge protocol."""

    name = "words"
    _LABEL: dict[str, Label] = {
        "NONE": "same",
        "UPDATE": "update",
        "DELETE": "retract",
        "ADD": "unrelated",
    }

    def __init__(self, match_threshold: float = 0.75, related_threshold: float = 0.55) -> None:
        self.match = match_threshold
        self.related = related_threshold

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]:
        out = []
        for p in pairs:
            d = decide(
                p.later,
                [Known("x", p.earlier, p.similarity)],
                match_threshold=self.match,
                related_threshold=self.related,
            )
            out.append(Judgement(self._LABEL[d.kind], 1.0, self.name))
        return out


# Per pair of rows: the label (an index into LABELS), its confidence, and the
# probability the judge gives ``same``.
Readings = tuple[np.ndarray, np.ndarray, np.ndarray]


def same_probability(j: Judgement) -> float:
    """The judge's probability of ``same``: its own where it gives them all; where it
    gives only its label, its confidence if that is ``same``, and none otherwise."""
    if j.probabilities:
        return j.probabilities[LABELS.index("same")]
    return j.confidence if j.label == "same" else 0.0


def judge_rows(judge: Judge, statements: Statements, a: np.ndarray, b: np.ndarray) -> Readings:
    """Labels (indices into LABELS), confidences and probabilities of ``same`` of
    pairs of rows, by any judge.

    A judge with a ``judge_rows`` of its own (the local MLP, the llm judge)
    answers from the parsed statements; any other through ``Pair`` objects.
    """
    own = getattr(judge, "judge_rows", None)
    if own is not None:
        return own(statements, a, b)  # type: ignore[no-any-return]
    got = judge.judge(statements.pairs(a, b))
    labels = np.array([LABELS.index(j.label) for j in got], dtype=np.int64)
    conf = np.array([j.confidence for j in got], dtype=np.float32)
    return labels, conf, np.array([same_probability(j) for j in got], dtype=np.float32)


WEIGHTS = "judge_data/judge.npz"
CROSS_WEIGHTS = "judge_data/judge_cross.npz"


@lru_cache(maxsize=2)
def _weights(name: str = WEIGHTS) -> dict[str, np.ndarray] | None:
    try:
        path = resources.files("halls.consolidate").joinpath(name)
        with path.open("rb") as fh, np.load(fh) as data:
            return {k: data[k] for k in data.files}
    except (FileNotFoundError, OSError):
        return None


def default_judge(
    match_threshold: float = 0.75,
    related_threshold: float = 0.55,
    cross_pairs: int = 0,
) -> Judge:
    """The shipped local judge, with its cross-encoder for up to ``cross_pairs``
    pairs a run (0 here, the words alone; a run passes ``consolidator.cross_pairs``,
    ``CROSS_BUDGET`` by default); the word lists only if its weights are missing."""
    weights = _weights()
    k = weights["projection"].shape[1] if weights and "projection" in weights else 0
    if weights is None or weights["w1"].shape[-2] != N_MLP_LEXICAL + 2 * k:
        return WordJudge(match_threshold, related_threshold)
    cross = _weights(CROSS_WEIGHTS) if cross_pairs > 0 else None
    reader = default_reader() if cross is not None else None
    if cross is not None and cross["w1"].shape[-2] != N_MLP_LEXICAL + 2 * k + N_CROSS:
        cross = None
    return LocalJudge(weights, cross, reader, cross_pairs)


_KIND = {"same": "NONE", "update": "UPDATE", "retract": "DELETE"}
EXPLICIT = 0.5  # an update or retraction judged this sure needs no repetition
# An implicit change (no word of change) retires a fact on the judge's word
# alone, so that word must be more likely than not: over a cluster's
# readings, the change's summed confidence is at least half the readings.
MAJORITY = 0.5


def decide_judged(
    known: Sequence[Known],
    judged: Sequence[tuple[Known, Judgement]],
    later: Sequence[str] | None = None,
) -> Decision:
    """Reconcile a candidate from the judge's answers about it and known facts.

    ``known`` are the nearest facts, ``judged`` those the judge was asked
    about (the ones above the related threshold) with its answers, ``later``
    the candidate's statements (its phrasings). The most
    confident answer other than ``unrelated`` names the fact the candidate
    confirms, changes or retracts; none: ``ADD``.
    """
    # Explicit: the candidate says it is a change ("now", "switched", "no
    # longer", "quit"...) in any of its phrasings (they are one claim); an
    # implicit one waits for evidence like any statement, so a one-off
    # remark never replaces a fact on its own.
    marked = later is None or any(
        bool(f[0] or f[1] or f[3]) for f in (parse(t).flags for t in later)
    )
    best: tuple[float, Known, Judgement] | None = None
    for k, j in judged:
        if j.label == "unrelated":
            continue
        if j.label != "same" and not marked and j.confidence < MAJORITY:
            continue  # a change most readings do not see: another fact
        # A word of change ("now") makes the judge sure of a change of more than
        # one fact about the same person: the nearer fact is the one meant.
        score = j.confidence * k.similarity
        if best is None or score > best[0]:
            best = (score, k, j)
    if best is None:
        if not known:
            return Decision("ADD", None, "no long-term fact is about this yet")
        near = max(known, key=lambda k: k.similarity)
        return Decision(
            "ADD",
            None,
            f"nearest fact {near.id} is about something else (cosine {near.similarity:.2f})",
        )
    _, k, j = best
    kind = _KIND[j.label]
    how = {"NONE": "restates", "UPDATE": "changes", "DELETE": "retracts"}[kind]
    why = f"{how} {k.id} (judge {j.by}: {j.label} {j.confidence:.2f}, cosine {k.similarity:.2f})"
    explicit = kind != "NONE" and j.confidence >= EXPLICIT and marked
    return Decision(kind, k.id, why, explicit=explicit)


# In judge_data/: the pairs the shipped weights were trained on (a quarter of
# each file held out): the team's, and those written in the voices memory
# stores are written in (agent notes, notes without a subject, chat).
TRAINING = ("pairs.txt", "pairs_voices.txt")
# The cross-encoder and the MLP that reads it learn from more: pairs written
# for them (session 26) in eight themes and voices, chat among them (the words'
# MLP, session 21's, is not retrained on them: that would change the default).
CROSS_TRAINING = (*TRAINING, "pairs_cross.txt")
# Pairs written later, by helpers who saw neither the judge nor its training
# pairs: never trained on, they measure how the judge reads sentences nobody
# tuned it to.
UNSEEN = "pairs_unseen.txt"


def load_pairs(name: str = TRAINING[0]) -> list[tuple[str, str, str]]:
    """Labelled pairs of a file in ``judge_data``: (label, earlier, later)."""
    text = resources.files("halls.consolidate").joinpath(f"judge_data/{name}").read_text("utf-8")
    out: list[tuple[str, str, str]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 3 or parts[0] not in LABELS:
            raise ValueError(f"{name}:{n}: not 'LABEL | earlier | later'")
        out.append((parts[0], parts[1], parts[2]))
    return out


def held_out(pairs: list[tuple[str, str, str]], seed: int = 11) -> set[str]:
    """The earlier statements whose pairs are held out (a quarter, by fact)."""
    import random

    groups = sorted({a for _, a, _ in pairs})
    random.Random(seed).shuffle(groups)
    return set(groups[: len(groups) // 4])
