"""What only the SQLite backend does: its migrations, files and driver errors."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from halls.config import SqliteSettings, StorageSettings
from halls.errors import StoreUnavailable
from halls.models import Scope, SearchFilter
from halls.scopes import TURN_KEY
from halls.store import open_backend
from halls.store.sqlite import SQLiteBackend, SQLiteStore
from halls.store.sqlite.schema import MIGRATIONS

T0 = 1_780_000_000.0
JULIAN_T0 = T0 / 86400.0 + 2440587.5


def _at_version(path: Path, version: int) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    for number, step in enumerate(MIGRATIONS[:version], start=1):
        db.executescript(f"BEGIN;\n{step()}\nPRAGMA user_version = {number};\nCOMMIT;")
    return db


def test_migration_5_makes_the_edges_the_sources_in_unix_seconds(tmp_path: Path) -> None:
    """m005: derived_from JSON wins over drifted edges; dangling and supersedes edges go;
    Julian days become unix seconds."""
    path = tmp_path / "old.sqlite3"
    db = _at_version(path, 4)
    for sid in ("s_1", "s_2", "s_3", "s_4"):
        db.execute(
            "INSERT INTO short(id, content, created_at, occurred_at) VALUES (?, 'x', ?, ?)",
            (sid, T0, T0),
        )
    db.execute(
        "INSERT INTO long(id, content, evidence_count, first_seen, last_confirmed, status, "
        "derived_from, created_at, occurred_at) VALUES ('l_1', 'f', 1, ?, ?, 'active', ?, ?, ?)",
        (T0, T0, json.dumps(["s_1", "s_2", "j_gone"]), T0, T0),
    )
    # A reverted confirm left s_3 and s_4; s_gone was aged out; supersedes
    # edges are the facts' links now.
    db.execute(
        "INSERT INTO edges(src, dst, kind, created_at) VALUES ('l_1', 's_1', 'supersedes', 1)"
    )
    for dst in ("s_1", "s_2", "s_3", "s_4", "s_gone"):
        db.execute(
            "INSERT INTO edges(src, dst, kind, created_at) VALUES ('l_1', ?, 'derived_from', ?)",
            (dst, JULIAN_T0),
        )
    db.close()

    store = SQLiteStore(path, "old")
    fact = store.get_fact("l_1")
    assert fact is not None and fact.derived_from == ["s_1", "s_2"]
    edges = store.edges(["l_1"])
    assert [e.dst for e in edges] == ["s_1", "s_2"]
    assert all(e.created_at == pytest.approx(T0, abs=1e-3) for e in edges)
    columns = {r[1] for r in store._db.reader().execute("PRAGMA table_info(long)")}
    assert "derived_from" not in columns
    store.close()


def test_migration_9_indexes_the_journal_written_before(tmp_path: Path) -> None:
    """m009: events stored before journal search are full, and found by journal_search."""
    path = tmp_path / "old.sqlite3"
    db = _at_version(path, 8)
    db.execute(
        "INSERT INTO journal(id, content, created_at, occurred_at) "
        "VALUES ('j_1', 'the lighthouse keeper retired', ?, ?)",
        (T0, T0),
    )
    db.close()
    store = SQLiteStore(path, "old")
    try:
        event = store.get_journal("j_1")
        assert event is not None and event.visibility == "full"
        found = store.journal_search(["lighthouse"], SearchFilter(), 10)
        assert [m.id for m in found] == ["j_1"]
    finally:
        store.close()  # an unclosed connection is a ResourceWarning on Python 3.13


def test_migration_10_adds_importance_unset_to_existing_records(tmp_path: Path) -> None:
    """m010: a store from before importance opens, its records read back unset,
    and a new entry keeps the importance it is given."""
    path = tmp_path / "old.sqlite3"
    db = _at_version(path, 9)
    db.execute(
        "INSERT INTO short(id, content, created_at, occurred_at) VALUES ('s_old', 'x', ?, ?)",
        (T0, T0),
    )
    db.execute(
        "INSERT INTO near(id, intent, trigger_type, status, created_at, occurred_at) "
        "VALUES ('n_old', 'y', 'manual', 'open', ?, ?)",
        (T0, T0),
    )
    db.close()

    store = SQLiteStore(path, "old")
    assert store._db.reader().execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    old = store.get_short("s_old")
    assert old is not None and old.importance is None
    loop = store.get_loop("n_old")
    assert loop is not None and loop.importance is None
    assert store.update_short(old.model_copy(update={"importance": 0.75}), None)
    again = store.get_short("s_old")
    assert again is not None and again.importance == 0.75
    store.close()


def test_migration_11_adds_scopes_to_a_store_from_before(tmp_path: Path) -> None:
    """m011: a store from before scopes opens, its records read back without a scope, it
    has no scopes and a turn count of none, and a new scope is kept."""
    path = tmp_path / "old.sqlite3"
    db = _at_version(path, 10)
    db.execute(
        "INSERT INTO short(id, content, created_at, occurred_at) VALUES ('s_old', 'x', ?, ?)",
        (T0, T0),
    )
    db.execute(
        "INSERT INTO journal(id, content, created_at, occurred_at) VALUES ('j_old', 'y', ?, ?)",
        (T0, T0),
    )
    db.close()

    store = SQLiteStore(path, "old")
    assert store._db.reader().execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    old, event = store.get_short("s_old"), store.get_journal("j_old")
    assert old is not None and old.scope is None and event is not None and event.scope is None
    assert store.list_scopes(None, 10, 0) == [] and store.get_meta(TURN_KEY) is None
    new = Scope(name="web/a", opened_at=old.created_at, last_turn=1)
    store.update_scopes(["web/a"], lambda turn, scopes: (turn + 1, [new]))
    assert store.list_scopes("open", 10, 0) == [new]
    store.close()


def test_a_file_that_is_not_a_database_is_store_unavailable(tmp_path: Path) -> None:
    """sqlite3 errors never leave the store: a garbage file opens as StoreUnavailable."""
    (tmp_path / "junk.sqlite3").write_bytes(b"not a database at all" * 200)
    with pytest.raises(StoreUnavailable) as err:
        SQLiteBackend(tmp_path).open("junk", False)
    assert "junk" not in err.value.message and str(tmp_path) not in err.value.message


def _files_open(path: Path) -> int:
    """How many of this process's file descriptors are open on ``path`` (Linux)."""
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == str(path.resolve()))


