"""The word features of statement pairs (pure), computed in numpy over a batch.

What the judge's rules (``rules``) and pair facts read of two statements:
content words shared, added or dropped (a word and its WordNet synonym
counting as one where they are all that differs: ``synonyms``), names and
numbers that differ, where the first difference sits, words of change,
negation, addition and retraction, many-valued and one-at-a-time verbs.
``Statements`` parses each statement once (``reading``); ``lexical_rows``
gives one row of ``N_LEXICAL`` columns a pair. Nothing outside the judge
package reads them: the planner reads judgements.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from halls.consolidate.judge import values
from halls.consolidate.judge.protocol import Pair
from halls.consolidate.judge.reading import MAX_WORDS, N_FLAGS, Parsed, denies, parse


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


Amounts = tuple[tuple[str, float, float, str, int, int], ...]  # ``Parsed.amounts``
# The columns of ``lexical_rows``, by name and in its order: what the MLPs
# and the rules read of a pair (indices are derived, never written).
COLUMNS: tuple[str, ...] = tuple(
    """
    cosine cosine_squared jaccard novel_share dropped_share novel dropped novel_names
    dropped_names numbers_differ change_b change_both neg_b neg_a neg_both additive_b
    additive_a retract_b episodic_b episodic_a first_same length_difference
    novel_and_dropped names_both_ways numbers_both_ways first_missing_a first_missing_b
    addition additive_claims_nothing many single claimed contrasts same_words
    same_values swapped_numbers other_person swapped_names denies
    denied changed_alike renumbered counterpart
    renumbered_only added_alike also_alike
    """.split()  # noqa: SIM905 - names read better as words
)
N_LEXICAL = len(COLUMNS)
# Columns only the rules read: the MLPs do not see them (``mlp.mlp_inputs``).
RULE_ONLY_COLUMNS: tuple[str, ...] = tuple(
    """
    same_values swapped_numbers other_person swapped_names
    changed_alike renumbered counterpart
    renumbered_only added_alike also_alike
    """.split()  # noqa: SIM905 - names read better as words
)
RULE_ONLY = tuple(COLUMNS.index(n) for n in RULE_ONLY_COLUMNS)
N_MLP_LEXICAL = N_LEXICAL - len(RULE_ONLY)
# Columns the rules and the judge's pair facts read, by name.
JACCARD = COLUMNS.index("jaccard")
CHANGE_B = COLUMNS.index("change_b")
NEG_B = COLUMNS.index("neg_b")
RETRACT_B = COLUMNS.index("retract_b")
ADDITION = COLUMNS.index("addition")
MANY = COLUMNS.index("many")
CLAIMED = COLUMNS.index("claimed")
SINGLE = COLUMNS.index("single")
NOVEL = COLUMNS.index("novel")
DROPPED = COLUMNS.index("dropped")
ADDITIVE_B = COLUMNS.index("additive_b")
DENIES = COLUMNS.index("denies")
NOVEL_NAMES = COLUMNS.index("novel_names")
NUMBERS_DIFFER = COLUMNS.index("numbers_differ")
CHANGE_BOTH = COLUMNS.index("change_both")
FIRST_MISSING_A = COLUMNS.index("first_missing_a")
SAME_VALUES = COLUMNS.index("same_values")
SWAPPED_NUMBERS = COLUMNS.index("swapped_numbers")
OTHER_PERSON = COLUMNS.index("other_person")
SWAPPED_NAMES = COLUMNS.index("swapped_names")
DENIED = COLUMNS.index("denied")
CHANGED_ALIKE = COLUMNS.index("changed_alike")
RENUMBERED = COLUMNS.index("renumbered")
COUNTERPART = COLUMNS.index("counterpart")
RENUMBERED_ONLY = COLUMNS.index("renumbered_only")
ADDED_ALIKE = COLUMNS.index("added_alike")
ALSO_ALIKE = COLUMNS.index("also_alike")
NEG_A = COLUMNS.index("neg_a")


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
    return ia[:, :, None] == np.where(ib >= 0, ib, -2)[:, None, :]


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
    return _swapped((numbers, numbers), (amounts, amounts), a, b) | named


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
