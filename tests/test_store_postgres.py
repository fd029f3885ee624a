"""What only the PostgreSQL backend has: stores sharing a database, its settings, its extra.

Every store's rows live in the same tables keyed by store: nothing written
to one store is seen, counted, searched, locked or deleted through another,
even with the very same record ids. The contract suite (``store_contract``)
covers the rest of the protocol on this backend.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from conftest import LiveServer
from halls.config import StorageSettings
from halls.errors import StoreUnavailable
from halls.models import Brief, ForgetFlag, SearchFilter, new_id
from halls.store import Backend, open_backend
from halls.store.registry import StoreRegistry
from http_helpers import assert_error
from store_contract import ALL, T0, at, axis, fact, journal, loop, short, text_ids, vec_ids
from test_cli import assert_one_line_error, clean_env, run


@pytest.fixture
def backend(pg_dsn: str, tmp_path: Path) -> Iterator[Backend]:
    b = open_backend(StorageSettings(backend="postgres", dsn=pg_dsn), tmp_path)
    yield b
    b.close()


def test_stores_in_one_database_are_isolated(backend: Backend) -> None:
    """Two stores, the same ids in both: reads, searches, counts, runs, locks and
    deletion each touch one store only."""
    a, b = backend.open("iso-a", True), backend.open("iso-b", True)
    try:
        e = short("the shared walrus entry")
        lp, f, j = loop("walrus loop"), fact("walrus fact"), journal("walrus journal")
        for s, v in ((a, axis(0)), (b, axis(1))):
            s.add_short([e], np.stack([v]))  # the same id in both stores
            s.set_meta("embedder", s.name)
        a.add_loop(lp, axis(2))
        a.add_fact(f, axis(3))
        a.add_journal([j])
        a.add_brief(Brief(id=new_id("brief"), summary="walrus", created_at=at(0)))
        a.add_flag(ForgetFlag(id=new_id("flag"), fact_id=f.id, reason="r", created_at=at(0)))
        assert b.counts() == {
            "short": 1, "near": 0, "long": 0, "journal": 0, "briefs": 0, "forget_flags": 0,
        }  # fmt: skip
        assert a.get_meta("embedder") == "iso-a" and b.get_meta("embedder") == "iso-b"
        assert text_ids(b, ["walrus"]) == [e.id] and len(text_ids(a, ["walrus"])) == 3
        assert b.term_counts(["walrus"]) == (1, {"walrus": 1})
        assert np.allclose(b.vectors([e.id])[e.id], axis(1))
        assert vec_ids(b, axis(2)) == [e.id]
        assert b.get_records([lp.id, f.id]) == {} and b.list_journal(10, 0) == []
        assert b.list_briefs(10, 0) == [] and b.list_flags(None) == []
        assert a.try_lock_consolidation()
        try:
            assert not b.consolidation_locked() and b.try_lock_consolidation()
            b.unlock_consolidation()
        finally:
            a.unlock_consolidation()
        assert b.delete_short(e.id)
        assert a.get_short(e.id) == e and vec_ids(a, axis(0), limit=1) == [e.id]
        b.add_short([e], np.stack([axis(1)]))
        a.purge([], [], [], ["walrus"], [])
        assert a.counts()["short"] == 0 and b.get_short(e.id) == e
    finally:
        a.close()
        b.close()
    assert backend.delete("iso-a")
    c = backend.open("iso-b", False)
    try:
        assert c.get_short(e.id) == e and text_ids(c, ["walrus"]) == [e.id]
        assert c.vector_search(axis(1), SearchFilter(), 5)[0].id == e.id
        assert c.text_search(["walrus"], ALL, 5)[0].id == e.id
    finally:
        c.close()
    assert backend.names().count("iso-b") == 1 and "iso-a" not in backend.names()


def test_postgres_needs_a_dsn() -> None:
    """backend: postgres without storage.dsn is refused, naming the setting."""
    with pytest.raises(ValidationError, match="storage.dsn"):
        StorageSettings(backend="postgres")


def test_missing_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without the [postgres] extra, opening the backend says which extra to install."""
    for name in [m for m in sys.modules if m.startswith("halls.store.postgres")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "psycopg", None)  # an import of it now fails
    settings = StorageSettings(backend="postgres", dsn="postgresql://u@127.0.0.1:1/x")
    with pytest.raises(StoreUnavailable, match=r"pip install 'halls\[postgres\]'"):
        open_backend(settings, tmp_path)


