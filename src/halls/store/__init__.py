"""Storage: the Store protocol, the backends behind it, and the named-store registry."""

from halls.store.backend import Backend, open_backend
from halls.store.base import Store
from halls.store.registry import StoreRegistry, check_store_name

__all__ = ["Backend", "Store", "StoreRegistry", "check_store_name", "open_backend"]
