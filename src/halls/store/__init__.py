"""Storage: the Store protocol and its backends (one module each)."""

from halls.store.base import Store

__all__ = ["Store"]
