"""What a run leaves in the process, released when it ends.

Within a run, parses are cached by text: a statement recurs across
entries, clusters and reconciliation. Between runs (20 hours apart by
default) they would only hold memory, so a run clears them as it ends.
That changes no result: each is a pure function of its text (the judge's
word ids live on in ``reading``'s vocabulary, so a text parsed again reads
the same). The models stay loaded (the judge's weights and word tables,
the cross-encoder, spaCy's pipeline): loading them takes seconds, and a
second run finds them as the first left them.

Freed memory stays in the C heap until glibc is asked to hand it back
(``malloc_trim``); elsewhere the allocator decides. Figures in
docs/benchmarks.md.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools


def release() -> None:
    """Clear the run's parse caches and give the freed heap back to the system."""
    from halls.consolidate import judge, standalone, voices

    voices.clear()
    standalone.clear()
    judge.clear_caches()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """glibc's ``malloc_trim``, or None (another C library, another system)."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
