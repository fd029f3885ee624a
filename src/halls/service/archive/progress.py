"""How far an export or import has got: a callback the CLI draws as a bar."""

from __future__ import annotations

from collections.abc import Callable

# progress(done, total): records written so far, out of how many.
Progress = Callable[[int, int], None]


class Ticker:
    """Counts records done and tells ``progress`` after each batch."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self._progress, self.total, self.done = progress, total, 0

    def __call__(self, n: int) -> None:
        self.done += n
        if self._progress is not None:
            self._progress(self.done, self.total)
