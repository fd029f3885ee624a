"""Bad requests over the live HTTP API: a clear 4xx in one error shape, and nothing changed.

Every case snapshots the store (counts, listings, the list of stores) before
and after the request; every error body is checked for stack traces and paths.
"""

from __future__ import annotations

import http.client
import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from typing import Any

import pytest

from conftest import LiveServer
from halls.models import new_id
from http_helpers import assert_clean, assert_error, counts, created, snapshot


@pytest.fixture(scope="session")
def server(api_server: LiveServer) -> LiveServer:
    """These HTTP API tests run on both backends (conftest's ``api_server``)."""
    return api_server


BIG = "x" * 32769
# Over Python's 4300-digit limit for int(): json.loads cannot read it.
HUGE_INT = b"1" * 4301
GOOD = [{"content": f"good item {i}"} for i in range(4)]


def batch_with(bad: dict[str, Any]) -> dict[str, Any]:
    return {"items": [*GOOD[:2], bad, *GOOD[2:]]}


# (method, path, json body or raw bytes, status, code); {short}/{near}/{unknown_*}
# are filled with ids that exist in the store / are well formed but unknown.
CASES: list[tuple[str, str, Any, int, str]] = [
    # content
    ("POST", "/short", {"content": ""}, 422, "invalid_request"),
    ("POST", "/short", {"content": "  \n\t "}, 400, "invalid_input"),
    ("POST", "/short", {"content": BIG}, 422, "invalid_request"),
    ("POST", "/short", {"content": 42}, 422, "invalid_request"),
    ("POST", "/short", {}, 422, "invalid_request"),
    ("POST", "/short", {"content": "x", "colour": "red"}, 422, "invalid_request"),
    ("POST", "/short", {"content": "x", "metadata": "not an object"}, 422, "invalid_request"),
    ("POST", "/short", {"content": "x", "pinned": "maybe"}, 422, "invalid_request"),
    ("POST", "/short", {"content": "x", "topic": "t" * 201}, 422, "invalid_request"),
    # JSON
    ("POST", "/short", b'{"content": "x"', 400, "invalid_json"),
    ("POST", "/short", b"content=x", 400, "invalid_json"),
    # Bodies json.loads cannot read at all: still "not JSON" to the client.
    ("POST", "/short", b"[" * 30_000 + b"]" * 30_000, 400, "invalid_json"),
    ("POST", "/short", b'{"content": "x", "n": ' + HUGE_INT + b"}", 400, "invalid_json"),
    ("POST", "/short", b'{"content": "\xff\xfe"}', 400, "invalid_json"),
    ("POST", "/search", b'{"query": "\xc3\x28"}', 400, "invalid_json"),
    ("POST", "/short", b'["content", "x"]', 422, "invalid_request"),
    ("POST", "/short", b"", 422, "invalid_request"),
    # occurred_at
    ("POST", "/short", {"content": "x", "occurred_at": "yesterday"}, 400, "invalid_input"),
    ("POST", "/short", {"content": "x", "occurred_at": "2024-13-45T00:00:00"}, 400,
     "invalid_input"),
    ("POST", "/short", {"content": "x", "occurred_at": -5}, 400, "invalid_input"),
    ("POST", "/short", {"content": "x", "occurred_at": 1e13}, 400, "invalid_input"),
    ("POST", "/short", {"content": "x", "occurred_at": True}, 422, "invalid_request"),
    ("POST", "/short", {"content": "x", "occurred_at": [2024]}, 422, "invalid_request"),
    # batches: all or nothing
    ("POST", "/short/batch", batch_with({"content": "   "}), 400, "invalid_input"),
    ("POST", "/short/batch", batch_with({"content": "x", "occurred_at": "soon"}), 400,
     "invalid_input"),
    ("POST", "/short/batch", batch_with({"content": BIG}), 422, "invalid_request"),
    ("POST", "/short/batch", batch_with({"content": "x", "typo": 1}), 422, "invalid_request"),
    ("POST", "/short/batch", batch_with({"content": ""}), 422, "invalid_request"),
    ("POST", "/short/batch", {"items": [GOOD[0]] * 1001}, 422, "invalid_request"),
    ("POST", "/short/batch", {"items": []}, 422, "invalid_request"),
    ("POST", "/short/batch", GOOD, 422, "invalid_request"),
    ("POST", "/journal", {"content": " "}, 400, "invalid_input"),
    ("POST", "/journal", {"content": "x", "occurred_at": "noonish"}, 400, "invalid_input"),
    ("POST", "/journal", {"content": "x", "visibility": "secret"}, 422, "invalid_request"),
    ("POST", "/journal/batch", batch_with({"content": "\n"}), 400, "invalid_input"),
    ("POST", "/near", {"intent": "x", "trigger_type": "someday"}, 400, "invalid_input"),
    # search
    ("POST", "/search", {"query": ""}, 422, "invalid_request"),
    ("POST", "/search", {"query": "   "}, 400, "invalid_input"),
    ("POST", "/search", {"query": "x", "n_results": 0}, 422, "invalid_request"),
    ("POST", "/search", {"query": "x", "n_results": 101}, 422, "invalid_request"),
    ("POST", "/search", {"query": "x", "tiers": ["diary"]}, 400, "invalid_input"),
    ("POST", "/search", {"query": "x", "tiers": ["short", "medium"]}, 400, "invalid_input"),
    ("POST", "/search", {"query": "x", "tiers": "short"}, 422, "invalid_request"),
    ("POST", "/search", {"query": "x", "since": "last spring"}, 400, "invalid_input"),
    ("POST", "/search", {"query": "x", "until": "2024-02-30"}, 400, "invalid_input"),
    ("POST", "/search", {"query": "x", "include_superseded": "sure"}, 422, "invalid_request"),
    ("POST", "/search", {"query": "x", "limit": 3}, 422, "invalid_request"),
    # paging and status filters
    ("GET", "/short?limit=0", None, 422, "invalid_request"),
    ("GET", "/short?limit=1001", None, 422, "invalid_request"),
    ("GET", "/short?offset=-1", None, 422, "invalid_request"),
    ("GET", "/journal?limit=lots", None, 422, "invalid_request"),
    ("GET", "/near?status=pending", None, 400, "invalid_input"),
    ("GET", "/long?status=forgotten", None, 400, "invalid_input"),
    # ids: malformed -> 400, well formed but unknown -> 404
    ("GET", "/short/abc", None, 400, "invalid_input"),
    ("GET", "/short/{near}", None, 400, "invalid_input"),
    ("GET", "/short/s_01hzzzzzzzzzzzzzzzzzzzzzzz", None, 400, "invalid_input"),
    ("GET", "/short/{unknown_short}", None, 404, "not_found"),
    ("DELETE", "/short/abc", None, 400, "invalid_input"),
    ("DELETE", "/short/{unknown_short}", None, 404, "not_found"),
    ("GET", "/near/{short}", None, 400, "invalid_input"),
    ("GET", "/near/{unknown_near}", None, 404, "not_found"),
    ("POST", "/near/n_123/complete", None, 400, "invalid_input"),
    ("POST", "/near/{unknown_near}/complete", None, 404, "not_found"),
    ("DELETE", "/near/{short}", None, 400, "invalid_input"),
    ("DELETE", "/near/{unknown_near}", None, 404, "not_found"),
    ("GET", "/long/{short}", None, 400, "invalid_input"),
    ("GET", "/long/{unknown_long}", None, 404, "not_found"),
    ("POST", "/long/{unknown_long}/forget", {"reason": "pii"}, 404, "not_found"),
    # routes and methods
    ("GET", "/nowhere", None, 404, "not_found"),
    ("PUT", "/short/{short}", {"content": "edited"}, 405, "method_not_allowed"),
    ("PATCH", "/near/{near}", {"status": "done"}, 405, "method_not_allowed"),
    ("DELETE", "/journal", None, 405, "method_not_allowed"),
]  # fmt: skip


