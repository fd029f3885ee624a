"""Every delete path leaves no byte of what it deleted in the data directory's files.

One test per path (short, near, journal, long, forget flag, forget-about, a whole
store): a record carrying a unique marker is written and deleted through a live
server, the server is shut down, and every file left in the data directory
(the WAL and shared-memory files too, if any) is read for the marker, its
first and its last 16 bytes, in any case: a full-text index keeps terms
lowercased and prefix-compressed, so a leftover can be a word's tail alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from halls.config import StorageSettings
from halls.store import open_backend
from http_helpers import created

pytestmark = pytest.mark.slow  # a server start and stop per path

ADMIN = "files-admin-token-0123456789"
KEY = "files-encryption-passphrase"
S = {"store": "s"}


def _marker() -> str:
    # One alphanumeric token (one full-text term), ending in digits so that
    # stemming leaves it whole, unique to the test.
    return f"qz{uuid.uuid4().hex}77"


def _pieces(marker: str) -> list[bytes]:
    return [p.encode() for p in (marker, marker[:16], marker[-16:])]


def _files_holding(data: Path, marker: str) -> dict[str, list[int]]:
    """File name -> which pieces of ``marker`` it holds (any case)."""
    found: dict[str, list[int]] = {}
    for path in data.rglob("*"):
        if path.is_file():
            raw = path.read_bytes().lower()
            hits = [n for n, piece in enumerate(_pieces(marker)) if piece in raw]
            if hits:
                found[path.name] = hits
    return found


def _fact(c: httpx.Client, content: str) -> str:
    created(c, "/short", "s", {"content": content, "pinned": True})
    r = c.post("/consolidate/run", params=S, json={"dry_run": False})
    assert r.status_code == 201, r.text
    [fid] = [a["target_id"] for a in r.json()["actions"] if a["kind"] == "promote"]
    return str(fid)


def _short(c: httpx.Client, m: str) -> None:
    e = created(c, "/short", "s", {"content": f"the locker combination word is {m}"})
    assert c.delete(f"/short/{e['id']}", params=S).status_code == 204


def _near(c: httpx.Client, m: str) -> None:
    loop = created(c, "/near", "s", {"intent": f"ask the landlord about {m}"})
    assert c.delete(f"/near/{loop['id']}", params=S).status_code == 204


def _journal(c: httpx.Client, m: str) -> None:
    ev = created(c, "/journal", "s", {"content": f"user: my nickname is {m}", "role": "user"})
    assert c.delete(f"/journal/{ev['id']}", params=S).status_code == 204


def _long(c: httpx.Client, m: str) -> None:
    fid = _fact(c, f"The user's childhood friend was called {m}")
    assert c.delete(f"/long/{fid}", params=S).status_code == 204


def _flag(c: httpx.Client, m: str) -> None:
    fid = _fact(c, f"The user's maiden name is {m}")
    r = c.post(f"/long/{fid}/forget", params=S, json={"reason": "that is my personal data"})
    assert r.status_code == 202, r.text
    r = c.post("/consolidate/run", params=S, json={"dry_run": False})
    assert r.status_code == 201, r.text
    assert [a["kind"] for a in r.json()["actions"]] == ["purge"], r.text


def _forget_about(c: httpx.Client, m: str) -> None:
    created(c, "/short", "s", {"content": f"met {m} at the station"})
    created(c, "/near", "s", {"intent": f"call {m} back"})
    created(c, "/journal", "s", {"content": f"user: {m} phoned again"})
    r = c.post("/forget-about", params=S, json={"subject": m, "dry_run": False})
    assert r.status_code == 200 and len(r.json()["found"]) == 3, r.text


def _store(c: httpx.Client, m: str) -> None:
    created(c, "/short", "doomed", {"content": f"the doomed store's word is {m}"})
    created(c, "/journal", "doomed", {"content": f"user: {m}"})
    assert c.delete("/stores/doomed").status_code == 204


PATHS: dict[str, Callable[[httpx.Client, str], None]] = {
    "short": _short,
    "near": _near,
    "journal": _journal,
    "long": _long,
    "forget-flag": _flag,
    "forget-about": _forget_about,
    "store": _store,
}


@pytest.mark.parametrize("path", list(PATHS))
def test_deleted_marker_is_in_no_file_after_shutdown(server_factory: Any, path: str) -> None:
    """Written, seen in the files, deleted over HTTP, server stopped: no piece of it is left."""
    live = server_factory(env={"HALLS_SERVER__BEARER_TOKEN": ADMIN})
    c = live.client()
    # A record that stays, so that the store's files outlive the deletion.
    created(c, "/short", "s", {"content": "the printer on floor two is broken"})
    probe = _marker()
    created(c, "/short", "s", {"content": f"a probe that stays: {probe}"})
    assert _files_holding(live.data_dir, probe)  # the search below can find a marker
    m = _marker()
    PATHS[path](c, m)
    live.stop()
    assert _files_holding(live.data_dir, probe), "the kept record must still be on disk"
    assert _files_holding(live.data_dir, m) == {}


@pytest.mark.parametrize("path", ["short", "near"])
def test_encrypted_store_keeps_no_row_of_a_deleted_marker(server_factory: Any, path: str) -> None:
    """SQLCipher: the files are ciphertext, so the decrypted rows (FTS5 shadow tables too) count."""
    env = {"HALLS_SERVER__BEARER_TOKEN": ADMIN, "HALLS_STORAGE__ENCRYPTION_KEY": KEY}
    live = server_factory(env=env)
    c = live.client()
    probe, m = _marker(), _marker()
    created(c, "/short", "s", {"content": f"a probe that stays: {probe}"})
    PATHS[path](c, m)
    live.stop()
    assert _files_holding(live.data_dir, probe) == {}  # encrypted: no plain text in a file
    backend = open_backend(StorageSettings(encryption_key=KEY), live.data_dir)
    store = backend.open("s", False)
    try:
        assert store.holds(probe[-16:])  # the check below can find a term's tail
        assert not any(store.holds(piece.decode()) for piece in _pieces(m))
    finally:
        store.close()
        backend.close()
