"""How much a cluster counts as evidence (pure).

Each distinct moment counts, but not equally: a burst of repeats within
``burst_seconds`` is one moment (an agent that writes the same thing three
times in a turn has said it once); the first moment of each distinct day
counts 1 and further moments on that day count 1/2, because recurrence across
days is what shows a thing is durable rather than on someone's mind today.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

DAY = 86400.0


def evidence_score(times: Iterable[float], burst_seconds: float = 60.0) -> float:
    moments: list[float] = []
    for t in sorted(times):
        if not moments or t - moments[-1] > burst_seconds:
            moments.append(t)
    days = {math.floor(t / DAY) for t in moments}
    return len(days) + 0.5 * (len(moments) - len(days))


def evidence_count(score: float) -> int:
    """The whole number a fact carries: at least 1 for anything promoted."""
    return max(1, int(score))
