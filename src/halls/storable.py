"""What a store can hold and every interface can serialize back: text and metadata.

JSON lets a ``\\udfff`` escape stand alone, and Python decodes it to a lone
surrogate, which no UTF-8 encoder (SQLite's, the JSON response's) can
write; and a JSON object may nest deeper than a serializer recurses. Either
used to be stored, then broke every listing of its store. So every write
is checked here first (``check_text``, ``check_metadata``), and every read
checks what it loads (``readable``), so that a record stored before these
checks is skipped rather than failing its whole store.
"""

from __future__ import annotations

import json
import math
from typing import Any

from halls.errors import InvalidInput

# Documented in docs/http-api.md (Conventions): metadata is a program's
# labels, not a document store; 32 levels and 64 KiB are far above any use
# seen, and far below what the serializers (pydantic: 255 levels) refuse.
MAX_METADATA_DEPTH = 32
MAX_METADATA_BYTES = 65536
# What a read accepts: below pydantic's serialization limit, above what a
# write may store, so that nothing written today is ever skipped.
READ_DEPTH = 200


def valid_text(value: str) -> bool:
    """Whether ``value`` encodes as UTF-8, i.e. holds no lone surrogate."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(value: str, field: str) -> str:
    if not valid_text(value):
        raise InvalidInput(f"{field} is not valid Unicode text (it holds a lone surrogate)")
    return value


def problem(value: Any, max_depth: int) -> str | None:
    """What keeps ``value`` (a decoded JSON value) from being stored and served, or None.

    Iterative, so that a value nested deeper than the interpreter recurses
    is judged rather than crashing the judge.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not valid_text(item):
                return "holds a lone surrogate (not valid Unicode text)"
        elif isinstance(item, bool | int | None):
            continue
        elif isinstance(item, float):
            if not math.isfinite(item):
                return "holds a number that is not finite (NaN or Infinity)"
        elif isinstance(item, dict | list):
            if depth > max_depth:
                return f"is nested deeper than {max_depth} levels"
            if isinstance(item, dict):
                for key in item:
                    if not isinstance(key, str) or not valid_text(key):
                        return "has a key that is not valid Unicode text"
                stack.extend((v, depth + 1) for v in item.values())
            else:
                stack.extend((v, depth + 1) for v in item)
        else:
            return f"holds a {type(item).__name__}, which is not a JSON value"
    return None


def check_metadata(value: Any, field: str = "metadata") -> dict[str, Any]:
    """``value`` if it is a JSON object a store can hold, else ``InvalidInput``."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput(f"{field} must be a JSON object")
    wrong = problem(value, MAX_METADATA_DEPTH)
    if wrong is not None:
        raise InvalidInput(f"{field} {wrong}")
    size = len(json.dumps(value, ensure_ascii=False).encode())
    if size > MAX_METADATA_BYTES:
        raise InvalidInput(f"{field} is {size} bytes as JSON; at most {MAX_METADATA_BYTES}")
    return value


def check_strings(value: Any, field: str) -> None:
    """Refuse a lone surrogate anywhere in ``value`` (a request body, tool arguments)."""
    stack: list[tuple[Any, str]] = [(value, field)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            check_text(item, where)
        elif isinstance(item, dict):
            for key, v in item.items():
                if isinstance(key, str):
                    check_text(key, f"a key of {where}")
                stack.append((v, f"{where}.{key}" if where else str(key)))
        elif isinstance(item, list | tuple):
            stack.extend((v, f"{where}[{n}]") for n, v in enumerate(item))


def readable(value: Any) -> bool:
    """Whether a stored JSON value can be served (a read skips the record otherwise)."""
    return problem(value, READ_DEPTH) is None
