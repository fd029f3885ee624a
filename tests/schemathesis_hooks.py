"""A check schemathesis runs on every response besides its own: nothing leaks.

Loaded by ``SCHEMATHESIS_HOOKS=schemathesis_hooks`` (see tests/test_fuzz.py).
"""

from __future__ import annotations

import re

import schemathesis

# A stack trace, a source file, a path of the machine, or SQL.
LEAK = re.compile(
    r"Traceback|File \"|site-packages|\.py\b|\.sqlite3|sqlite3\.|OperationalError|"
    r"\bSELECT\b.+\bFROM\b|\bINSERT INTO\b|"
    r"/(?:tmp|work|home|root|usr|var|opt|srv|etc|proc|private)/"
)


@schemathesis.check
def no_leak(ctx, response, case) -> bool | None:  # type: ignore[no-untyped-def]
    """No response body names a path, a stack frame or SQL."""
    if case.path == "/openapi.json":
        return None
    found = LEAK.search(response.text or "")
    if found is not None:
        raise AssertionError(f"the response leaks {found.group(0)!r}")
    return None
