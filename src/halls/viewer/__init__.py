"""The single-file viewer: a read-only HTML page over halls' own HTTP API.

``halls.html`` is self-contained (inline CSS and JS, nothing fetched from
elsewhere) so that the same file works when served at ``/viewer`` and when
opened straight from disk.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

__all__ = ["viewer_html"]


@cache
def viewer_html() -> str:
    """The page's source, read once from the installed package."""
    return files(__package__).joinpath("halls.html").read_text(encoding="utf-8")