def test_a_store_that_cannot_be_opened_keeps_no_connection(tmp_path: Path) -> None:
    """A garbage file, and a database whose schema the migrations cannot take,
    are refused with their SQLite connection closed, not left to the garbage
    collector: the error's traceback (kept here by ``err``) holds the frames
    that made it."""
    (tmp_path / "junk.sqlite3").write_bytes(b"not a database at all" * 200)
    foreign = sqlite3.connect(tmp_path / "foreign.sqlite3")
    foreign.execute("CREATE TABLE short (x)")  # what the first migration creates
    foreign.close()
    for name in ("junk", "foreign"):
        with pytest.raises(StoreUnavailable) as err:
            SQLiteBackend(tmp_path).open(name, False)
        # The driver's error stays chained (as cause or context), and so its frames.
        assert (err.value.__cause__ or err.value.__context__) is not None
        assert _files_open(tmp_path / f"{name}.sqlite3") == 0, name


def test_storage_settings_pick_sqlite_and_its_synchronous(tmp_path: Path) -> None:
    """storage.sqlite.synchronous reaches the pragma; the old storage.synchronous still does."""
    for storage in (
        StorageSettings(sqlite=SqliteSettings(synchronous="NORMAL")),
        StorageSettings.model_validate({"synchronous": "NORMAL"}),
    ):
        backend = open_backend(storage, tmp_path)
        assert isinstance(backend, SQLiteBackend)
        store = backend.open("sync", True)
        assert store._db.writer.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        store.close()


def test_delete_removes_every_file_of_the_store(tmp_path: Path) -> None:
    """Backend.delete leaves no file of the store behind (database, WAL, lock)."""
    backend = SQLiteBackend(tmp_path)
    store = backend.open("gone", True)
    assert store.try_lock_consolidation()
    store.unlock_consolidation()
    store.close()
    assert backend.delete("gone")
    assert list(tmp_path.iterdir()) == []
