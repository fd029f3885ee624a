"""The judge's cross-encoder: the shipped graph, what it reads that words miss, its budget."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from halls import Memory, Settings
from halls.config import ConsolidatorSettings
from halls.consolidate.judge import CROSS_BUDGET, LABELS, LocalJudge, Pair, default_judge, mlp
from halls.consolidate.judge.cross import MODELS, CrossReader, default_reader
from halls.consolidate.judge.lexical import Statements, lexical_rows
from judge_pairs import CROSS_TRAINING, UNSEEN, load_pairs


def _graph(name: str) -> bytes:
    return resources.files("halls.consolidate.judge").joinpath(name).read_bytes()


def _pairs(embedder: Any, items: list[tuple[str, str]]) -> list[Pair]:
    texts = sorted({t for pair in items for t in pair})
    vecs = dict(zip(texts, embedder.embed(texts), strict=True))
    return [Pair(a, b, vecs[a], vecs[b]) for a, b in items]


def _statements(embedder: Any, texts: list[str]) -> tuple[Statements, np.ndarray]:
    """The statements parsed once, and their vectors."""
    v = embedder.embed(texts)
    return Statements(texts, v), v


class Counting:
    """The shipped reader, counting the pairs it is asked about."""

    def __init__(self, reader: CrossReader) -> None:
        self.reader = reader
        self.asked: list[tuple[str, str]] = []

    def read(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self.asked += pairs
        return self.reader.read(pairs)


def _judge(budget: int = CROSS_BUDGET) -> tuple[LocalJudge, Counting]:
    """The shipped judge with a counting reader and ``budget`` pairs a run."""
    reader = default_reader()
    words, cross = mlp.load(mlp.WEIGHTS), mlp.load(mlp.CROSS_WEIGHTS)
    assert reader is not None and words is not None and cross is not None
    spy = Counting(reader)
    return LocalJudge(words, cross, spy, budget), spy


@pytest.mark.parametrize("name", list(MODELS))
def test_the_shipped_graphs_are_the_pinned_files(name: str) -> None:
    """Each graph hashes to its pin in ``MODELS`` and stays within 25 MB."""
    data = _graph(name)
    assert hashlib.sha256(data).hexdigest() == MODELS[name]
    assert len(data) <= 25_000_000


def test_the_judge_reads_with_the_cross_encoder_when_given_pairs() -> None:
    judge = default_judge(cross_pairs=CROSS_BUDGET)
    assert isinstance(judge, LocalJudge)
    assert judge.cross is not None and judge.reader is default_reader()
    off = default_judge(0)
    assert isinstance(off, LocalJudge) and off.cross is None


def test_a_pair_reads_the_same_alone_and_among_others() -> None:
    """One pair per run: a reading does not depend on what else a run holds."""
    reader = default_reader()
    assert reader is not None
    pairs = [
        ("Marta runs the Lisbon office", "The Lisbon office is run by Marta"),
        ("We deploy on Fridays", "Deploys went to Tuesdays"),
        ("I take the 7:40 train", "Sold the car last year, so it's the train now at 7.40"),
    ]
    together = reader.read(pairs)
    assert together.shape == (3, len(LABELS))
    assert np.allclose(together.sum(axis=1), 1.0, atol=1e-4)
    for n, pair in enumerate(pairs):
        assert np.array_equal(reader.read([pair])[0], together[n])


def test_the_cross_encoder_never_trains_on_a_pair_it_is_measured_on() -> None:
    """Its training files parse, hold every label, and share no pair with the
    files the judge is measured on (``pairs_unseen.txt``, ``pairs_blind.txt``)."""
    assert "pairs_cross.txt" in CROSS_TRAINING
    trained = [p for name in CROSS_TRAINING for p in load_pairs(name)]
    extra = load_pairs("pairs_cross.txt")
    assert len(extra) > 1000 and {label for label, _, _ in extra} == set(LABELS)
    measured = {(a, b) for name in (UNSEEN, "pairs_blind.txt") for _, a, b in load_pairs(name)}
    assert not {(a, b) for _, a, b in trained} & measured


# Rewordings, written for this test and in no training file; the words alone
# read three as the same (the pairs that share their key words).
REWORDED = [
    ("Mei walks to work every day", "Mei's commute is on foot"),
    ("Lars hates flying", "Lars avoids planes whenever he can"),
    ("Noor is a night owl", "Noor does her best work after midnight"),
    ("Tobias can't swim", "Tobias never learned how to stay afloat in water"),
    ("The office closes at six", "Nobody can get into the office after 18:00"),
    ("Ayla is learning the cello", "Ayla takes cello lessons"),
    ("Our team ships on Fridays", "Releases go out at the end of each week"),
    ("Kofi doesn't drink coffee", "Kofi sticks to tea, never coffee"),
]


def test_the_cross_encoder_reads_rewordings_that_words_miss(embedder: Any) -> None:
    """The cross-encoder reads nearly all of them as the same; the judge, which
    weighs it against the words, reads at least two more of them so, and puts more weight
    on `same` for every pair the words read as two facts and the cross-encoder as
    one."""
    pairs = _pairs(embedder, REWORDED)
    reader = default_reader()
    assert reader is not None
    alone = reader.read(REWORDED).argmax(axis=1)
    assert (alone == LABELS.index("same")).sum() >= 7
    words_only = default_judge(0).judge(pairs)
    with_cross = default_judge(cross_pairs=CROSS_BUDGET).judge(pairs)
    missed = [n for n, j in enumerate(words_only) if j.label != "same"]
    assert len(missed) == 5
    assert sum(j.label == "same" for j in with_cross) >= 8 - len(missed) + 2
    same = LABELS.index("same")
    for n in missed:
        if alone[n] == same:
            assert with_cross[n].probabilities[same] > words_only[n].probabilities[same]


def test_the_budget_bounds_the_pairs_read_least_sure_first(embedder: Any) -> None:
    """A run's clustering reads at most ``budget`` pairs through the cross-encoder,
    those the words read least surely; the rest keep the words' reading."""
    texts = [
        "Marta runs the Lisbon office",
        "The Lisbon office is run by Marta",
        "Marta manages the office in Lisbon",
        "Our CI runs on Jenkins",
        "Continuous integration: Jenkins",
        "Jenkins runs our CI builds",
    ]
    statements, v = _statements(embedder, texts)
    a = np.array([0, 0, 1, 3, 3, 4], dtype=np.int64)
    b = np.array([1, 2, 2, 4, 5, 5], dtype=np.int64)
    judge, spy = _judge(budget=4)
    words = judge.probabilities(
        lexical_rows(statements, statements, a, b, np.einsum("ij,ij->i", v[a], v[b]))
    )
    labels = judge.read(texts, v, a, b).labels
    assert len(spy.asked) == 4
    least_sure = np.argsort(words.max(axis=1), kind="stable")[:4]
    assert spy.asked == [(texts[a[r]], texts[b[r]]) for r in least_sure.tolist()]
    unread = sorted(set(range(len(a))) - set(least_sure.tolist()))
    assert labels[unread].tolist() == words[unread].argmax(axis=1).tolist()
    # Spent: the next call in the same run reads nothing more.
    judge.read(texts, v, a, b)
    assert len(spy.asked) == 4
    # Reconciliation has a budget of its own.
    judge.judge([Pair(texts[x], texts[y], v[x], v[y]) for x, y in zip(a[:2], b[:2], strict=True)])
    assert len(spy.asked) == 6


