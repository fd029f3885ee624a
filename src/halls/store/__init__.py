"""Storage: the Store protocol and its backends (one module each)."""

from halls.store.base import Match, Store

__all__ = ["Match", "Store"]
