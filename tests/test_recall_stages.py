"""The pure stages of a search (halls.recall): each returns a new value, inputs untouched."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from halls.config import RecallSettings
from halls.models import Match, Written
from halls.recall import feedback, neighbours, weigh
from halls.recall.fusion import Normaliser, Signals, cosines, fuse, rrf, signals, with_cosines

CFG = RecallSettings()
Q = np.array([1.0, 0.0], np.float32)


def _unit(x: float, y: float) -> np.ndarray:
    v = np.array([x, y], np.float32)
    return v / np.linalg.norm(v)


def _start() -> tuple[list[Match], list[Match], Normaliser, dict[str, Signals]]:
    text = [Match("a", "short", 4.0), Match("b", "short", 2.0)]
    dense = [Match("a", "short", 0.8), Match("c", "short", 0.4)]
    norm = Normaliser(text, dense, CFG)
    return text, dense, norm, fuse(signals(text, dense), norm, CFG)


def test_fusion_stages_leave_their_input_alone() -> None:
    """with_cosines and fuse return new dicts; the one passed in is unchanged."""
    text, dense, norm, _ = _start()
    found = signals(text, dense)
    before = copy.deepcopy(found)
    filled = with_cosines(found, {"b": _unit(1, 1)}, Q)
    fused = fuse(filled, norm, CFG)
    assert found == before
    assert filled["b"].cosine == pytest.approx(0.7071, abs=1e-4) and found["b"].cosine is None
    assert fused["a"].relevance == pytest.approx(1.0) and filled["a"].relevance == 0.0


@pytest.mark.parametrize("best", [0.83, 0.3337, 1.0, 0.0, -0.2])
def test_relevance_of_cosines_at_once_is_that_of_each(best: float) -> None:
    """Normaliser.dense_relevance gives the very floats of relevance(None, c), one by one,
    signs of zeros included."""
    rng = np.random.default_rng(5)
    dense = [Match("a", "short", best)]
    found = [0.0, -0.0, 1.0, -1.0, 1e-300, best, *rng.uniform(-1, 1, 200).tolist()]
    found += rng.uniform(-1, 1, 50).astype(np.float32).tolist()  # as cosines() returns them
    for text in ([], [Match("b", "short", 3.0)]):
        norm = Normaliser(text, dense, CFG)
        got, want = norm.dense_relevance(found), [norm.relevance(None, c) for c in found]
        assert [(x, math.copysign(1, x)) for x in got] == [(x, math.copysign(1, x)) for x in want]
    assert Normaliser([], dense, CFG).dense_relevance([]) == []


def test_feedback_stage_scores_new_hits_and_adds_the_bonus() -> None:
    """A feedback hit already found gains the bonus; a new one joins, scored by its cosine."""
    *_, norm, found = _start()
    before = copy.deepcopy(found)
    hits = [Match("b", "short", 3.0), Match("d", "short", 1.5)]
    assert feedback.unscored(found, hits, norm) == ["d"]
    out = feedback.with_feedback(found, hits, {"d": _unit(1, 0)}, Q, norm, CFG)
    assert found == before
    assert out["b"].feedback == pytest.approx(CFG.feedback_weight)
    assert out["d"].feedback == pytest.approx(CFG.feedback_weight / 2)
    assert out["d"].relevance == pytest.approx(norm.relevance(None, 1.0))
    empty = [Match("b", "short", 0.0)]
    assert feedback.unscored(found, empty, norm) == []
    assert feedback.with_feedback(found, empty, {}, Q, norm, CFG) == found


def test_neighbour_stage_adds_scorable_neighbours_and_bonuses() -> None:
    """A neighbour no search found joins with its cosine; every placed record gets a boost."""
    *_, norm, found = _start()
    before = copy.deepcopy(found)
    written = [
        Written("a", "short", 10, 1000.0, _unit(1, 0)),
        Written("e", "short", 11, 1001.0, _unit(1, 1)),
    ]
    assert neighbours.around(found, 1) == ["a"]
    out, boost = neighbours.with_neighbours(found, written, Q, norm, CFG)
    assert found == before and "e" in out and set(boost) == {"a", "e"}
    assert boost["e"].context == pytest.approx(CFG.context_weight * found["a"].total)


def test_rrf_mode_adds_no_unranked_records() -> None:
    """With rank fusion a record neither search ranked has no score, so it never joins."""
    cfg = RecallSettings(fusion="rrf")
    text, dense = [Match("a", "short", 4.0)], [Match("a", "short", 0.9)]
    norm = Normaliser(text, dense, cfg)
    found = fuse(signals(text, dense), norm, cfg)
    assert found["a"].relevance == pytest.approx(rrf((1, 1), cfg.rrf_k, 2)) == pytest.approx(1.0)
    written = [Written("z", "short", 1, 0.0, _unit(1, 0))]
    out, _ = neighbours.with_neighbours(found, written, Q, norm, cfg)
    assert "z" not in out
    assert feedback.unscored(found, [Match("z", "short", 1.0)], norm) == []


def test_shortlist_counts_neighbour_bonuses_and_breaks_ties_by_id() -> None:
    """The records read for weighing are the best by total plus context and episode."""
    *_, _norm, found = _start()
    boost = {"c": neighbours.Boost(context=5.0, episode=0.0)}
    assert weigh.shortlist(found, boost, 2) == ["c", "a"]
    assert cosines([], Q) == []