def test_unreachable_server_is_store_unavailable(tmp_path: Path) -> None:
    """A DSN nothing answers is a StoreUnavailable naming storage.dsn, not a driver error."""
    from conftest import free_port

    settings = StorageSettings(
        backend="postgres", dsn=f"postgresql://u@127.0.0.1:{free_port()}/x?connect_timeout=2"
    )
    with pytest.raises(StoreUnavailable, match="storage.dsn"):
        open_backend(settings, tmp_path)


def test_a_store_deleted_by_another_process_refuses_writes(
    backend: Backend, pg_dsn: str, tmp_path: Path
) -> None:
    """A handle left open on a store another process deleted reads nothing and
    writes nothing: a write is StoreNotFound, not rows nobody can reach."""
    from halls.errors import StoreNotFound

    stale = backend.open("gone-soon", True)
    try:
        stale.add_short([short("before the delete")], np.stack([axis(0)]))
        other = open_backend(StorageSettings(backend="postgres", dsn=pg_dsn), tmp_path)
        try:
            assert other.delete("gone-soon")
        finally:
            other.close()
        with pytest.raises(StoreNotFound):
            stale.add_short([short("after the delete")], np.stack([axis(1)]))
        with pytest.raises(StoreNotFound):
            stale.set_meta("embedder", "x")
        assert text_ids(stale, ["delete"]) == [] and vec_ids(stale, axis(0)) == []
        assert stale.counts()["short"] == 0
    finally:
        stale.close()


def test_reinforcement_pins_and_categories_stay_in_their_store(backend: Backend) -> None:
    """Recalls, pins, categories and short-term edits through one store (same ids
    in both) leave the other's untouched; its category filter sees its own facts."""
    a, b = backend.open("keep-a", True), backend.open("keep-b", True)
    try:
        f = fact("the walrus decided on tea")
        e = short("the walrus note")
        for s, v in ((a, axis(0)), (b, axis(1))):
            s.add_short([e], np.stack([v]))
        a.add_fact(f.model_copy(update={"category": "decision", "pinned": True}), axis(2))
        b.add_fact(f.model_copy(update={"category": "preference"}), axis(3))
        a.reinforce({f.id: (3, T0 + 5), e.id: (1, T0 + 6)})
        assert set(a.retention([f.id, e.id])) == {f.id, e.id}
        assert b.retention([f.id, e.id]) == {}
        assert a.get_fact(f.id).pinned and not b.get_fact(f.id).pinned  # type: ignore[union-attr]
        assert [x.id for x in a.list_facts(None, 10, 0, "decision")] == [f.id]
        assert b.list_facts(None, 10, 0, "decision") == []
        only = SearchFilter(tiers=("long",), category="decision")
        assert [m.id for m in a.text_search(["walrus"], only, 5)] == [f.id]
        assert b.text_search(["walrus"], only, 5) == []
        assert b.vector_search(axis(3), only, 5) == []
        edited = e.model_copy(update={"content": "the walrus note, rewritten"})
        assert a.update_short(edited, axis(4))
        assert b.get_short(e.id) == e and text_ids(b, ["rewritten"]) == []
        assert text_ids(a, ["rewritten"]) == [e.id]
        assert a.retention([e.id])[e.id].access_count == 1  # kept through the edit
    finally:
        a.close()
        b.close()