def test_an_addition_is_read_by_its_words_and_a_sure_change_is_asked(embedder: Any) -> None:
    """The cross-encoder reads two statements of one addition as two facts: such
    pairs keep the words' reading. A change the words read surely is asked (they
    read "started" as a change of whatever came before), and the rules still hold
    for it: a cadence swapped for another stays a change."""
    items = [
        ("Greta's bike is a Trek road bike", "Greta's bike: Canyon gravel bike"),
        ("Omar has taken up the drums too", "Omar plays drums as well as guitar"),
        ("We release every two weeks", "We release once a month"),
        ("Our team ships on Fridays", "Releases go out at the end of each week"),
        ("Hana plays the violin", "Hana started learning piano"),
    ]
    judge, spy = _judge()
    got = judge.judge(_pairs(embedder, items))
    assert sorted(spy.asked) == sorted([items[0], items[2], items[3], items[4]])
    assert [j.label for j in got] == ["update", "same", "update", "same", "unrelated"]


@pytest.mark.parametrize(("cross_pairs", "facts"), [(0, 0), (CROSS_BUDGET, 1)])
def test_the_setting_turns_the_cross_encoder_on_for_a_run(
    tmp_path: Path, embedder: Any, cross_pairs: int, facts: int
) -> None:
    """``consolidator.cross_pairs`` reaches the run's judge: a rewording on two days
    that the words read as two facts is one fact with the cross-encoder on."""
    settings = Settings(
        data_dir=tmp_path / "data", consolidator=ConsolidatorSettings(cross_pairs=cross_pairs)
    )
    now = datetime.now(UTC)
    with Memory(settings, embedder=embedder) as memory:
        memory.remember("The office closes at six", store="c", occurred_at=now - timedelta(days=3))
        memory.remember(
            "Nobody can get into the office after 18:00",
            store="c",
            occurred_at=now - timedelta(days=1),
        )
        memory.consolidate(store="c")
        assert len(memory.list_long(store="c")) == facts


