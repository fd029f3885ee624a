"""``halls export``, ``halls import`` and ``halls backup`` on the command line,
and the online backup taken while a live server is taking writes."""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from halls import Memory, Settings
from halls.models import NewJournal
from test_cli import assert_one_line_error, clean_env, invoke, run

PASS = "a long and private passphrase"


@pytest.fixture
def data(tmp_path: Path, embedder: Any) -> Path:
    """A data directory with a store 's' holding a little of everything."""
    d = tmp_path / "data"
    with Memory(Settings(data_dir=d), embedder=embedder) as m:
        m.remember("The staging server lives in Frankfurt", store="s", topic="infra")
        m.remember("Backups run every night at two", store="s")
        m.add_loop("Renew the TLS certificate", store="s")
        m.journal([NewJournal(content="user: remember the Frankfurt server")], store="s")
        m.submit_brief("Talked about infrastructure", store="s")
    return d


def ids(d: Path, store: str, embedder: Any) -> list[str]:
    with Memory(Settings(data_dir=d), embedder=embedder) as m:
        hits = m.search("where is the staging server?", store=store, reinforce=False)
        return [h.id for h in hits]


def test_export_import_round_trip_encrypted_via_env(
    data: Path, tmp_path: Path, embedder: Any
) -> None:
    """The passphrase from HALLS_PASSPHRASE; export refuses to replace a file; import
    refuses a store with records unless --overwrite; a dry run writes nothing."""
    out = tmp_path / "s.halls"
    env = clean_env(HALLS_PASSPHRASE=PASS)
    r = run(
        "export", "--data-dir", str(data), "--store", "s", "--out", str(out), "--encrypt", env=env
    )
    assert r.returncode == 0, r.stderr
    # 5 records and 1 edge: the first entry mentions Frankfurt (a graph edge).
    assert "exported 6 records of 's' to encrypted" in r.stdout
    assert b"Frankfurt" not in out.read_bytes()

    r = run("export", "--data-dir", str(data), "--store", "s", "--out", str(out), env=env)
    assert r.returncode == 1 and "--overwrite" in r.stderr
    assert_one_line_error(r.stderr)

    res = invoke("import", "--data-dir", str(data), "--store", "t", "--in", str(out), "--dry-run",
                 env={"HALLS_PASSPHRASE": PASS})  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "would add 6 records to 't'" in res.output
    assert "t" not in Memory(Settings(data_dir=data), embedder=embedder).stores()

    res = invoke("import", "--data-dir", str(data), "--store", "t", "--in", str(out),
                 env={"HALLS_PASSPHRASE": PASS})  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "added 6 records to 't', replaced 0, kept 0" in res.output
    assert ids(data, "t", embedder) == ids(data, "s", embedder) != []

    r = run("import", "--data-dir", str(data), "--store", "t", "--in", str(out), env=env)
    assert r.returncode == 1 and "--overwrite" in r.stderr
    assert_one_line_error(r.stderr)
    res = invoke("import", "--data-dir", str(data), "--store", "t", "--in", str(out),
                 "--overwrite", env={"HALLS_PASSPHRASE": PASS})  # fmt: skip
    assert res.exit_code == 0 and "added 0 records to 't', replaced 0, kept 6" in res.output