def test_an_encryption_key_is_refused_with_postgres(tmp_path: Path) -> None:
    """Encryption at rest is SQLite's (SQLCipher): with backend postgres a key is a
    clear configuration error (the CLI and `halls serve` refuse in one line), never
    silently ignored."""
    with pytest.raises(ValidationError, match="encrypts SQLite store files only"):
        StorageSettings(backend="postgres", dsn="postgresql://u@h/x", encryption_key="k")
    env = clean_env(
        HALLS_STORAGE__BACKEND="postgres",
        HALLS_STORAGE__DSN="postgresql://u@127.0.0.1:1/x",
        HALLS_STORAGE__ENCRYPTION_KEY="a secret key",
    )
    r = run("serve", "--data-dir", str(tmp_path / "d"), "--port", "1", env=env)
    assert r.returncode != 0
    assert_one_line_error(r.stderr)
    assert "encrypts SQLite store files only" in r.stderr and "a secret key" not in r.stderr


def test_backup_on_postgres_says_to_use_export(
    pg_live_server: LiveServer, pg_dsn: str, tmp_path: Path
) -> None:
    """POST /backup and `halls backup` on PostgreSQL: a 400 / one-line CLI error
    pointing to export and pg_dump, no file written; export itself works."""
    c = pg_live_server.client()
    p = {"store": "pg-backup"}
    assert c.post("/short", params=p, json={"content": "the walrus backup note"}).status_code == 201
    err = assert_error(c.post("/backup", params=p), 400, "invalid_input")
    assert "export" in err["message"] and "pg_dump" in err["message"]
    r = c.post("/export", params=p)
    assert r.status_code == 200 and b"the walrus backup note" in r.content
    out = tmp_path / "copy.db"
    env = clean_env(HALLS_STORAGE__BACKEND="postgres", HALLS_STORAGE__DSN=pg_dsn)
    r2 = run("backup", "--data-dir", str(tmp_path / "d"), "--store", "pg-backup", "--out",
             str(out), env=env)  # fmt: skip
    assert r2.returncode == 1 and not out.exists()
    assert_one_line_error(r2.stderr)
    assert "pg_dump" in r2.stderr


def test_closing_idle_stores_keeps_the_process_pool(backend: Backend) -> None:
    """storage.max_open_stores on PostgreSQL: with room for one open store, using
    three in turn closes the idle ones (their mirrors), never the backend's pool;
    a closed store reopens on use with everything it held."""
    registry = StoreRegistry(backend, max_open=1)
    names = ["lru-a", "lru-b", "lru-c"]
    for n, name in enumerate(names):
        s, _ = registry.open(name, True)
        s.add_short([short(f"the walrus of {name}")], np.stack([axis(n)]))
    assert registry._open.keys() == {"lru-c"}  # the other two were closed
    for n, name in enumerate(names):
        s, _ = registry.open(name, False)
        assert text_ids(s, [name]) and vec_ids(s, axis(n), limit=1) == text_ids(s, [name])
    assert set(names) <= set(backend.names())  # the pool still serves the backend itself


def test_journal_written_before_tokens_is_tokenised_on_first_search(
    backend: Backend, pg_dsn: str
) -> None:
    """Events from before journal search (tokens NULL) are found by the store's next
    journal search, and the journal of another store stays apart."""
    import psycopg

    a, b = backend.open("jt-a", True), backend.open("jt-b", True)
    old, private = journal("the lighthouse keeper retired"), journal("lighthouse vault code")
    a.add_journal([old, private.model_copy(update={"visibility": "private"})])
    b.add_journal([journal("lighthouse in the other store")])
    with psycopg.connect(pg_dsn, autocommit=True) as db:
        db.execute(
            "UPDATE halls.journal SET tokens = NULL WHERE id = ANY(%s)", ([old.id, private.id],)
        )
    assert [m.id for m in a.journal_search(["lighthouse"], ALL, 10)] == [old.id]
    with psycopg.connect(pg_dsn, autocommit=True) as db:
        left = db.execute(
            "SELECT count(*) FROM halls.journal WHERE id = ANY(%s) AND tokens IS NULL",
            ([old.id, private.id],),
        ).fetchone()
    assert left == (0,)
