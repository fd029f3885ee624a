"""How far a consolidation run is: a stage name and items done of a total.

The runner sets a reporter for the run (``watching``); the steps that take
time call ``report(stage, done, total)`` as they go: reading, extracting,
embedding, clustering, pairing, parsing, judging, candidates, reconciling,
applying (docs/http-api.md lists them all). A context variable rather
than an argument: the loops that take time sit several calls below the
runner (engine, plan, candidates, cluster, judge), and threading a
parameter through each would change every signature on the way for
something none of them decides with. Reporting never changes what
a run decides; without a reporter a report is one lookup.

A reporter is called from the run's own thread, often (every block of a
loop): it should only record the numbers (``halls.service.jobs`` does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")

Reporter = Callable[[str, int, int], None]
"""``reporter(stage, done, total)``: ``done`` of ``total`` items of ``stage``."""

_current: ContextVar[Reporter | None] = ContextVar("halls_run_progress", default=None)


def report(stage: str, done: int, total: int) -> None:
    """Tell the run's reporter, if any, that ``done`` of ``total`` of ``stage`` are done."""
    reporter = _current.get()
    if reporter is not None:
        reporter(stage, done, total)


@contextmanager
def watching(reporter: Reporter | None) -> Iterator[None]:
    """Within the block, ``report`` calls ``reporter`` (None: nothing)."""
    token = _current.set(reporter)
    try:
        yield
    finally:
        _current.reset(token)


def counted(stage: str, starts: range, total: int) -> Iterator[int]:
    """The block ``starts`` of a loop over ``total`` items, reporting each block's
    start as done before it (and ``total`` after the last)."""
    for start in starts:
        report(stage, start, total)
        yield start
    report(stage, total, total)


def each(stage: str, items: Sequence[T], every: int = 256) -> Iterator[T]:
    """The items, reporting every ``every``-th as done before it; no report for as
    few as ``every`` (a step that reads a few items, many times a run, would
    otherwise flicker between stages)."""
    total = len(items)
    if total <= every:
        yield from items
        return
    for n, item in enumerate(items):
        if n % every == 0:
            report(stage, n, total)
        yield item
    report(stage, total, total)
