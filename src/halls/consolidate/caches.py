"""What a run leaves in the process, released when it ends.

Within a run, parses are cached by text: a statement recurs across
entries, clusters and reconciliation. Between runs (20 hours apart by
default) they would only hold memory, so a run clears them as it ends.
That changes no result: each is a pure function of its text (the judge's
word ids live on in ``reading``'s vocabulary, so a text parsed again reads
the same). The models stay loaded (the judge's weights and word tables,
the cross-encoder, spaCy's pipeline): loading them takes seconds, and a
second run soon after finds them as the first left them. When no run
starts for ``consolidator.models_idle_seconds`` (10 minutes by default),
they are let go too (``release_models``), and a process that dreams every
20 hours holds between runs about what it held before the first one.

Freed memory stays in the C heap until glibc is asked to hand it back
(``malloc_trim``); elsewhere the allocator decides. Figures in
docs/benchmarks.md.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import threading


def release() -> None:
    """Clear the run's parse caches and give the freed heap back to the system."""
    from halls.consolidate import judge, standalone, voices

    voices.clear()
    standalone.clear()
    judge.clear_caches()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def release_models() -> None:
    """Let the models a run loaded go (they load again at the next run)."""
    from halls import nlp
    from halls.consolidate import judge

    with nlp.LOCK:
        nlp.pipeline.cache_clear()
    judge.unload()
    gc.collect()  # the pipeline's objects hold cycles: freed before the heap is trimmed
    release()


class _Idle:
    """Runs in progress in this process, and the timer that lets the models go when
    none has started for a while."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.timer: threading.Timer | None = None

    def start(self) -> None:
        with self.lock:
            self.running += 1
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None

    def end(self, idle_seconds: float | None) -> None:
        with self.lock:
            self.running -= 1
            if self.running or idle_seconds is None:
                return
            self.timer = threading.Timer(idle_seconds, self._fire)
            self.timer.daemon = True
            self.timer.start()

    def _fire(self) -> None:
        with self.lock:
            if self.running:
                return
            self.timer = None
            release_models()


IDLE = _Idle()


@functools.cache
def _malloc_trim() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """glibc's ``malloc_trim``, or None (another C library, another system)."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
