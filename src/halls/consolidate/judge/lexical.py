"""The word features of statement pairs (pure), computed in numpy over a batch.

What the judge's rules (``rules``) and pair facts read of two statements:
content words shared, added or dropped (a word and its WordNet synonym
counting as one where they are all that differs: ``synonyms.shared``; so do
a shortening and the words it spells, ``shortenings.shared``, and an amount
in another unit, ``quantities.amounts_shared``), names and numbers that
differ, where the first difference sits, words of change, negation,
addition and retraction, many-valued and one-at-a-time verbs.
``Statements`` parses each statement once (``reading``); ``lexical_rows``
gives one row a pair, its columns named in ``columns``. Nothing outside
the judge package reads them: the planner reads judgements.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from halls.consolidate import progress
from halls.consolidate.judge import quantities, shortenings, synonyms
from halls.consolidate.judge.columns import CHANGE_B, N_LEXICAL, NEG_B, RETRACT_B, SAME_VALUES
from halls.consolidate.judge.flags import N_FLAGS
from halls.consolidate.judge.negation import denies
from halls.consolidate.judge.protocol import Pair
from halls.consolidate.judge.reading import MAX_WORDS, Parsed, parse


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


def _first_missing(valid: np.ndarray, shared: np.ndarray) -> np.ndarray:
    """Where (0 = first word .. 1 = last) the first content word the other lacks sits."""
    missing = valid & ~shared
    count = valid.sum(axis=1)
    at = missing.argmax(axis=1) / np.maximum(count - 1, 1)
    return np.where(missing.any(axis=1), at, 1.0)


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
    return some & ~(kept_a & ~a_in_b).any(axis=1) & ~(kept_b & ~b_in_a).any(axis=1)


class Statements:
    """Statements parsed and padded once, so that many pairs of them compare by row."""

    def __init__(self, texts: Sequence[str], vectors: np.ndarray | None = None) -> None:
        self.texts = list(texts)
        self.vectors = vectors
        parsed = [parse(t) for t in progress.each("parsing", texts)]
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
    return ia[:, :, None] == np.where(ib >= 0, ib, -2)[:, None, :]


def _shared_words(
    first: Statements, second: Statements, a: np.ndarray, b: np.ndarray, eq: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair (first[a[i]], second[b[i]]), which words of each statement the other
    has: the same word (``eq``, P x W x W: ``_equal_words``), a synonym
    (``synonyms.shared``), a word in capitals for the run it shortens
    (``shortenings.shared``) or an amount in another unit
    (``quantities.amounts_shared``)."""
    valid = (first.words[0][a] >= 0, second.words[0][b] >= 0)
    synonymous = (first.words[8][a], second.words[8][b])
    equal = (np.asarray(eq.any(axis=2)), np.asarray(eq.any(axis=1)))
    shared = synonyms.shared((first.senses, second.senses), (a, b), equal, synonymous, valid)
    shared = shortenings.shared(
        (first.shortenings, second.shortenings),
        (first.parts, second.parts),
        (first.openings, second.openings),
        (a, b),
        shared,
        valid,
    )
    return quantities.amounts_shared((first.amounts, second.amounts), (a, b), shared, valid)


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
        quantities.swapped((first.numbers, second.numbers), (first.amounts, second.amounts), a, b),
        # They differ in the people they are about, and in nothing else.
        _other_person((dropped_w, novel_w), (pa, pb)),
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
        # Each gives a number of the same thing ("Year 3" / "Year 4"), and the
        # two share no word but capitalised ones (names, a subject).
        _shared(first.heads, second.heads, a, b, ~(a_in_b & va & ~capa).any(axis=1)),
        # Each names a relation of one pair the other lacks ("son" / "daughter").
        _counterparts(first.kin, second.kin, a, b),
        # Only numbers differ: each gives a number the other lacks, and every
        # other word is the same ("takes 500 mg" / "takes 1000 mg").
        (novel > 0) & (dropped > 0) & (novel == novel_nums) & (dropped == dropped_nums),
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
    ``CHANGED_ALIKE`` reads it, lost one never-read scenario and a LoCoMo fact.)"""
    named, late = values[0].copy(), values[1]
    named[:, 0] &= late[:, 0]
    return (named & shared).any(axis=1)


def _other_person(
    differ: tuple[np.ndarray, np.ndarray], person: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """The only words one statement has and the other lacks are relations to someone
    ("Eli is allergic to cats" / "Eli's son is allergic to cats", "Dan's boss is
    Fiona" / "Dan's mentor is Fiona"): the same words about two people."""
    some = (differ[0] & person[0]).any(axis=1) | (differ[1] & person[1]).any(axis=1)
    rest = (differ[0] & ~person[0]).any(axis=1) | (differ[1] & ~person[1]).any(axis=1)
    return some & ~rest


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
    return (differ[0] & capital[0]).any(axis=1) & (differ[1] & capital[1]).any(axis=1)


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
    """Per pair of rows: each statement claims a number the other lacks
    (``quantities.swapped``), or has a value (a name, a number, an address) the
    other lacks (``_swapped_names``).

    Which words the other has is read as the judge's features read it
    (``_shared_words``): clustering holds apart only what the judge could not
    read as one value ("WSJ" / "the Wall Street Journal" share their name)."""
    capa, capb = statements.words[5][a], statements.words[5][b]  # values: names, numbers, addresses
    numbers, amounts = statements.numbers, statements.amounts
    ia, ib = statements.words[0][a], statements.words[0][b]
    shared = _shared_words(statements, statements, a, b, _equal_words(ia, ib))
    lack_a, lack_b = (ia >= 0) & ~shared[0], (ib >= 0) & ~shared[1]
    named = _swapped_names((lack_a, lack_b), (capa, capb))
    return quantities.swapped((numbers, numbers), (amounts, amounts), a, b) | named


def same_values(statements: Statements, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pair of rows: the two name the same values, one past the first word, and
    say no word of change, negation or retraction (``SAME_VALUES``)."""
    out = np.zeros(len(a), dtype=bool)
    if len(a):
        x = lexical_rows(statements, statements, a, b, np.zeros(len(a), dtype=np.float32))
        marked = (x[:, CHANGE_B] > 0) | (x[:, NEG_B] > 0) | (x[:, RETRACT_B] > 0)
        out = (x[:, SAME_VALUES] > 0) & ~marked
    return out


def novelty(earlier: str, later: str) -> tuple[frozenset[int], frozenset[int]]:
    """The word roots of ``later`` that ``earlier`` lacks, and those of them that are
    values (names, numbers, addresses)."""
    known = set(parse(earlier).roots.tolist())
    p = parse(later)
    new = [n for n, r in enumerate(p.roots.tolist()) if r not in known]
    return (
        frozenset(int(p.roots[n]) for n in new),
        frozenset(int(p.roots[n]) for n in new if p.value[n]),
    )


def features(pairs: Sequence[Pair]) -> np.ndarray:
    """One row of word features per pair (the cosine is among them)."""
    if not pairs:
        return np.zeros((0, N_LEXICAL), dtype=np.float32)
    u = np.stack([p.earlier_vec for p in pairs]).astype(np.float32)
    v = np.stack([p.later_vec for p in pairs]).astype(np.float32)
    sims = np.einsum("ij,ij->i", u, v)
    return lexical([p.earlier for p in pairs], [p.later for p in pairs], sims)
