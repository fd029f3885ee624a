"""Temporary alias until ``halls.service`` builds its registry from ``halls.store``.

Remove at merge, once ``Memory.__init__`` reads
``StoreRegistry(open_backend(settings.storage, settings.data_dir))``.
"""

from __future__ import annotations

from pathlib import Path

from halls.config import StorageSettings
from halls.store import StoreRegistry as _Registry
from halls.store import check_store_name, open_backend

__all__ = ["StoreRegistry", "check_store_name"]


def StoreRegistry(data_dir: Path, storage: StorageSettings) -> _Registry:  # noqa: N802 - the old class name
    return _Registry(open_backend(storage, data_dir))
