"""Importance (halls.importance): parsing, its factors, and the service's checks."""

from __future__ import annotations

import math

import pytest

from halls import Memory
from halls.errors import InvalidInput
from halls.importance import highest, lifetime_factor, parse_importance, rank_factor
from halls.models import NewShort


@pytest.mark.parametrize(
    ("given", "stored"),
    [(None, None), ("low", 0.25), ("normal", 0.5), ("high", 0.75), ("critical", 1.0),
     (0, 0.0), (1, 1.0), (0.3, 0.3), (-0.0, 0.0)],
)  # fmt: skip
def test_levels_and_numbers_parse_to_a_number_in_0_1(given: object, stored: float | None) -> None:
    """Each level maps to its documented number; numbers in [0, 1] are kept; None stays unset."""
    got = parse_importance(given)
    assert got == stored and (got is None or math.copysign(1, got) == 1)


@pytest.mark.parametrize(
    "bad", [1.0001, -0.1, math.nan, math.inf, "HIGH", "urgent", "0.5", "", True, False, [1]]
)
def test_anything_else_is_invalid_input(bad: object) -> None:
    """Out of range, NaN, unknown or differently cased words, numeric strings, booleans: refused."""
    with pytest.raises(InvalidInput, match="importance"):
        parse_importance(bad)


def test_every_factor_is_one_when_unset_or_normal_and_bounded() -> None:
    """Unset and 0.5 change nothing; the ends are 1 -/+ weight and factor ** -/+1."""
    for neutral in (None, 0.5):
        assert rank_factor(neutral, 0.2) == 1.0 and lifetime_factor(neutral, 4.0) == 1.0
    assert rank_factor(1.0, 0.2) == pytest.approx(1.2)
    assert rank_factor(0.0, 0.2) == pytest.approx(0.8)
    assert lifetime_factor(1.0, 4.0) == pytest.approx(4.0)
    assert lifetime_factor(0.75, 4.0) == pytest.approx(2.0)
    assert lifetime_factor(0.25, 4.0) == pytest.approx(0.5)
    assert highest([None, 0.25, 0.75]) == 0.75 and highest([None, None]) is None


def test_the_service_refuses_a_bad_importance_and_stores_nothing(memory: Memory) -> None:
    """The Python API checks as HTTP does: one bad item in a batch stores none of it."""
    with pytest.raises(InvalidInput, match="items\\[1\\].importance"):
        memory.remember_many(
            [NewShort(content="fine", importance="high"), NewShort(content="bad", importance=2)],
            store="p",
        )
    with pytest.raises(InvalidInput, match="importance"):
        memory.add_loop("never stored", store="p", importance="urgent")
    kept = memory.remember("kept", store="p", importance="critical")
    with pytest.raises(InvalidInput, match="importance"):
        memory.edit_short(kept.id, {"importance": -1}, store="p")
    assert [e.importance for e in memory.list_short(store="p")] == [1.0]
    assert memory.list_loops(store="p") == []
