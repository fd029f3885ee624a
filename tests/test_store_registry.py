"""The store registry: names checked, one handle per store, any backend behind it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from halls.config import StorageSettings
from halls.errors import InvalidStoreName, StoreNotFound
from halls.models import SearchFilter
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


def _fds() -> int:
    import os

    return len(os.listdir("/proc/self/fd"))


def test_at_most_max_open_stores_stay_open(tmp_path: Path) -> None:
    """Past the bound the least recently used store is closed; its handle still works."""
    reg = StoreRegistry(open_backend(StorageSettings(), tmp_path), max_open=3)
    handles = [reg.open(f"s{i}", True)[0] for i in range(6)]
    assert sorted(h.name for h in reg.opened()) == ["s3", "s4", "s5"]
    for i, h in enumerate(handles):
        h.set_meta("k", f"v{i}")  # reopens the closed ones, one at a time
        assert len(reg.opened()) <= 3
    assert [h.get_meta("k") for h in handles] == [f"v{i}" for i in range(6)]
    # Used last: the most recent stay.
    assert sorted(h.name for h in reg.opened()) == ["s3", "s4", "s5"]
    reg.close()


@pytest.mark.slow  # 200 stores opened and closed in turn: 2-12 s
def test_file_descriptors_stay_bounded_over_many_stores(tmp_path: Path) -> None:
    """200 stores written and read through a bound of 4 leave the descriptor count flat."""
    reg = StoreRegistry(open_backend(StorageSettings(), tmp_path), max_open=4)
    before = _fds()
    counts = []
    for i in range(200):
        s, _ = reg.open(f"n{i}", True)
        s.set_meta("k", str(i))
        assert s.get_meta("k") == str(i)
        counts.append(_fds() - before)
    # Four open stores' worth (file, WAL, shared memory per connection), never more.
    assert 0 < max(counts) == max(counts[:4]) <= 4 * 6, counts
    reg.close()
    assert _fds() <= before


def test_a_store_in_use_or_locked_is_not_closed(tmp_path: Path) -> None:
    """A running iteration and a held consolidation lock keep their store open."""
    reg = StoreRegistry(open_backend(StorageSettings(), tmp_path), max_open=1)
    busy, _ = reg.open("busy", True)
    texts = busy.iter_texts(10)  # the store is in use until the iteration ends
    locked, _ = reg.open("locked", True)
    assert locked.try_lock_consolidation()
    reg.open("third", True)
    assert {h.name for h in reg.opened()} >= {"busy", "locked"}
    assert list(texts) == []  # ends the iteration
    locked.unlock_consolidation()
    reg.open("fourth", True)
    assert [h.name for h in reg.opened()] == ["fourth"]
    reg.close()


def _searched(reg: StoreRegistry, name: str, rows: int) -> None:
    """Fill a store with ``rows`` entries and search it, which builds its indexes."""
    from halls.models import ShortEntry, new_id

    s, _ = reg.open(name, True)
    rng = np.random.default_rng(len(name))
    vectors = rng.standard_normal((rows, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    s.add_short(
        [
            ShortEntry(
                id=new_id("short"), content=f"{name} row {i}", created_at=when, occurred_at=when
            )
            for i in range(rows)
        ],
        vectors,
    )
    filt = SearchFilter(tiers=("short",))
    assert s.text_search([name], filt, 5)
    assert s.vector_search(vectors[0], filt, 1)[0].id


def test_open_stores_indexes_stay_within_the_byte_budget(tmp_path: Path) -> None:
    """Past storage.max_index_mb, idle stores close, least recent first, never the newest."""
    probe = registry(tmp_path / "probe")
    _searched(probe, "probe", 2000)
    one = probe.opened()[0].index_bytes()
    probe.close()
    assert one > 2000 * 384 * 5  # float32 vectors and their int8 copy

    # Room for two stores' indexes, not three.
    reg = StoreRegistry(
        open_backend(StorageSettings(), tmp_path), max_open=10, max_index_bytes=int(one * 2.5)
    )
    for name in ("aaa", "bbb", "ccc"):
        _searched(reg, name, 2000)
    assert [h.name for h in reg.opened()] == ["bbb", "ccc"]
    assert sum(h.index_bytes() for h in reg.opened()) <= one * 2.5
    # The closed store reopens on use and answers as before; the least recent goes.
    s, _ = reg.open("aaa", False)
    assert s.text_search(["aaa"], SearchFilter(tiers=("short",)), 5)
    assert s.vector_search(np.ones(384, dtype=np.float32), SearchFilter(tiers=("short",)), 1)
    assert [h.name for h in reg.opened()] == ["ccc", "aaa"]
    reg.close()

    # A budget smaller than one store: the store in use still serves, alone.
    tiny = StoreRegistry(open_backend(StorageSettings(), tmp_path), max_index_bytes=one // 10)
    for name in ("aaa", "bbb"):
        s, _ = tiny.open(name, False)
        assert s.text_search([name], SearchFilter(tiers=("short",)), 5)
        assert s.vector_search(np.ones(384, dtype=np.float32), SearchFilter(tiers=("short",)), 1)
        assert [h.name for h in tiny.opened()] == [name]
    tiny.close()
