"""What a store cannot hold or serve is refused at every write, and skipped at every read.

A lone surrogate (the JSON escape ``\\udfff``) anywhere in a body, metadata
nested too deep or too large: each write answers 4xx and stores nothing.
A record stored before these checks (written here straight into the store)
no longer breaks its store: lists, searches and exports skip it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from typing import Any

import httpx
import numpy as np
import pytest

from halls.models import JournalEvent, OpenLoop, ShortEntry, new_id
from halls.storable import MAX_METADATA_BYTES, MAX_METADATA_DEPTH
from http_helpers import assert_error, created, search, snapshot

LONE = "\udfff"


def _send(c: httpx.Client, method: str, path: str, store: str, body: Any) -> httpx.Response:
    # json.dumps escapes a lone surrogate as \udfff, as a client in any
    # language may send it; httpx's own encoder would refuse it.
    return c.request(
        method,
        path,
        params={"store": store},
        content=json.dumps(body),
        headers={"Content-Type": "application/json"},
    )


def _unchanged(c: httpx.Client, store: str, before: dict[str, Any]) -> None:
    """Nothing was stored, and the store still lists, searches and exports."""
    assert snapshot(c, store) == before
    search(c, store, query="kettle memory")  # asserts a 200
    archive = c.post("/export", params={"store": store})
    assert archive.status_code == 200, archive.text
    kinds = [json.loads(line)["kind"] for line in archive.content.splitlines()]
    assert kinds.count("short") == before["counts"]["short"], kinds


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


# (method, path, body): each writes a lone surrogate somewhere; "{short}" is
# an entry of the store.
SURROGATES = [
    ("POST", "/short", {"content": f"x{LONE}"}),
    ("POST", "/short", {"content": "x", "topic": LONE}),
    ("POST", "/short", {"content": "x", "source": LONE}),
    ("POST", "/short", {"content": "x", "metadata": {"k": LONE}}),
    ("POST", "/short", {"content": "x", "metadata": {LONE: 1}}),
    ("POST", "/short", {"content": "x", "metadata": {"k": [{"deep": [LONE]}]}}),
    ("POST", "/short", {"content": "x", "occurred_at": LONE}),
    ("POST", "/short/batch", {"items": [{"content": "fine"}, {"content": LONE}]}),
    (
        "POST",
        "/short/batch",
        {"items": [{"content": "ok"}, {"content": "x", "metadata": {"k": LONE}}]},
    ),
    ("PATCH", "/short/{short}", {"content": LONE}),
    ("PATCH", "/short/{short}", {"topic": LONE}),
    ("PATCH", "/short/{short}", {"metadata": {"k": LONE}}),
    ("POST", "/near", {"intent": LONE}),
    ("POST", "/near", {"intent": "x", "topic": LONE}),
    ("POST", "/near", {"intent": "x", "trigger_type": "topic", "trigger_value": LONE}),
    ("POST", "/near", {"intent": "x", "metadata": {"k": LONE}}),
    ("POST", "/journal", {"content": LONE}),
    ("POST", "/journal", {"content": "x", "role": LONE}),
    ("POST", "/journal", {"content": "x", "session_id": LONE}),
    ("POST", "/journal", {"content": "x", "metadata": {"k": LONE}}),
    ("POST", "/journal/batch", {"items": [{"content": "fine"}, {"content": "x", "role": LONE}]}),
    ("POST", "/brief", {"summary": LONE}),
    ("POST", "/brief", {"summary": "x", "promote_hints": [LONE]}),
    ("POST", "/brief", {"summary": "x", "noise": [LONE]}),
    ("POST", "/search", {"query": LONE}),
    ("POST", "/search", {"query": "x", "topic": LONE}),
    ("POST", "/context", {"query": LONE}),
    ("POST", "/stores", {"name": LONE}),
    ("POST", "/forget-about", {"subject": f"ab{LONE}", "dry_run": False}),
]


@pytest.fixture(scope="module")
def store(server: Any) -> str:
    name = "storable-writes"
    with server.client() as c:
        created(c, "/short", name, {"content": "the kettle is blue", "metadata": {"a": [1]}})
        created(c, "/near", name, {"intent": "buy a kettle"})
        created(c, "/journal", name, {"content": "we talked about the kettle"})
    return name


def _short_id(c: httpx.Client, store: str) -> str:
    return str(c.get("/short", params={"store": store}).json()[-1]["id"])


@pytest.mark.parametrize(("method", "path", "body"), SURROGATES)
def test_a_lone_surrogate_anywhere_is_refused_and_stores_nothing(
    server: Any, store: str, method: str, path: str, body: dict[str, Any]
) -> None:
    """400 invalid_input naming the field; the store is as it was."""
    c = server.client()
    before = snapshot(c, store)
    r = _send(c, method, path.format(short=_short_id(c, store)), store, body)
    err = assert_error(r, 400, "invalid_input")
    assert "lone surrogate" in err["message"], err
    _unchanged(c, store, before)


@pytest.mark.parametrize("depth", [MAX_METADATA_DEPTH + 1, 64, 300, 700, 950])
@pytest.mark.parametrize(
    ("method", "path", "wrap"),
    [
        ("POST", "/short", lambda m: {"content": "x", "metadata": m}),
        (
            "POST",
            "/short/batch",
            lambda m: {"items": [{"content": "x"}, {"content": "y", "metadata": m}]},
        ),
        ("PATCH", "/short/{short}", lambda m: {"metadata": m}),
        ("POST", "/near", lambda m: {"intent": "x", "metadata": m}),
        ("POST", "/journal", lambda m: {"content": "x", "metadata": m}),
        ("POST", "/journal/batch", lambda m: {"items": [{"content": "x", "metadata": m}]}),
    ],
)
def test_metadata_nested_too_deep_is_refused(
    server: Any, store: str, depth: int, method: str, path: str, wrap: Any
) -> None:
    """Deeper than MAX_METADATA_DEPTH: 400 naming the limit, nothing stored, store readable."""
    c = server.client()
    before = snapshot(c, store)
    # Spelled out, not json.dumps'd: the encoder recurses once per level,
    # and a test worker's stack (pytest-xdist) is deeper than a server's.
    nested = '{"k":' * (depth - 1) + '{"leaf":1}' + "}" * (depth - 1)
    body = json.dumps(wrap("METADATA")).replace('"METADATA"', nested)
    r = c.request(
        method,
        path.format(short=_short_id(c, store)),
        params={"store": store},
        content=body,
        headers={"Content-Type": "application/json"},
    )
    err = assert_error(r, 400, "invalid_input")
    assert f"deeper than {MAX_METADATA_DEPTH}" in err["message"], err
    _unchanged(c, store, before)


def test_metadata_at_the_depth_limit_is_kept_verbatim(server: Any, store_name: str) -> None:
    """Exactly MAX_METADATA_DEPTH levels is stored, listed and searched as it was sent."""
    c = server.client()
    deep = _nested(MAX_METADATA_DEPTH)
    entry = created(c, "/short", store_name, {"content": "a deep label", "metadata": deep})
    assert entry["metadata"] == deep
    assert c.get("/short", params={"store": store_name}).json()[0]["metadata"] == deep
    assert search(c, store_name, query="deep label")[0]["metadata"] == deep


@pytest.mark.parametrize(
    "metadata",
    [
        {"blob": "x" * (MAX_METADATA_BYTES + 1)},
        {f"k{n}": "v" * 100 for n in range(MAX_METADATA_BYTES // 100)},
        {"list": list(range(MAX_METADATA_BYTES))},
    ],
    ids=["one-value", "many-keys", "long-list"],
)
def test_metadata_over_the_size_limit_is_refused(server: Any, store: str, metadata: Any) -> None:
    """Over MAX_METADATA_BYTES as JSON: 400 naming the limit, nothing stored."""
    c = server.client()
    before = snapshot(c, store)
    for path, body in (
        ("/short", {"content": "x", "metadata": metadata}),
        ("/near", {"intent": "x", "metadata": metadata}),
        ("/journal", {"content": "x", "metadata": metadata}),
    ):
        err = assert_error(_send(c, "POST", path, store, body), 400, "invalid_input")
        assert str(MAX_METADATA_BYTES) in err["message"], err
    _unchanged(c, store, before)


def test_metadata_that_is_not_finite_is_refused(server: Any, store: str) -> None:
    """NaN and Infinity (Python's json reads them) are not JSON values: 400, nothing stored."""
    c = server.client()
    before = snapshot(c, store)
    for literal in ("NaN", "Infinity", "-Infinity"):
        r = c.post(
            "/short",
            params={"store": store},
            content=f'{{"content": "x", "metadata": {{"k": {literal}}}}}',
            headers={"Content-Type": "application/json"},
        )
        err = assert_error(r, 400, "invalid_input")
        assert "finite" in err["message"], err
    _unchanged(c, store, before)


def test_an_archive_holding_a_lone_surrogate_is_refused(server: Any, store_name: str) -> None:
    """POST /import of a sealed archive holding a lone surrogate: 400, nothing imported."""
    c = server.client()
    created(c, "/short", store_name, {"content": "exported and altered", "metadata": {"k": "v"}})
    archive = c.post("/export", params={"store": store_name})
    assert archive.status_code == 200, archive.text
    lines = archive.content.splitlines(keepends=True)
    body = [json.loads(line) for line in lines[:-1]]
    for obj in body:
        if obj["kind"] == "short":
            obj["record"]["metadata"] = {"k": LONE}
    # Re-sealed as the exporter would: only the surrogate is wrong with it.
    raw = [json.dumps(obj, separators=(",", ":")).encode() + b"\n" for obj in body]
    footer = json.loads(lines[-1])
    footer["sha256"] = hashlib.sha256(b"".join(raw)).hexdigest()
    raw.append(json.dumps(footer).encode() + b"\n")
    target = f"{store_name}-in"
    created(c, "/short", target, {"content": "already here"})
    before = snapshot(c, target)
    r = c.post("/import", params={"store": target}, content=b"".join(raw))
    err = assert_error(r, 400, "invalid_archive")
    assert "surrogate" in err["message"], err
    _unchanged(c, target, before)


# -- reads: records stored before the checks --


def _when() -> datetime:
    return datetime.now(UTC)


def test_records_that_cannot_be_served_are_skipped_not_fatal(server_factory: Any, tmp_path) -> None:
    """Lists, search, export and consolidation skip a damaged record; by id it is a clear
    error, and it can be deleted."""
    data = tmp_path / "data"
    first = server_factory(data_dir=data)
    c = first.client()
    store = "damaged"
    good = created(c, "/short", store, {"content": "the blue kettle is on the shelf"})
    created(c, "/near", store, {"intent": "descale the blue kettle"})
    created(c, "/journal", store, {"content": "the blue kettle whistled"})
    first.stop()
    # Written straight into the store, as halls before these checks did.
    bad: dict[str, str] = {}
    with first.store(store) as s:
        vector = s.vectors([good["id"]])[good["id"]]
        now = _when()
        for label, metadata in (("surrogate", {"k": LONE}), ("deep", _nested(300))):
            entry = ShortEntry(
                id=new_id("short"),
                content=f"the blue kettle, {label} metadata",
                metadata=metadata,
                created_at=now,
                occurred_at=now,
            )
            s.add_short([entry], np.stack([vector]))
            bad[f"short-{label}"] = entry.id
        loop = OpenLoop(
            id=new_id("near"),
            intent="fix the blue kettle lid",
            metadata={"k": LONE},
            created_at=now,
            occurred_at=now,
        )
        s.add_loop(loop, vector)
        bad["near"] = loop.id
        event = JournalEvent(
            id=new_id("journal"),
            content="the blue kettle broke",
            metadata={"k": LONE},
            created_at=now,
            occurred_at=now,
        )
        s.add_journal([event])
        bad["journal"] = event.id
    second = server_factory(data_dir=data)
    c = second.client()
    p = {"store": store}
    shorts = c.get("/short", params=p)
    assert shorts.status_code == 200, shorts.text
    assert [e["id"] for e in shorts.json()] == [good["id"]]
    for path, key in (("/near", "near"), ("/journal", "journal")):
        r = c.get(path, params=p)
        assert r.status_code == 200, r.text
        assert bad[key] not in {e["id"] for e in r.json()} and len(r.json()) == 1
    hits = search(c, store, query="blue kettle")
    assert good["id"] in {h["id"] for h in hits}
    assert not set(bad.values()) & {h["id"] for h in hits}
    ctx = c.post("/context", params=p, json={"query": "blue kettle"})
    assert ctx.status_code == 200, ctx.text
    archive = c.post("/export", params=p)
    assert archive.status_code == 200, archive.text
    kinds = [json.loads(line)["kind"] for line in archive.content.splitlines()]
    assert kinds.count("short") == 1 and kinds.count("near") == 1 and kinds.count("journal") == 1
    dry = c.post("/consolidate/run", params=p, json={"dry_run": True})
    assert dry.status_code == 200, dry.text
    stats = c.get("/stats", params=p)
    assert stats.status_code == 200, stats.text
    # By id: a clear error, no stack trace; deleting it by id works.
    err = assert_error(c.get(f"/short/{bad['short-surrogate']}", params=p), 500, "damaged_record")
    assert "delete it" in err["message"]
    assert_error(c.get(f"/near/{bad['near']}", params=p), 500, "damaged_record")
    assert c.delete(f"/short/{bad['short-surrogate']}", params=p).status_code == 204
    assert c.delete(f"/short/{bad['short-deep']}", params=p).status_code == 204
    assert "skipped" in second.log()
    # The rows are still there for an operator to inspect: nothing was rewritten.
    with closing(sqlite3.connect(data / f"{store}.sqlite3")) as db, db:
        assert db.execute("SELECT count(*) FROM near").fetchone()[0] == 2


# -- MCP: the same refusals, over /mcp --


def _tool_call(c: httpx.Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    # A raw JSON-RPC call: the official client's encoder cannot even send a
    # lone surrogate, but any other client can.
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    r = c.post(
        "/mcp",
        content=json.dumps(body),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        },
    )
    assert r.status_code == 200, r.text
    return r.json()["result"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("remember", {"content": f"x{LONE}"}),
        ("remember", {"content": "x", "topic": LONE}),
        ("remember_for_later", {"intent": LONE}),
        ("journal", {"events": [{"content": "x"}, {"content": "y", "role": LONE}]}),
        ("journal", {"events": [{"content": "x", "session_id": LONE}]}),
        ("submit_brief", {"summary": "x", "promote_hints": [LONE]}),
        ("recall", {"query": LONE}),
    ],
)
def test_mcp_tools_refuse_a_lone_surrogate(
    server: Any, store: str, tool: str, arguments: dict[str, Any]
) -> None:
    """A tool error naming the lone surrogate; the store is as it was."""
    c = server.client()
    before = snapshot(c, store)
    result = _tool_call(c, tool, {**arguments, "store": store})
    assert result["isError"], result
    assert "lone surrogate" in result["content"][0]["text"], result
    _unchanged(c, store, before)
