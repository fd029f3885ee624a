"""The store registry: names checked, one handle per store, any backend behind it."""

from __future__ import annotations

from pathlib import Path

import pytest

from halls.config import StorageSettings
from halls.errors import InvalidStoreName, StoreNotFound
from halls.store import StoreRegistry, open_backend


def registry(where: Path) -> StoreRegistry:
    return StoreRegistry(open_backend(StorageSettings(), where))


def test_open_once_then_cached(tmp_path: Path) -> None:
    """The first open creates and reports it new; later opens return the same handle."""
    reg = registry(tmp_path)
    first, new = reg.open("alpha", True)
    again, new_again = reg.open("alpha", False)
    assert new and not new_again and first is again
    assert reg.opened() == [first] and reg.exists("alpha")
    reg.close()


def test_missing_and_invalid_names(tmp_path: Path) -> None:
    """A missing store is not created by a read; a bad name never reaches the backend."""
    reg = registry(tmp_path)
    with pytest.raises(StoreNotFound):
        reg.open("nope", False)
    for bad in ("", "Upper", "../x", "a\n", "-x", "x" * 65):
        with pytest.raises(InvalidStoreName):
            reg.open(bad, True)
    assert reg.names() == [] and not reg.exists("nope")
    reg.close()


def test_names_and_delete(tmp_path: Path) -> None:
    """names() lists stores of the backend and this process; delete closes and removes one."""
    reg = registry(tmp_path)
    reg.open("b", True)
    registry(tmp_path).open("a", True)[0].close()
    assert reg.names() == ["a", "b"]
    assert reg.delete("b") and reg.names() == ["a"] and reg.opened() == []
    assert not reg.delete("b")
    reg.close()