@pytest.fixture
def seeded(server, store_name) -> dict[str, str]:
    """A store holding one short entry and one open loop; their ids and unknown ids."""
    c = server.client()
    short = created(c, "/short", store_name, {"content": "the recycling goes out on Wednesday"})
    near = created(c, "/near", store_name, {"intent": "buy more bin bags"})
    created(c, "/journal", store_name, {"content": "user talked about bins"})
    return {
        "short": short["id"],
        "near": near["id"],
        "unknown_short": new_id("short"),
        "unknown_near": new_id("near"),
        "unknown_long": new_id("long"),
    }


def send(c, method: str, path: str, body: Any, store: str):  # type: ignore[no-untyped-def]
    sep = "&" if "?" in path else "?"
    url = f"{path}{sep}store={store}"
    if isinstance(body, bytes):
        headers = {"content-type": "application/json"}
        return c.request(method, url, content=body, headers=headers)
    return c.request(method, url, json=body)


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    CASES,
    ids=[f"{m} {p} {s} {i}" for i, (m, p, _, s, _) in enumerate(CASES)],
)
def test_bad_request_is_refused_and_changes_nothing(
    server, store_name, seeded, method, path, body, status, code
) -> None:
    """Each bad request gets its 4xx and error code, a clean body, and the store is unchanged."""
    c = server.client()
    before = snapshot(c, store_name)
    r = send(c, method, path.format(**seeded), body, store_name)
    assert_error(r, status, code)
    assert snapshot(c, store_name) == before