def test_import_with_a_wrong_passphrase_or_a_flipped_byte_changes_nothing(
    data: Path, tmp_path: Path, embedder: Any
) -> None:
    out = tmp_path / "s.halls"
    res = invoke("export", "--data-dir", str(data), "--store", "s", "--out", str(out),
                 "--encrypt", env={"HALLS_PASSPHRASE": PASS})  # fmt: skip
    assert res.exit_code == 0, res.output
    r = run("import", "--data-dir", str(data), "--store", "u", "--in", str(out),
            env=clean_env(HALLS_PASSPHRASE="guess"))  # fmt: skip
    assert r.returncode == 1 and "wrong passphrase" in r.stderr
    assert_one_line_error(r.stderr)
    flipped = bytearray(out.read_bytes())
    flipped[len(flipped) // 2] ^= 0x80
    bad = tmp_path / "bad.halls"
    bad.write_bytes(bytes(flipped))
    res = invoke("import", "--data-dir", str(data), "--store", "u", "--in", str(bad),
                 env={"HALLS_PASSPHRASE": PASS})  # fmt: skip
    assert res.exit_code == 1 and "modified or damaged" in res.output
    assert "u" not in Memory(Settings(data_dir=data), embedder=embedder).stores()

    plain = tmp_path / "plain.halls"
    assert (
        invoke("export", "--data-dir", str(data), "--store", "s", "--out", str(plain)).exit_code
        == 0
    )
    assert b"Frankfurt" in plain.read_bytes()
    flipped = bytearray(plain.read_bytes())
    flipped[plain.read_bytes().index(b"Frankfurt")] ^= 0x01
    bad.write_bytes(bytes(flipped))
    res = invoke("import", "--data-dir", str(data), "--store", "u", "--in", str(bad))
    assert res.exit_code == 1 and "checksum does not match" in res.output
    assert "u" not in Memory(Settings(data_dir=data), embedder=embedder).stores()


def test_backup_is_consistent_while_a_live_server_takes_writes(
    server_factory: Any, tmp_path: Path, embedder: Any
) -> None:
    """`halls backup` (another process) and POST /backup, while a writer keeps adding
    entries: each copy passes integrity_check, holds every entry acknowledged before
    it started, and opens as a working store."""
    live = server_factory()
    c = live.client()
    p = {"store": "busy"}
    for i in range(20):
        assert c.post("/short", params=p, json={"content": f"seed note {i}"}).status_code == 201
    acked: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        with httpx.Client(base_url=live.url, timeout=60) as w:
            n = 0
            deadline = time.monotonic() + 120
            while not stop.is_set() and time.monotonic() < deadline:
                r = w.post("/short", params=p, json={"content": f"live write {n} about caching"})
                assert r.status_code == 201, r.text
                acked.append(r.json()["id"])
                n += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        while len(acked) < 10:
            time.sleep(0.05)
        before = list(acked)
        out = tmp_path / "copy" / "busy.sqlite3"
        r = run("backup", "--data-dir", str(live.data_dir), "--store", "busy", "--out", str(out))
        assert r.returncode == 0, r.stderr
        assert "backed up 'busy'" in r.stdout
        before_http = list(acked)
        got = c.post("/backup", params=p)
        assert got.status_code == 200, got.text
        assert got.headers["content-type"] == "application/vnd.sqlite3"
        (tmp_path / "http").mkdir()
        (tmp_path / "http" / "busy.sqlite3").write_bytes(got.content)
        while len(acked) < len(before_http) + 5:  # the writer went on meanwhile
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(60)

    for folder, must_hold in ((out.parent, before), (tmp_path / "http", before_http)):
        db = sqlite3.connect(folder / "busy.sqlite3")
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        held = {row[0] for row in db.execute("SELECT id FROM short")}
        db.close()
        assert set(must_hold) <= held and len(held) >= 20 + len(must_hold)
        with Memory(Settings(data_dir=folder), embedder=embedder) as m:
            hits = m.search("caching", store="busy", reinforce=False)
            assert hits and "caching" in hits[0].content

    r = run("backup", "--data-dir", str(live.data_dir), "--store", "busy", "--out", str(out))
    assert r.returncode == 1 and "--overwrite" in r.stderr
    r = run("backup", "--data-dir", str(live.data_dir), "--store", "nope", "--out",
            str(tmp_path / "x.sqlite3"))  # fmt: skip
    assert r.returncode == 1 and "no store named 'nope'" in r.stderr
    shutil.rmtree(tmp_path / "http")
