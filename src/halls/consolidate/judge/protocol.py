"""What a pair judge answers, and the protocol every judge keeps.

A pair is (earlier, later); the answer is a label with its probabilities:

- ``same``: the later statement restates the earlier one;
- ``update``: it gives a new value for the same thing;
- ``retract``: it says the earlier one stopped being true, nothing new;
- ``unrelated``: a different fact (another subject, an addition beside the
  first, or merely the same topic).

Beside the label, a judgement carries the few facts about the pair that the
planner needs and may not read from the words itself (the judge reads them):
whether the two name values the other lacks, whether they name the same
values, and whether the later one marks a change, an addition or an ending.
Callers read judgements, never words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

Label = Literal["same", "update", "retract", "unrelated"]
LABELS: tuple[Label, ...] = ("same", "update", "retract", "unrelated")
SAME, UPDATE, RETRACT, UNRELATED = range(4)


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
    # The probability of each of LABELS, when the judge gives them all.
    probabilities: tuple[float, ...] = ()
    # Pair facts, read by the judge:
    values_differ: bool = False  # each names a value (number, name) the other lacks
    same_values: bool = False  # both name the same values past their subject, unmarked
    marks_change: bool = False  # the later says a word of change, negation or ending
    marks_addition: bool = False  # the later says a word of addition and ends nothing
    ends: bool = False  # the later negates or ends something ("no longer", "sold")
    # What the later says that the earlier does not, as opaque word ids (read by
    # ``judge``, not by clustering's ``read``): all its new words, and those that
    # are values (names, numbers, addresses). Compared between two judgements
    # of one earlier statement by ``same_change``.
    new_words: frozenset[int] = frozenset()
    new_values: frozenset[int] = frozenset()

    @property
    def p_same(self) -> float:
        """The probability of ``same``: the judge's own where it gives them all;
        otherwise its confidence if that is its label, and none if not."""
        if self.probabilities:
            return self.probabilities[SAME]
        return self.confidence if self.label == "same" else 0.0


@dataclass
class Readings:
    """Judgements of many pairs at once, as arrays (one row a pair)."""

    probabilities: np.ndarray  # P x 4, float32
    by: str
    values_differ: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    same_values: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    marks_change: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    marks_addition: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    ends: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))

    @property
    def labels(self) -> np.ndarray:
        return self.probabilities.argmax(axis=1)

    @property
    def confidence(self) -> np.ndarray:
        return self.probabilities.max(axis=1)

    @property
    def p_same(self) -> np.ndarray:
        return self.probabilities[:, SAME]

    def judgement(self, i: int) -> Judgement:
        p = self.probabilities[i]
        k = int(p.argmax())
        return Judgement(
            LABELS[k],
            float(p[k]),
            self.by,
            tuple(p.tolist()),
            bool(self.values_differ[i]),
            bool(self.same_values[i]),
            bool(self.marks_change[i]),
            bool(self.marks_addition[i]),
            bool(self.ends[i]),
        )

    def judgements(self) -> list[Judgement]:
        return [self.judgement(i) for i in range(len(self.probabilities))]

    @classmethod
    def of(cls, got: Sequence[Judgement], by: str) -> Readings:
        """Readings from judgements (of a judge that gives labels only, or mixed)."""
        p = np.zeros((len(got), len(LABELS)), dtype=np.float32)
        for i, j in enumerate(got):
            if j.probabilities:
                p[i] = j.probabilities
            else:
                p[i, LABELS.index(j.label)] = j.confidence
        return cls(
            p,
            by,
            *(
                np.array([getattr(j, f) for j in got], dtype=bool)
                for f in ("values_differ", "same_values", "marks_change", "marks_addition", "ends")
            ),
        )


def same_change(first: Judgement, second: Judgement) -> bool:
    """Whether two statements that each change one fact give it the same new value,
    from the judgements of (fact, first) and (fact, second).

    What each says beyond the fact is its new value: its names and numbers
    when it has any ("PostgreSQL 16", "Postgres 16"), else its words ("we
    release monthly", "releases ship monthly"). The two agree when those
    overlap and neither names a value the other lacks while the other names
    one it lacks ("Pixel 8" / "Pixel 9" are two changes)."""
    a, b = first.new_values, second.new_values
    if a or b:
        return bool(a & b) and not (a - b and b - a)
    return bool(first.new_words & second.new_words)


def restates_change(change: Judgement, text: Judgement) -> bool:
    """Whether ``text`` says again the change ``change`` made to a fact, from the
    judgements of (fact, change) and (fact, text): the same new value, and no
    value beside those of the two ("Ana left Zalando and joined Adyen" after
    "Ana works at Zalando" -> "Ana switched jobs, she's at Adyen now"; not
    "Ana left Adyen for Mollie", a change more)."""
    return same_change(change, text) and text.new_values <= change.new_words


class Judge(Protocol):
    """Reads pairs of statements. ``judge`` is the whole protocol; a judge may also
    offer ``read(texts, vectors, a, b) -> Readings`` for many pairs of rows at once
    (clustering asks about thousands), which ``read`` below uses when it is there."""

    name: str

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]: ...


def read(
    judge: Judge, texts: Sequence[str], vectors: np.ndarray, a: np.ndarray, b: np.ndarray
) -> Readings:
    """Readings of pairs of rows (earlier a[i], later b[i]) by any judge."""
    own = getattr(judge, "read", None)
    if own is not None:
        return own(texts, vectors, a, b)
    pairs = [
        Pair(texts[x], texts[y], vectors[x], vectors[y])
        for x, y in zip(a.tolist(), b.tolist(), strict=True)
    ]
    return Readings.of(judge.judge(pairs), judge.name)