def test_limits_are_inclusive(server, store_name) -> None:
    """Exactly 32768 characters and exactly 1000 batch items are accepted."""
    c = server.client()
    body = created(c, "/short", store_name, {"content": "y" * 32768})
    assert len(body["content"]) == 32768
    items = [{"content": f"item {i}"} for i in range(1000)]
    assert len(created(c, "/short/batch", store_name, {"items": items})["ids"]) == 1000
    assert counts(c, store_name)["short"] == 1001


def test_completing_a_done_loop_is_409(server, store_name) -> None:
    """Completing an already-done loop is a 409 conflict and leaves the loop as it was."""
    c = server.client()
    loop = created(c, "/near", store_name, {"intent": "water the plants"})
    path = f"/near/{loop['id']}/complete"
    done = c.post(path, params={"store": store_name}).json()
    before = snapshot(c, store_name)
    err = assert_error(c.post(path, params={"store": store_name}), 409, "conflict")
    assert "done" in err["message"]
    assert snapshot(c, store_name) == before
    assert c.get(f"/near/{loop['id']}", params={"store": store_name}).json() == done


@pytest.fixture
def small_server(server_factory):  # type: ignore[no-untyped-def]
    """A server whose request bodies are capped at 2048 bytes."""
    return server_factory(env={"HALLS_SERVER__MAX_BODY_BYTES": "2048"})


def chunks(data: bytes, size: int = 512) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def test_oversize_body_is_413_and_changes_nothing(small_server, store_name) -> None:
    """Bodies over server.max_body_bytes get 413 too_large, declared or streamed; nothing stored."""
    c = small_server.client()
    created(c, "/short", store_name, {"content": "a" * 1500})
    before = snapshot(c, store_name)
    p = {"store": store_name}
    assert_error(c.post("/short", params=p, json={"content": "b" * 3000}), 413, "too_large")
    items = [{"content": f"batch item {i} " + "c" * 100} for i in range(20)]
    assert_error(c.post("/short/batch", params=p, json={"items": items}), 413, "too_large")
    assert_error(c.post("/journal", params=p, json={"content": "d" * 5000}), 413, "too_large")
    # Chunked, with no Content-Length: the limit is enforced while reading.
    streamed = b'{"content": "' + b"e" * 4000 + b'"}'
    r = c.post("/short", params=p, content=chunks(streamed),
               headers={"content-type": "application/json"})  # fmt: skip
    assert "content-length" not in r.request.headers
    assert_error(r, 413, "too_large")
    assert snapshot(c, store_name) == before
    small = b'{"content": "' + b"f" * 1000 + b'"}'
    r = c.post("/short", params=p, content=chunks(small, 300),
               headers={"content-type": "application/json"})  # fmt: skip
    assert r.status_code == 201, r.text
    assert counts(c, store_name)["short"] == 2


READS: list[tuple[str, str, Any]] = [
    ("GET", "/short", None),
    ("GET", f"/short/{new_id('short')}", None),
    ("DELETE", f"/short/{new_id('short')}", None),
    ("GET", "/near", None),
    ("GET", f"/near/{new_id('near')}", None),
    ("POST", f"/near/{new_id('near')}/complete", None),
    ("DELETE", f"/near/{new_id('near')}", None),
    ("GET", "/journal", None),
    ("GET", "/long", None),
    ("GET", f"/long/{new_id('long')}", None),
    ("POST", f"/long/{new_id('long')}/forget", {"reason": "pii"}),
    ("POST", "/search", {"query": "anything"}),
    ("GET", "/stats", None),
]


def test_unknown_store_is_404_and_not_created(server, store_name) -> None:
    """Reading a store that does not exist is 404 store_not_found; no store appears."""
    c = server.client()
    before = c.get("/stores").json()
    for method, path, body in READS:
        r = send(c, method, path, body, store_name)
        assert_error(r, 404, "store_not_found")
        assert store_name in r.json()["error"]["message"]
    assert c.get("/stores").json() == before
    assert not list(server.data_dir.glob(f"{store_name}*"))