def test_it_is_on_by_default_with_the_measured_budget() -> None:
    """A run reads up to ``CROSS_BUDGET`` pairs with it unless configured otherwise
    (the budget docs/benchmarks.md measured the 10,000-entry run with)."""
    assert ConsolidatorSettings().cross_pairs == CROSS_BUDGET > 0


def test_clustering_reads_every_pair_but_additions_with_the_cross_encoder(embedder: Any) -> None:
    """Clustering asks whether two statements say the same thing: the cross-encoder
    reads the pairs the words read surely as a change too, as reconciliation does;
    the rules hold for its reading as for the MLP's."""
    texts = [
        "We release every two weeks",
        "We release once a month",
        "Omar has taken up the drums too",
        "Omar plays drums as well as guitar",
    ]
    _, v = _statements(embedder, texts)
    a, b = np.array([0, 2], dtype=np.int64), np.array([1, 3], dtype=np.int64)
    judge, spy = _judge()
    r = judge.read(texts, v, a, b)
    labels, p_same = r.labels, r.p_same
    assert spy.asked == [(texts[0], texts[1])]  # not the addition
    # Each claims a cadence the other lacks: never the same, whoever reads it.
    assert LABELS[labels[0]] != "same" and p_same[0] == 0.0
    judge.judge([Pair(texts[x], texts[y], v[x], v[y]) for x, y in zip(a, b, strict=True)])
    assert spy.asked[1:] == [(texts[0], texts[1])]  # reconciliation: not the addition either


def test_a_rewording_far_in_cosine_is_one_fact(tmp_path: Path, embedder: Any) -> None:
    """Two statements of one arrival time at cosine 0.50, one in digits and one in
    words: the second MLP alone reads them as two facts (``same`` 0.34, under the
    0.6 a pair this far needs); the mean of its reading and the cross-encoder's
    own reads them as the same (0.64), and two days of them are one fact."""
    now = datetime.now(UTC)
    with Memory(Settings(data_dir=tmp_path / "data"), embedder=embedder) as memory:
        memory.remember(
            "Wen's flight lands at 18:05", store="c", occurred_at=now - timedelta(days=3)
        )
        memory.remember(
            "Wen gets in at five past six in the evening",
            store="c",
            occurred_at=now - timedelta(days=1),
        )
        memory.consolidate(store="c")
        [fact] = memory.list_long(store="c")
        assert len(fact.derived_from) == 2
