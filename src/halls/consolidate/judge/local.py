"""The shipped judge: word MLPs, the cross-encoder for the pairs it has a budget for,
and the rules of ``rules`` over both.

``LocalJudge`` reads a pair's word features (``lexical``) with a small MLP
(``mlp``, ``judge.npz``); for up to ``budget`` pairs a run in clustering, and
as many in reconciliation, the pairs that MLP reads least surely first (not
those where a statement says a word of addition), a second MLP (``judge_cross.npz``)
reads the same features and the cross-encoder's probabilities (``cross``).
In clustering, which asks only whether two statements say the same thing,
the mean of that reading and the cross-encoder's own (under the same rules)
stands where it gives ``same`` more weight: the second MLP learned from
out-of-fold readings weaker than the shipped cross-encoder's, and misses
restatements it reads. The active rules (``rules.ACTIVE``) apply after each
model. Every reading carries the pair facts the planner needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from halls.consolidate import progress
from halls.consolidate.judge import mlp, rules
from halls.consolidate.judge.columns import CHANGE_B, NEG_B, RETRACT_B, SAME_VALUES
from halls.consolidate.judge.cross import Reader, default_reader
from halls.consolidate.judge.flags import FLAG_ADDITIVE, FLAG_CHANGE, FLAG_NEGATED, FLAG_RETRACT
from halls.consolidate.judge.lexical import Statements, lexical_rows, novelty, swapped_values
from halls.consolidate.judge.protocol import (
    RETRACT,
    SAME,
    UPDATE,
    Judgement,
    Pair,
    Readings,
)

# Pairs the cross-encoder reads per run in each step (``consolidator.cross_pairs``'s
# default): the 10,000-entry run of docs/benchmarks.md took 29.7 s with 1,500,
# 35.4 s with 3,000 and 21.8 s with none on two VNNI cores, and int8 kernels
# without VNNI (plain AVX2) are slower; the scenarios and LoCoMo read the same
# or better with 1,500 (a run over a day's notes stays within it).
CROSS_BUDGET = 1500
# A change the cross-encoder reads this surely, where the later statement says
# something ended, is its to read (more likely than not).
ENDED = 0.5
BATCH = 4096  # pairs whose features are computed at once (their memory)


class LocalJudge:
    name = "local"

    def __init__(
        self,
        words: mlp.MLP,
        cross: mlp.MLP | None = None,
        reader: Reader | None = None,
        budget: int = CROSS_BUDGET,
        active: frozenset[str] | None = None,
    ) -> None:
        self.words = words
        self.cross = cross if reader is not None else None
        self.reader = reader
        self.active = rules.ACTIVE if active is None else active
        # Clustering and reconciliation each have their own budget a run: the
        # first may ask about hundreds of thousands of pairs in a run over a
        # backlog; the second decides what supersedes what.
        self.left = {"cluster": budget, "reconcile": budget}

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """The words' reading of rows of word features: the first MLP, then the rules."""
        return rules.apply(x, self.words.probabilities(x), self.active)

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]:
        if not pairs:
            return []
        n = len(pairs)
        texts = [q.earlier for q in pairs] + [q.later for q in pairs]
        vectors = np.stack([q.earlier_vec for q in pairs] + [q.later_vec for q in pairs])
        a, b = np.arange(n), np.arange(n) + n
        got = self._read(Statements(texts), vectors.astype(np.float32), a, b, "reconcile")
        out = []
        for q, j in zip(pairs, got.judgements(), strict=True):
            words, values = novelty(q.earlier, q.later)
            out.append(replace(j, new_words=words, new_values=values))
        return out

    def read(
        self, texts: Sequence[str], vectors: np.ndarray, a: np.ndarray, b: np.ndarray
    ) -> Readings:
        """Readings of pairs of rows, earlier a[i] (clustering): a pair read apart by
        one word put in another's place keeps their restatements apart too
        (``rules.substitution``, over all the pairs at once)."""
        statements = Statements(texts)
        parts = [
            self._read(statements, vectors, a[s : s + BATCH], b[s : s + BATCH], "cluster")
            for s in progress.counted("judging", range(0, len(a), BATCH), len(a))
        ] or [self._read(statements, vectors, a, b, "cluster")]
        out = Readings(
            np.concatenate([r.probabilities for r in parts]),
            self.name,
            *(
                np.concatenate([getattr(r, f) for r in parts])
                for f in ("values_differ", "same_values", "marks_change", "marks_addition", "ends")
            ),
        )
        if "substitution" in rules.active(self.active):
            out.probabilities = rules.substitution(
                statements.words[0], a, b, out.probabilities, out.values_differ
            )
        return out

    def _read(
        self, statements: Statements, vectors: np.ndarray, a: np.ndarray, b: np.ndarray, step: str
    ) -> Readings:
        sims = np.einsum("ij,ij->i", vectors[a], vectors[b])
        x = lexical_rows(statements, statements, a, b, sims)
        p = self.probabilities(x)
        flags = statements.flags
        if self.cross is not None and self.reader is not None and self.left[step] > 0:
            p = self._cross(statements, a, b, x, p, step)
        ends = (flags[b, FLAG_NEGATED] > 0) | (flags[b, FLAG_RETRACT] > 0)
        marked = (x[:, CHANGE_B] > 0) | (x[:, NEG_B] > 0) | (x[:, RETRACT_B] > 0)
        return Readings(
            np.clip(p, 0.0, 1.0).astype(np.float32),
            self.name,
            values_differ=swapped_values(statements, a, b),
            same_values=(x[:, SAME_VALUES] > 0) & ~marked,
            marks_change=(flags[b, FLAG_CHANGE] > 0) | ends,
            marks_addition=(flags[b, FLAG_ADDITIVE] > 0) & ~ends,
            ends=ends,
        )

    def _cross(
        self,
        statements: Statements,
        a: np.ndarray,
        b: np.ndarray,
        x: np.ndarray,
        p: np.ndarray,
        step: str,
    ) -> np.ndarray:
        """``p`` with the cross-encoder's reading of the pairs it has a budget for."""
        assert self.cross is not None and self.reader is not None
        # Not the pairs where a statement says a word of addition ("too",
        # "also", "as well"): the cross-encoder reads two statements of one
        # addition ("Omar has taken up the drums too" / "Omar plays drums as
        # well as guitar") as two facts, which the words' rules do not. A
        # change the words read surely is asked too: they read "started" or
        # a new name as a change of whatever came before ("Hana plays the
        # violin" / "Hana started learning piano", update 0.99, where the
        # cross-encoder reads another fact; docs/benchmarks.md, session 43).
        flags = statements.flags
        additive = flags[:, FLAG_ADDITIVE] > 0
        clustering = step == "cluster"
        # The later statement says something ended ("drop the weekly status
        # emails", "no longer"): asked even beside a word of addition, unless
        # the words already read the retraction.
        ends = (flags[b, FLAG_NEGATED] > 0) | (flags[b, FLAG_RETRACT] > 0)
        unread = ends & (p.argmax(axis=1) != RETRACT)
        asked = np.flatnonzero(~(additive[a] | additive[b]) | unread)
        n = min(len(asked), self.left[step])
        if n <= 0:
            return p
        self.left[step] -= n
        rows = asked[np.argsort(p[asked].max(axis=1), kind="stable")[:n]]
        t = statements.texts
        c = self.reader.read(
            [(t[i], t[j]) for i, j in zip(a[rows].tolist(), b[rows].tolist(), strict=True)]
        )
        xc = np.concatenate([x[rows], c], axis=1)
        p = p.copy()
        p[rows] = rules.apply(xc, self.cross.probabilities(xc), self.active)
        # Where it says something ended and the cross-encoder reads a change,
        # the cross-encoder's own reading stands: the words and their MLP
        # read "Pinecrest also wants a weekly status email" / "Pinecrest said
        # drop the weekly status emails" as one statement (docs/benchmarks.md).
        change = np.isin(c.argmax(axis=1), (UPDATE, RETRACT)) & (c.max(axis=1) >= ENDED)
        taken = change & ends[rows]
        p[rows[taken]] = c[taken]
        if clustering:
            # Where the mean of the second MLP's reading and the cross-encoder's
            # own (under the same rules) gives ``same`` more weight, the mean
            # stands (docs/benchmarks.md, session 30). Not the other way: the
            # cross-encoder alone reads some plain restatements of a preference
            # as two facts ("Chad prefers absolute paths in config files" /
            # "Chad likes absolute paths in configs").
            mean = (p[rows] + rules.apply(xc, c, self.active)) / 2
            p[rows] = np.where((mean[:, SAME] > p[rows, SAME])[:, None], mean, p[rows])
        return p


def default_judge(cross_pairs: int = CROSS_BUDGET) -> LocalJudge:
    """The shipped judge, with its cross-encoder for up to ``cross_pairs`` pairs a step
    of a run (0: the words alone)."""
    words = mlp.load(mlp.WEIGHTS)
    if words is None or words.inputs != mlp.N_WORDS:
        raise RuntimeError("the judge's weights are missing or do not fit its features")
    cross = mlp.load(mlp.CROSS_WEIGHTS) if cross_pairs > 0 else None
    if cross is not None and cross.inputs != mlp.N_WORDS + 4:
        cross = None
    reader = default_reader() if cross is not None else None
    return LocalJudge(words, cross, reader, cross_pairs)