BAD_NAMES = ["Upper", "-dash-first", "_underscore-first", "a" * 65, "has space", "dot.name",
             "ünicode", "semi;colon", "a/b"]  # fmt: skip


@pytest.mark.parametrize("name", BAD_NAMES)
def test_invalid_store_name_is_400_everywhere(server, name) -> None:
    """A store name outside [a-z0-9][a-z0-9_-]{0,63} is 400 on reads and writes; no file made."""
    c = server.client()
    files = _made(server.data_dir)
    stores = c.get("/stores").json()
    writes = [
        ("POST", "/short", {"content": "x"}),
        ("POST", "/short/batch", {"items": [{"content": "x"}]}),
        ("POST", "/near", {"intent": "x"}),
        ("POST", "/journal", {"content": "x"}),
        ("POST", "/brief", {"summary": "x"}),
    ]
    for method, path, body in writes + READS:
        r = c.request(method, path, params={"store": name}, json=body)
        assert_error(r, 400, "invalid_store_name")
    assert_error(c.post("/stores", json={"name": name}), 400, "invalid_store_name")
    assert c.get("/stores").json() == stores
    assert _made(server.data_dir) == files


def _made(data_dir) -> list[str]:
    """The files a store has, without SQLite's -wal and -shm (SQLite removes them when
    another test's store closes its last connection, whenever that happens)."""
    return sorted(p.name for p in data_dir.iterdir() if not p.name.endswith(("-wal", "-shm")))


def test_refused_first_write_does_not_create_the_store(server, store_name) -> None:
    """A bad write to a store that does not exist yet leaves no store behind."""
    c = server.client()
    for path, body in (
        ("/short", {"content": "   "}),
        ("/short", {"content": "x", "occurred_at": "tomorrowish"}),
        ("/short/batch", batch_with({"content": " "})),
        ("/near", {"intent": "x", "trigger_type": "later"}),
        ("/journal", {"content": ""}),
        ("/journal/batch", batch_with({"content": "x", "occurred_at": "?"})),
        ("/brief", {"summary": " "}),
    ):
        r = c.post(path, params={"store": store_name}, json=body)
        assert 400 <= r.status_code < 500, r.text
    assert store_name not in c.get("/stores").json()["stores"]
    assert not list(server.data_dir.glob(f"{store_name}*"))
    assert_error(c.get("/stats", params={"store": store_name}), 404, "store_not_found")


def test_an_empty_store_parameter_means_the_default_store(server) -> None:
    """?store= (empty) reads and writes the default store, as documented."""
    c = server.client()
    entry = created(c, "/short", "", {"content": "written with an empty store parameter"})
    got = c.get(f"/short/{entry['id']}")  # no ?store= at all: the default store
    assert got.status_code == 200, got.text
    for path in ("/short", "/stats", "/near", "/journal"):
        r = c.get(path, params={"store": ""})
        assert r.status_code == 200, (path, r.text)
    found = c.post("/search", params={"store": ""}, json={"query": "empty store parameter"})
    assert entry["id"] in {h["id"] for h in found.json()["results"]}


def test_a_500_keeps_the_keep_alive_connection_usable(server_factory, store_name) -> None:
    """After an unexpected error (a row damaged on disk), the same connection answers next."""
    live = server_factory()
    c = live.client()
    entry = created(c, "/short", store_name, {"content": "a row about to be damaged"})
    # Damaged on disk behind the server's back: no halls error covers a time
    # column that holds text, so reading the row is a genuine 500.
    with closing(sqlite3.connect(live.data_dir / f"{store_name}.sqlite3")) as db, db:
        db.execute("UPDATE short SET created_at = 'not a time' WHERE id = ?", (entry["id"],))
    conn = http.client.HTTPConnection("127.0.0.1", live.port, timeout=60)
    try:
        conn.request("GET", f"/short/{entry['id']}?store={store_name}")
        crashed = conn.getresponse()
        body = json.loads(crashed.read())
        assert crashed.status == 500 and body["error"]["code"] == "internal", body
        assert_clean(json.dumps(body))
        sock = conn.sock
        assert sock is not None, "the server closed the connection"
        for path in ("/healthz", f"/stats?store={store_name}", "/healthz"):
            conn.request("GET", path)
            answer = conn.getresponse()
            answer.read()
            assert answer.status == 200, path
            assert conn.sock is sock, "a new connection was opened"
    finally:
        conn.close()
    assert "unhandled error" in live.log()
