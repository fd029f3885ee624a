"""Deletion for good, online: DELETE /journal/{id}, /long/{id}, /stores/{name}, forget-about.

Each runs against a live server, and each proves itself as the PII purge
does: before, the content's bytes are in the data directory's files (so the
check can fail); after, they are in no file of it, the WAL included.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from halls.mcp import RemoteBackend
from http_helpers import assert_error, created, snapshot

ADMIN = "erase-admin-token-0123456789"
S = {"store": "s"}


def _bytes_in(data: Path, *needles: str) -> list[str]:
    """Files of the data directory holding any of ``needles`` (any case for ASCII)."""
    found = []
    for path in data.rglob("*"):
        if path.is_file():
            raw = path.read_bytes().lower()
            if any(n.lower().encode() in raw for n in needles):
                found.append(path.name)
    return found


@pytest.fixture
def live(server_factory):  # type: ignore[no-untyped-def]
    return server_factory(env={"HALLS_SERVER__BEARER_TOKEN": ADMIN})


def _fact(c: Any, content: str) -> str:
    """A long-term fact, made the only way there is: a pinned entry and a consolidation run."""
    created(c, "/short", "s", {"content": content, "pinned": True})
    r = c.post("/consolidate/run", params=S, json={"dry_run": False})
    assert r.status_code == 201, r.text
    [fid] = [a["target_id"] for a in r.json()["actions"] if a["kind"] == "promote"]
    return str(fid)


def test_delete_journal_event_removes_its_bytes(live) -> None:
    """DELETE /journal/{id}: 204, gone from the list and from every file; others stay."""
    c = live.client()
    secret = "call Ivo at 0176-555-01928 after nine"
    ev = created(c, "/journal", "s", {"content": secret, "role": "user"})
    other = created(c, "/journal", "s", {"content": "the weather was fine"})
    assert _bytes_in(live.data_dir, "0176-555-01928")  # the check below can fail
    r = c.delete(f"/journal/{ev['id']}", params=S)
    assert r.status_code == 204, r.text
    ids = [e["id"] for e in c.get("/journal", params=S).json()]
    assert ev["id"] not in ids and other["id"] in ids
    assert _bytes_in(live.data_dir, "0176-555-01928") == []
    assert_error(c.delete(f"/journal/{ev['id']}", params=S), 404, "not_found")
    assert_error(c.delete("/journal/s_01M82K7WMN2D176T9YZ74SVN63", params=S), 400, "invalid_input")


def test_delete_journal_event_leaves_no_word_in_the_journal_index(live) -> None:
    """DELETE /journal/{id}: not one of its words stays in the journal's full-text index
    (FTS5 keeps a deleted row's terms until its segments merge); the others stay found."""
    c = live.client()
    words = ("xylophonequartz", "zebrafinchpalace")
    ev = created(c, "/journal", "s", {"content": " and ".join(words), "visibility": "summary"})
    kept = created(c, "/journal", "s", {"content": "the aardvark keeps its burrow"})
    created(c, "/journal", "s", {"content": "another line about the aardvark"})
    assert _bytes_in(live.data_dir, *words)
    assert c.delete(f"/journal/{ev['id']}", params=S).status_code == 204
    assert _bytes_in(live.data_dir, *words, *(w[3:] for w in words)) == []
    r = c.post("/search", params=S, json={"query": "aardvark burrow", "tiers": ["journal"],
                                          "min_relevance": 0})  # fmt: skip
    assert r.json()["results"][0]["id"] == kept["id"]


def test_delete_fact_purges_it_and_its_sources(live) -> None:
    """DELETE /long/{id}: the fact, its source entry and their bytes are gone."""
    c = live.client()
    fid = _fact(c, "Marguerite Oyelaran was born on 3 March 1961")
    keep = _fact(c, "The build server lives in rack seven")
    assert _bytes_in(live.data_dir, "Oyelaran")
    r = c.delete(f"/long/{fid}", params=S)
    assert r.status_code == 204, r.text
    assert_error(c.get(f"/long/{fid}", params=S), 404, "not_found")
    assert c.get(f"/long/{keep}", params=S).status_code == 200
    assert all("Oyelaran" not in e["content"] for e in c.get("/short", params=S).json())
    assert "Oyelaran" not in c.get("/consolidate/runs", params=S).text
    assert _bytes_in(live.data_dir, "Oyelaran") == []


def test_delete_store_removes_every_file(live) -> None:
    """DELETE /stores/{name}: its files are gone, it is no longer listed, reads are 404."""
    c = live.client()
    created(c, "/short", "doomed", {"content": "Quillfeather is the doomed store's word"})
    created(c, "/short", "s", {"content": "a store that stays"})
    assert any(p.name.startswith("doomed.") for p in live.data_dir.iterdir())
    r = c.delete("/stores/doomed")
    assert r.status_code == 204, r.text
    assert not any(p.name.startswith("doomed") for p in live.data_dir.iterdir())
    assert "doomed" not in c.get("/stores").json()["stores"]
    assert_error(c.get("/stats", params={"store": "doomed"}), 404, "store_not_found")
    assert_error(c.delete("/stores/doomed"), 404, "not_found")
    assert_error(c.delete("/stores/Not.Valid"), 400, "invalid_store_name")
    # A traversal never reaches a store: the decoded slash leaves no route.
    assert_error(c.delete("/stores/..%2Fs"), 404, "not_found")
    assert (live.data_dir / "s.sqlite3").exists()
    assert _bytes_in(live.data_dir, "Quillfeather") == []
    assert c.get("/stats", params=S).json()["counts"]["short"] == 1


def test_forget_about_lists_then_purges_every_tier(live) -> None:
    """forget-about: the dry run lists each tier's record and changes nothing; then all go."""
    c = live.client()
    fid = _fact(c, "Ivanka Petrova prefers tea to coffee")
    short = created(c, "/short", "s", {"content": "Met IVANKA at the conference"})
    loop = created(c, "/near", "s", {"intent": "Send Ivanka the slides"})
    ev = created(c, "/journal", "s", {"content": "user: my friend ivanka petrova called"})
    created(c, "/brief", "s", {"summary": "Talked about Ivanka's visit", "promote_hints": []})
    keep = created(c, "/short", "s", {"content": "The printer on floor two is broken"})
    assert _bytes_in(live.data_dir, "ivanka")

    before = snapshot(c, "s")
    r = c.post("/forget-about", params=S, json={"subject": "ivanka"})
    assert r.status_code == 200, r.text
    dry = r.json()
    assert dry["dry_run"] is True
    listed = {(i["tier"], i["id"]) for i in dry["found"]}
    assert {
        ("long", fid),
        ("short", short["id"]),
        ("near", loop["id"]),
        ("journal", ev["id"]),
    } <= listed
    assert keep["id"] not in {i["id"] for i in dry["found"]}
    assert snapshot(c, "s") == before

    r = c.post("/forget-about", params=S, json={"subject": "ivanka", "dry_run": False})
    assert r.status_code == 200, r.text
    assert {(i["tier"], i["id"]) for i in r.json()["found"]} == listed
    assert c.get(f"/short/{keep['id']}", params=S).status_code == 200
    for path, got in (("/short", short["id"]), ("/near", loop["id"]), ("/long", fid)):
        assert_error(c.get(f"{path}/{got}", params=S), 404, "not_found")
    assert _bytes_in(live.data_dir, "ivanka") == []
    again = c.post("/forget-about", params=S, json={"subject": "Ivanka"}).json()
    assert again["found"] == [] and again["scrubbed"] == []


def test_forget_about_refuses_unclear_requests(live) -> None:
    """Both or neither of subject and query, or a one-letter subject: 4xx, nothing changed."""
    c = live.client()
    created(c, "/short", "s", {"content": "a memory about apples"})
    before = snapshot(c, "s")
    for body in ({}, {"subject": "apples", "query": "apples"}, {"subject": " a "}):
        r = c.post("/forget-about", params=S, json={**body, "dry_run": False})
        assert r.status_code in (400, 422), (body, r.text)
    assert snapshot(c, "s") == before


def test_cli_purge_and_forget_about_while_the_server_runs(live, tmp_path) -> None:
    """`halls purge` and `halls forget-about` work with the server up, through it."""
    c = live.client()
    ev = created(c, "/journal", "s", {"content": "Zebulon's door code is 4471"})
    created(c, "/short", "s", {"content": "Zebulon likes chess"})

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "halls", *args, "--server-url", live.url, "--token", ADMIN],
            capture_output=True,
            text=True,
            timeout=120,
        )

    # `halls mcp --server-url` goes the same way, through the server.
    remote = RemoteBackend(live.url, ADMIN)
    seen = remote.forget_about(store="s", subject="zebulon", query=None, dry_run=True)
    remote.close()
    assert len(seen["found"]) == 2 and seen["dry_run"]
    listed = cli("forget-about", "--subject", "zebulon", "--store", "s")
    assert listed.returncode == 0, listed.stderr
    assert "2 record(s) found; nothing changed" in listed.stdout
    done = cli("purge", "--id", ev["id"], "--store", "s", "--confirm")
    assert done.returncode == 0, done.stderr
    assert _bytes_in(live.data_dir, "door code is 4471") == []
    gone = cli("forget-about", "--subject", "zebulon", "--store", "s", "--confirm")
    assert gone.returncode == 0 and "purged 1 record(s)" in gone.stdout, gone.stdout
    assert _bytes_in(live.data_dir, "zebulon") == []
