"""Importance (pure): how much a memory matters, as its writer says.

A writer may give a short-term entry or an open loop an importance: a
number in [0, 1], or a level (``low`` 0.25, ``normal`` 0.5, ``high`` 0.75,
``critical`` 1.0). Unset (``None``) is the default and behaves exactly as
``normal`` everywhere: every factor below is 1 at 0.5, so a store nobody
marks ranks, ages and retires as it did before importance existed.

Three places read it, each through one bounded factor:

- ranking (``halls.recall.rank``): the score is multiplied by
  ``1 + importance_weight x (2 x importance - 1)``, in
  [1 - weight, 1 + weight];
- lifetime: a short-term entry's TTL (``short.importance_ttl_factor``) and
  every record's strength half-life (``recall.importance_half_life_factor``)
  are multiplied by ``factor ** (2 x importance - 1)``: a critical memory
  lives ``factor`` times as long, a low one ``factor ** -0.5`` as long;
- the session block (``halls.service.session``): what is at least ``high``
  is chosen first when the budget cannot hold everything.

A fact the consolidator promotes carries the highest importance of the
entries it was made from.
"""

from __future__ import annotations

import math
from typing import Any

from halls.errors import InvalidInput
from halls.models import IMPORTANCE_LEVELS

LEVEL_VALUE: dict[str, float] = {"low": 0.25, "normal": 0.5, "high": 0.75, "critical": 1.0}
# What the session block chooses before anything else (``high`` and above).
PREFERRED = LEVEL_VALUE["high"]


def parse_importance(value: Any, field: str = "importance") -> float | None:
    """A number in [0, 1] or a level name, as a number; ``None`` stays unset."""
    if value is None:
        return None
    if isinstance(value, str) and value in LEVEL_VALUE:
        return LEVEL_VALUE[value]
    # Not "0.5" nor true: a level's name or a JSON number, as the schema says.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(
            f"{field} must be a number from 0 to 1 or one of {', '.join(IMPORTANCE_LEVELS)}"
        )
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise InvalidInput(f"{field} must be between 0 and 1")
    return number + 0.0  # -0.0 is 0.0


def _centred(importance: float | None) -> float:
    """-1 (importance 0) .. 0 (unset or 0.5) .. 1 (importance 1)."""
    return 0.0 if importance is None else 2.0 * importance - 1.0


def rank_factor(importance: float | None, weight: float) -> float:
    """What a hit's score is multiplied by: 1 unset, in [1 - weight, 1 + weight]."""
    return 1.0 + weight * _centred(importance)


def lifetime_factor(importance: float | None, factor: float) -> float:
    """What a lifetime (TTL, half-life) is multiplied by: 1 unset, ``factor`` at 1."""
    return float(factor ** _centred(importance))


def highest(values: Any) -> float | None:
    """The highest importance of ``values`` that is set, or None when none is."""
    found = [v for v in values if v is not None]
    return max(found) if found else None
