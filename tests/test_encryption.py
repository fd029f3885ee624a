"""Encryption at rest: storage.encryption_key (SQLCipher, the halls[encryption] extra)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clock_server import DAY, FakeClock
from conftest import REPO, start_server
from halls import Memory, Settings
from halls.errors import EncryptionError
from halls.models import NewJournal
from test_consolidate_http import PATHS

pytest.importorskip("sqlcipher3", reason="the halls[encryption] extra (installed by make test)")

KEY = "correct horse battery staple"
SHORT = [
    "the spare key to the boathouse is under the blue heron statue",
    "Marguerite's allergy: she reacts badly to cashews and pistachios",
]
JOURNAL = "user: remind me that the quarterly invoice goes to Zebulon Okafor"
LOOP = "send the signed lease to the landlord in Quillon Street"
WORDS = ["boathouse", "heron", "Marguerite", "pistachios", "Zebulon", "Quillon", "absolute paths"]


def _memory(data: Path, embedder: Any, key: str | None, clock: FakeClock | None = None) -> Memory:
    storage = {"encryption_key": key} if key is not None else {}
    settings = Settings(data_dir=data, storage=storage, consolidator={"mode": "external"})
    return Memory(settings, embedder=embedder, clock=clock or FakeClock())


def _fill(m: Memory, clock: FakeClock) -> None:
    for text in SHORT:
        m.remember(text)
    m.journal([NewJournal(content=JOURNAL, role="user")])
    m.add_loop(LOOP)
    for days_ago, text in enumerate(PATHS):  # three days: a run promotes one long-term fact
        m.remember(text, occurred_at=clock() - (3 - days_ago) * DAY)
    run = m.consolidate()
    assert run.counts.get("promote") == 1, run.counts


def _files(data: Path) -> dict[str, bytes]:
    """Every file of the data dir (database, WAL, shared memory, lock)."""
    return {p.name: p.read_bytes() for p in sorted(data.iterdir()) if p.is_file()}


def _leaks(data: Path) -> list[str]:
    found = []
    for name, content in _files(data).items():
        for word in WORDS:
            for form in (word.encode(), word.encode("utf-16-le")):
                if form in content:
                    found.append(f"{word} in {name}")
    return found


def _digest(data: Path) -> dict[str, str]:
    return {n: hashlib.sha256(b).hexdigest() for n, b in _files(data).items()}


def test_plain_store_leaks_the_text_the_check_looks_for(tmp_path: Path, embedder) -> None:
    """Control: without a key the same memories are in the files, so the check below can fail."""
    data, clock = tmp_path / "data", FakeClock()
    with _memory(data, embedder, None, clock) as m:
        _fill(m, clock)
        assert len(_leaks(data)) >= len(WORDS) - 1  # the WAL may hold what the db does not yet


def test_encrypted_store_holds_no_plaintext_and_refuses_a_wrong_key(tmp_path: Path, embedder):
    """No word of a memory in any file (db, WAL), while open and after; wrong key: clear
    error and not a byte changed; right key: everything back and searchable."""
    data, clock = tmp_path / "data", FakeClock()
    m = _memory(data, embedder, KEY, clock)
    _fill(m, clock)
    assert (data / "default.sqlite3-wal").exists()
    assert _leaks(data) == []  # open: the WAL holds the latest pages
    before = {"short": len(m.list_short(limit=100)), "long": len(m.list_long(limit=100))}
    m.close()
    assert _leaks(data) == []
    assert not (data / "default.sqlite3").read_bytes().startswith(b"SQLite format 3")

    closed = _digest(data)
    for wrong in ("correct horse battery stapler", None):
        with _memory(data, embedder, wrong) as bad:
            with pytest.raises(EncryptionError) as err:
                bad.list_short()
            assert KEY not in err.value.message and str(data) not in err.value.message
            with pytest.raises(EncryptionError):
                bad.open_stores()
        assert _digest(data) == closed, "a refused open changed the files"
    assert "wrong" in _error(data, embedder, "another key")
    assert "encrypted" in _error(data, embedder, None)

    with _memory(data, embedder, KEY) as m:
        m.open_stores()
        shorts = {e.content for e in m.list_short(limit=100)}
        assert set(SHORT) | set(PATHS) <= shorts and len(shorts) == before["short"]
        assert len(m.list_long(limit=100)) == before["long"] == 1
        assert [e.content for e in m.list_journal()] == [JOURNAL]
        assert [loop.intent for loop in m.list_loops()] == [LOOP]
        hits = m.search("where is the boathouse key hidden?", reinforce=False)
        assert hits[0].content == SHORT[0]
        hits = m.search("which nuts is Marguerite allergic to", reinforce=False)
        assert hits[0].content == SHORT[1]


def _error(data: Path, embedder: Any, key: str | None) -> str:
    with _memory(data, embedder, key) as m, pytest.raises(EncryptionError) as err:
        m.list_short()
    return err.value.message


def test_a_plain_store_with_a_key_is_refused_and_left_plain(tmp_path: Path, embedder) -> None:
    """A key does not silently re-encrypt (or break) an existing plain store."""
    data = tmp_path / "data"
    with _memory(data, embedder, None) as m:
        m.remember(SHORT[0])
    before = _digest(data)
    assert "not encrypted" in _error(data, embedder, KEY)
    assert _digest(data) == before
    with _memory(data, embedder, None) as m:
        assert [e.content for e in m.list_short()] == [SHORT[0]]


def test_the_file_is_standard_sqlcipher_4(tmp_path: Path, embedder) -> None:
    """halls derives the key once per store; the file still opens with the passphrase alone."""
    from sqlcipher3 import dbapi2

    data = tmp_path / "data"
    with _memory(data, embedder, KEY) as m:
        m.remember(SHORT[0])
    db = dbapi2.connect(str(data / "default.sqlite3"))
    db.execute("PRAGMA key = '{}'".format(KEY.replace("'", "''")))
    assert db.execute("SELECT content FROM short").fetchall() == [(SHORT[0],)]
    db.close()


def test_a_key_without_the_extra_is_a_clear_error(tmp_path: Path) -> None:
    """With sqlcipher3 not importable, a key is refused with the extra to install."""
    code = (
        "import sys; sys.modules['sqlcipher3'] = None\n"
        "from halls import Memory, Settings\n"
        "from halls.errors import EncryptionError\n"
        f"m = Memory(Settings(data_dir={str(tmp_path)!r}, storage={{'encryption_key': 'k'}}))\n"
        "try:\n    m.stores(); m.create_store('default')\n"
        "except EncryptionError as e:\n    print(e.message)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "pip install 'halls[encryption]'" in out.stdout


def test_serve_with_a_wrong_key_exits_with_one_line(tmp_path: Path, embedder) -> None:
    """`halls serve` refuses to start on a wrong key: one line, no traceback, no key."""
    data = tmp_path / "data"
    with _memory(data, embedder, KEY) as m:
        m.remember(SHORT[0], store="other")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    env["HALLS_STORAGE__ENCRYPTION_KEY"] = "not the key"
    out = subprocess.run(
        [sys.executable, "-m", "halls", "serve", "--data-dir", str(data), "--port", "1"],
        capture_output=True, text=True, env=env, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "Error: store 'other': the store cannot be decrypted: storage.encryption_key is wrong"
    ]
    assert "Traceback" not in out.stdout + out.stderr


def test_live_server_with_the_key_never_shows_it(tmp_path: Path) -> None:
    """Over HTTP with the right key: writes and searches work; the key is in no answer or log."""
    data = tmp_path / "data"
    live = start_server(data, env={"HALLS_STORAGE__ENCRYPTION_KEY": KEY})
    try:
        c = live.client()
        for text in SHORT:
            assert c.post("/short", json={"content": text}).status_code == 201
        hits = c.post("/search", json={"query": "boathouse key", "reinforce": False}).json()
        assert hits["results"][0]["content"] == SHORT[0]
        answers = [c.get(path).text for path in ("/stats", "/stores", "/healthz")]
        assert all(KEY not in a for a in answers)
        assert _leaks(data) == []
    finally:
        live.stop()
    assert KEY not in live.log()
