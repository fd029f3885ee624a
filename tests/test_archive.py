"""Export and import over HTTP, end to end: a live in-process server, the real
embedding model, real SQLite files, and a fake clock (so that scores, which
decay with time, can be compared exactly before and after).

The round trip deletes the store's files between export and import, and
compares every record of every tier, with its edges, vectors and
reinforcement, read through the Store protocol, and the search results.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from clock_server import DAY, FakeClock, InProcessServer, serve
from halls import Memory, Settings
from halls.config import StorageSettings
from halls.models import SearchFilter
from halls.store import open_backend
from http_helpers import assert_error, snapshot

S = "mine"
PASS = "correct horse battery staple"
PATHS = [
    "Chad prefers absolute paths in configs",
    "Chad likes absolute paths in his config files",
    "In configs Chad prefers absolute paths",
]
QUERIES = [
    "how does Chad write paths in his configs?",
    "what did we say about the dentist",
    "hiking plans for the weekend",
    "which database does the project use",
]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_server(
    tmp_path: Path, embedder: Any, clock: FakeClock, storage: StorageSettings
) -> Iterator[Callable[..., InProcessServer]]:
    """In-process servers on tmp_path/data; each ``make()`` stops the previous one."""
    with ExitStack() as stack:
        current: list[ExitStack] = []

        def make() -> InProcessServer:
            for old in current:
                old.close()
            current.clear()
            inner = ExitStack()
            stack.push(inner)
            current.append(inner)
            settings = Settings(
                data_dir=tmp_path / "data", storage=storage, consolidator={"mode": "external"}
            )
            return inner.enter_context(serve(Memory(settings, embedder=embedder, clock=clock)))

        yield make


def ok(r: httpx.Response, status: int = 201) -> Any:
    assert r.status_code == status, r.text
    return r.json()


def populate(c: httpx.Client, clock: FakeClock) -> None:
    """A store with every kind of record and history: facts promoted, superseded and
    flagged, loops done and open, journal, briefs, runs, edges, reinforcement."""
    p = {"store": S}
    for text in PATHS:
        ok(c.post("/short", params=p, json={"content": text, "topic": "configs"}))
        clock.advance(DAY)
    notes = [
        "The project uses PostgreSQL 16 in production",
        "We plan a hiking trip to the Cairngorms next weekend",
        "The dentist appointment moved to Thursday",
        "Deploys happen on Tuesdays after the standup",
        "Lunch today was a sandwich",
    ]
    for text in notes:
        ok(c.post("/short", params=p, json={"content": text, "metadata": {"n": len(text)}}))
    ok(c.post("/near", params=p, json={"intent": "Ask how the dentist visit went"}))
    ok(c.post("/near", params=p, json={"intent": "Book the hiking hut", "topic": "hiking"}))
    ok(
        c.post(
            "/journal",
            params=p,
            json={"content": "I think we should try the Cairngorms", "role": "user"},
        )
    )
    ok(c.post("/consolidate/run", params=p))  # promotes the paths fact
    clock.advance(DAY)
    ok(
        c.post(
            "/short",
            params=p,
            json={"content": "Chad now prefers tildes like ~/src instead of absolute paths"},
        )
    )
    ok(
        c.post(
            "/brief",
            params=p,
            json={
                "summary": "Talked about the dentist and the hike",
                "completed_intents": ["asked how the dentist visit went"],
                "noise": ["lunch"],
            },
        )
    )
    clock.advance(DAY)
    ok(c.post("/consolidate/run", params=p))  # supersedes, completes a loop
    facts = ok(c.get("/long", params={**p, "status": "active"}), 200)
    ok(c.post(f"/long/{facts[0]['id']}/forget", params=p, json={"reason": "test flag"}), 202)
    for q in QUERIES:  # uses (hits opened by id): reinforcement the archive must keep
        found = ok(c.post("/search", params=p, json={"query": q, "min_relevance": 0}), 200)
        for h in found["results"][:3]:
            ok(c.get(f"/{h['tier']}/{h['id']}", params=p), 200)


def searches(c: httpx.Client) -> list[list[tuple[str, float, Any]]]:
    out = []
    for q in QUERIES:
        for superseded in (False, True):
            body = {
                "query": q,
                "n_results": 20,
                "reinforce": False,
                "include_superseded": superseded,
            }
            hits = ok(c.post("/search", params={"store": S}, json=body), 200)["results"]
            out.append([(h["id"], h["score"], h["score_detail"]) for h in hits])
    return out


def dump(data_dir: Path, name: str = S, storage: StorageSettings | None = None) -> dict[str, Any]:
    """Everything the store holds, read through the Store protocol."""
    backend = open_backend(storage or StorageSettings(), data_dir)
    s = backend.open(name, False)
    try:
        short = s.list_short(1000, 0)
        loops = s.list_loops(None, 1000, 0)
        facts = s.list_facts(None, 1000, 0)
        ids = [r.id for r in (*short, *loops, *facts)]
        entries, into, _ = s.short_for_consolidation()
        journal = s.journal_since(None)
        runs = s.list_runs(1000, 0)
        written = s.neighbours(ids, 0, SearchFilter(include_superseded=True))
        return {
            "short": short,
            "into": dict(zip([e.id for e in entries], into, strict=True)),
            "loops": loops,
            "facts": facts,
            "journal": journal,
            "briefs": s.briefs_since(None),
            "flags": s.list_flags(None),
            "runs": [(r, [a.undo for a in r.actions]) for r in runs],
            "edges": s.edges(ids + [e.id for e in journal]),
            "retention": s.retention(ids),
            "vectors": {i: v.tolist() for i, v in s.vectors(ids).items()},
            # Write order (not the numbers: a deletion leaves gaps an import closes).
            "order": [w.id for w in sorted(written, key=lambda w: w.seq)],
            "counts": s.counts(),
            "embedder": s.get_meta("embedder"),
        }
    finally:
        s.close()
        backend.close()


def delete_store(data_dir: Path, name: str = S, storage: StorageSettings | None = None) -> None:
    backend = open_backend(storage or StorageSettings(), data_dir)
    assert backend.delete(name)  # type: ignore[attr-defined]
    backend.close()


def export(c: httpx.Client, passphrase: str | None = None, store: str = S) -> bytes:
    body = {"passphrase": passphrase} if passphrase else None
    r = c.post("/export", params={"store": store}, json=body)
    assert r.status_code == 200, r.text
    return r.content


def import_(
    c: httpx.Client, archive: bytes, passphrase: str | None = None, **params: Any
) -> httpx.Response:
    headers = {"X-Halls-Passphrase": passphrase} if passphrase else {}
    query = {"store": S, **{k: str(v).lower() for k, v in params.items()}}
    return c.post("/import", params=query, content=archive, headers=headers)


@pytest.mark.parametrize("storage", ["sqlite", "postgres"], indirect=True)
def test_round_trip_plain_and_encrypted_restores_everything(
    make_server: Callable[..., InProcessServer],
    clock: FakeClock,
    tmp_path: Path,
    storage: StorageSettings,
) -> None:
    """export, delete the store, import -> the same records, edges, vectors,
    reinforcement, write order and identical search results; plain and encrypted;
    on each backend."""
    data = tmp_path / "data"
    c = make_server().client
    populate(c, clock)
    plain, sealed = export(c), export(c, PASS)
    before, hits = dump(data, storage=storage), searches(c)
    assert before["counts"]["long"] >= 2 and any(f.status == "superseded" for f in before["facts"])
    assert any(lp.status == "done" for lp in before["loops"]) and before["flags"]
    assert before["edges"] and before["retention"] and before["runs"] and before["briefs"]
    assert any(u for _, undo in before["runs"] for u in undo), "revert data is exported"
    header = json.loads(plain.split(b"\n", 1)[0])
    assert header["format"] == "halls-archive" and header["version"] == 1
    assert header["embedder"]["fingerprint"] == before["embedder"]
    assert header["counts"]["short"] == before["counts"]["short"]
    assert b"Cairngorms" in plain and b"Cairngorms" not in sealed

    for archive, passphrase in ((plain, None), (sealed, PASS)):
        clock.advance(0)  # the same instant: scores are comparable exactly
        make_server()  # stops the server holding the store
        delete_store(data, storage=storage)
        c = make_server().client
        assert c.get("/stats", params={"store": S}).status_code == 404
        report = ok(import_(c, archive, passphrase), 200)
        assert report["added"]["short"] == before["counts"]["short"]
        assert report["added"]["long"] == before["counts"]["long"]
        assert report["replaced"] == {} and report["kept"] == {}
        assert dump(data, storage=storage) == before
        assert searches(c) == hits


def test_wrong_passphrase_and_tampered_archives_import_nothing(
    make_server: Callable[..., InProcessServer], clock: FakeClock, tmp_path: Path
) -> None:
    """A wrong or missing passphrase, or one flipped byte anywhere, is 400 with why;
    the target store is not even created."""
    c = make_server().client
    populate(c, clock)
    plain, sealed = export(c), export(c, PASS)
    target = "restored"

    def refused(archive: bytes, passphrase: str | None, why: str) -> None:
        headers = {"X-Halls-Passphrase": passphrase} if passphrase else {}
        r = c.post("/import", params={"store": target}, content=archive, headers=headers)
        err = assert_error(r, 400, "invalid_archive")
        assert why in err["message"], err
        assert target not in ok(c.get("/stores"), 200)["stores"]

    refused(sealed, "not the passphrase", "wrong passphrase")
    refused(sealed, None, "encrypted: give its passphrase")
    head = sealed.index(b"\n") + 1 + 16  # the clear header line, then the check tag
    for at in (head + 2, head + 4 + 100, len(sealed) // 2, len(sealed) - 1):
        flipped = bytearray(sealed)
        flipped[at] ^= 0x01
        refused(bytes(flipped), PASS, "modified or damaged")
    refused(sealed[:-20], PASS, "")  # cut short
    salt = sealed.index(b'"salt":"') + 9
    flipped = bytearray(sealed)
    flipped[salt] = ord("A") if flipped[salt] != ord("A") else ord("B")
    refused(bytes(flipped), PASS, "header was altered")

    for at in (30, len(plain) // 3, len(plain) // 2, len(plain) - 5):
        flipped = bytearray(plain)
        flipped[at] ^= 0x01
        refused(bytes(flipped), None, "")
    refused(plain[: len(plain) // 2], None, "")
    refused(b"not an archive at all\n", None, "not a halls archive")

    # Into a store that holds records, with every permission to replace them:
    # a damaged archive still changes nothing.
    state = snapshot(c, S)
    flipped = bytearray(sealed)
    flipped[len(sealed) // 2] ^= 0x01
    r = import_(c, bytes(flipped), PASS, overwrite=True, on_conflict="keep-imported")
    assert_error(r, 400, "invalid_archive")
    assert snapshot(c, S) == state
    r = c.post("/import", params={"store": target}, content=b"")
    assert_error(r, 400, "invalid_input")


def test_import_into_a_store_with_records_needs_overwrite_and_follows_on_conflict(
    make_server: Callable[..., InProcessServer], clock: FakeClock
) -> None:
    """409 without overwrite; then keep-existing, keep-imported and keep-newer settle
    each id already there; a dry run counts without writing."""
    c = make_server().client
    p = {"store": S}
    entry = ok(c.post("/short", params=p, json={"content": "The build takes four minutes"}))
    loop = ok(c.post("/near", params=p, json={"intent": "Review the build cache"}))
    old = export(c)
    ok(
        c.patch(f"/short/{entry['id']}", params=p, json={"content": "The build takes a minute"}),
        200,
    )
    clock.advance(60)
    ok(c.post(f"/near/{loop['id']}/complete", params=p), 200)
    extra = ok(c.post("/short", params=p, json={"content": "Only in the store now"}))

    err = assert_error(import_(c, old), 409, "conflict")
    assert "overwrite" in err["message"]

    def short_content() -> str:
        return str(ok(c.get(f"/short/{entry['id']}", params=p), 200)["content"])

    def loop_status() -> str:
        return str(ok(c.get(f"/near/{loop['id']}", params=p), 200)["status"])

    dry = ok(import_(c, old, overwrite=True, on_conflict="keep-imported", dry_run=True), 200)
    assert dry["dry_run"] and dry["replaced"] == {"short": 1, "near": 1}
    assert short_content() == "The build takes a minute" and loop_status() == "done"

    kept = ok(import_(c, old, overwrite=True), 200)
    assert kept["kept"] == {"short": 1, "near": 1} and kept["added"] == {}
    assert short_content() == "The build takes a minute" and loop_status() == "done"

    # keep-newer: the loop closed after the export is newer; the entry (edited,
    # but carrying no edit time) ties, and a tie keeps what is there.
    newer = ok(import_(c, old, overwrite=True, on_conflict="keep-newer"), 200)
    assert newer["kept"] == {"short": 1, "near": 1}
    assert loop_status() == "done"

    imported = ok(import_(c, old, overwrite=True, on_conflict="keep-imported"), 200)
    assert imported["replaced"] == {"short": 1, "near": 1}
    assert short_content() == "The build takes four minutes" and loop_status() == "open"
    hits = ok(c.post("/search", params=p, json={"query": "how long is the build"}), 200)
    assert hits["results"][0]["id"] == entry["id"]
    assert hits["results"][0]["content"] == "The build takes four minutes"
    ok(c.get(f"/short/{extra['id']}", params=p), 200)  # not in the archive: untouched

    # Now the archive made after the loop closed is the newer one.
    ok(c.post(f"/near/{loop['id']}/complete", params=p), 200)
    closed = export(c)
    ok(import_(c, old, overwrite=True, on_conflict="keep-imported"), 200)
    assert loop_status() == "open"
    newer = ok(import_(c, closed, overwrite=True, on_conflict="keep-newer"), 200)
    assert newer["replaced"] == {"near": 1} and loop_status() == "done"


def _reheader(archive: bytes, **changes: Any) -> bytes:
    """The plain archive with its header edited and its checksum made good again:
    an archive as another halls (another embedder) would have written it."""
    import hashlib

    lines = archive.split(b"\n")
    assert lines[-1] == b""
    header = json.loads(lines[0])
    header["embedder"].update(changes)
    lines[0] = json.dumps(header, separators=(",", ":")).encode()
    body = b"".join(line + b"\n" for line in lines[:-2])
    footer = json.loads(lines[-2])
    footer["sha256"] = hashlib.sha256(body).hexdigest()
    return body + json.dumps(footer).encode() + b"\n"


def test_an_archive_from_another_embedder_is_refused_unless_reembedded(
    make_server: Callable[..., InProcessServer], clock: FakeClock
) -> None:
    c = make_server().client
    p = {"store": S}
    ok(c.post("/short", params=p, json={"content": "The office plants need water on Fridays"}))
    other = _reheader(export(c), fingerprint="some-other-model:384")
    target = {"store": "elsewhere"}
    r = c.post("/import", params=target, content=other)
    err = assert_error(r, 409, "embedder_mismatch")
    assert "some-other-model:384" in err["message"] and "reembed" in err["message"]
    assert "elsewhere" not in ok(c.get("/stores"), 200)["stores"]

    r = c.post("/import", params={**target, "reembed": "true"}, content=other)
    assert ok(r, 200)["reembedded"] is True
    hits = ok(c.post("/search", params=target, json={"query": "watering the plants"}), 200)
    assert "plants" in hits["results"][0]["content"]
