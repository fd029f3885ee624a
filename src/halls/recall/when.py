"""Dates named in a query, as time windows to match ``occurred_at`` against (pure).

"What did Melanie paint on October 13, 2023?" is about what happened that
day; "in July 2023" about that month; "in June" about any June. A memory
that happened inside a window the query names gains ``time_weight``; one
just outside gains less, halving every ``time_half_life_days`` beyond the
window's edge (an event is often told a few days after it happened). Only
explicit calendar dates are read; relative ones ("last week") are not.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from halls.config import RecallSettings

DAY = 86400.0
_MONTHS = {m.lower(): n for n, m in enumerate(calendar.month_name) if m}
_MONTHS |= {m.lower(): n for n, m in enumerate(calendar.month_abbr) if m and m != "May"}
_M = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_Y = r"(?P<year>(?:19|20)\d\d)"
_D = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_PATTERNS = [
    re.compile(rf"\b{_D}\s+(?:of\s+)?{_M},?\s+{_Y}\b", re.I),  # 13 October, 2023
    re.compile(rf"\b{_M}\s+{_D},?\s+{_Y}\b", re.I),  # October 13, 2023
    re.compile(rf"\b{_M},?\s+{_Y}\b", re.I),  # October 2023
    re.compile(rf"\b(?:in|during|of|since|until|by)\s+{_M}\b(?!\s+\d)", re.I),  # in June
    re.compile(rf"\b(?:in|during|of)\s+{_Y}\b", re.I),  # in 2023
]


@dataclass(frozen=True, slots=True)
class Window:
    """A span of time a query names; ``month`` alone means that month of any year."""

    start: float | None = None
    end: float | None = None
    month: int | None = None


def windows(query: str) -> list[Window]:
    """The calendar windows named in ``query``, most specific first, none overlapping."""
    out: list[Window] = []
    taken: list[tuple[int, int]] = []
    for pattern in _PATTERNS:
        for m in pattern.finditer(query):
            if any(m.start() < b and a < m.end() for a, b in taken):
                continue
            window = _window(m.groupdict())
            if window is not None:
                out.append(window)
                taken.append(m.span())
    return out


def _window(parts: dict[str, str | None]) -> Window | None:
    month = _MONTHS.get((parts.get("month") or "").lower())
    year = int(parts.get("year") or 0) or None
    day = int(parts.get("day") or 0) or None
    try:
        if year and month and day:
            start = datetime(year, month, day, tzinfo=UTC)
            return Window(start.timestamp(), start.timestamp() + DAY)
        if year and month:
            start = datetime(year, month, 1, tzinfo=UTC)
            nxt = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
            return Window(start.timestamp(), nxt.timestamp())
        if month:
            return Window(month=month)
        if year:
            return Window(
                datetime(year, 1, 1, tzinfo=UTC).timestamp(),
                datetime(year + 1, 1, 1, tzinfo=UTC).timestamp(),
            )
    except ValueError:  # "31 February"
        return None
    return None


def time_bonus(occurred_at: float, found: list[Window], cfg: RecallSettings) -> float:
    """``time_weight`` inside a named window, halving per half-life of days outside it."""
    best = 0.0
    for w in found:
        if w.month is not None:
            inside = datetime.fromtimestamp(occurred_at, tz=UTC).month == w.month
            best = max(best, 1.0 if inside else 0.0)
            continue
        assert w.start is not None and w.end is not None
        outside = max(w.start - occurred_at, occurred_at - w.end, 0.0) / DAY
        best = max(best, 0.5 ** (outside / cfg.time_half_life_days))
    return cfg.time_weight * best


# "When did ...", "How long ago ...", "What year ...": the question asks for a time.
_ASKS = re.compile(
    r"^\s*(?:when\b|how\s+long\s+ago\b|(?:in\s+)?(?:what|which)\s+(?:year|month|day|date|week)\b)",
    re.I,
)
# A memory that says when: relative days and weeks, weekdays, months, years
# ("May" only capitalised: "you may like it" says nothing about time).
_TELLS = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|last|next|this\s+(?:morning|week|weekend|month|"
    r"year|summer|winter|spring|fall)|weekend|since|recently|(?:mon|tues|wednes|thurs|fri|satur|"
    r"sun)day|" + "|".join(m for m in _MONTHS if len(m) > 3) + r"|(?-i:May)|(?:19|20)\d\d)\b",
    re.I,
)


def asks_when(query: str) -> bool:
    """True when the query asks for a time ("When did ...", "How long ago ...")."""
    return _ASKS.search(query) is not None


def tells_when(content: str) -> bool:
    """True when the memory says when something happened ("yesterday", "last May")."""
    return _TELLS.search(content) is not None
