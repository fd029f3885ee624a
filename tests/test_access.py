"""Tokens per store: a scoped or read-only token cannot reach past its grant.

Checked over a live server on every endpoint of its own OpenAPI document (so
a route added later is covered), and through the official MCP client.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import ClientSession

from conftest import LiveServer, start_server
from http_helpers import assert_error, created, snapshot
from mcp_scenario import over_http
from test_http_auth import concrete, endpoints

ADMIN = "admin-token-0123456789abcdef"
A_TOKEN = "store-a-token-0123456789abcdef"
A_READER = "store-a-reader-0123456789abcdef"
A_ADMIN = "store-a-admin-0123456789abcdef"
HASHED = "hashed-token-0123456789abcdef"
# Reads sent as POST: a read-only token may send them.
READ_POSTS = {"/search", "/context"}
# Routes that touch no store: the health probe, the docs, the list of stores.
STORELESS = {"/healthz", "/metrics", "/stores"}


def _config(tmp: Path) -> Path:
    cfg = {
        "mcp": {"tools": "all"},
        "server": {
            "bearer_token": ADMIN,
            "tokens": [
                {"id": "agent-a", "token": A_TOKEN, "stores": ["a"]},
                {"id": "reader-a", "token": A_READER, "stores": ["a"], "read_only": True},
                {"id": "admin-a", "token": A_ADMIN, "stores": ["a"], "admin": True},
                {
                    "id": "hashed",
                    "token": "sha256:" + hashlib.sha256(HASHED.encode()).hexdigest(),
                    "stores": ["a", "c"],
                },
            ],
        },
    }
    path = tmp / "halls.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    tmp = tmp_path_factory.mktemp("access")
    server = start_server(tmp / "data", args=["--config", str(_config(tmp))])
    server.token = ADMIN
    admin = server.client()
    for store in ("a", "b"):
        created(admin, "/short", store, {"content": f"a memory of store {store}"})
        created(admin, "/journal", store, {"content": f"an event of store {store}"})
    yield server
    server.stop()


# Deletion for good: an admin token of the store (or the operator's) only.
ADMIN_ONLY = {
    ("DELETE", "/journal/{id}"),
    ("DELETE", "/long/{id}"),
    ("DELETE", "/stores/{name}"),
    ("POST", "/forget-about"),
    ("GET", "/audit"),
    # A whole store out or in.
    ("POST", "/export"),
    ("POST", "/import"),
    ("POST", "/backup"),
}


def call(client, method: str, path: str, store: str, **kw: Any):  # type: ignore[no-untyped-def]
    """The route on ``store``: as ``?store=``, or as the path's store ``{name}``."""
    url = concrete(path).replace("{name}", store)
    return client.request(method, url, params={"store": store}, **kw)


def _is_read(method: str, path: str) -> bool:
    return method == "GET" or path in READ_POSTS


def test_a_store_token_gets_403_on_every_endpoint_of_another_store(live) -> None:
    """Token for store a: 403 forbidden on store b everywhere, and store b is unchanged."""
    admin, agent = live.client(), live.client(token=A_TOKEN)
    before = snapshot(admin, "b")
    checked = 0
    for method, path in endpoints(admin):
        if path in STORELESS:
            continue
        assert_error(call(agent, method, path, "b", json={}), 403, "forbidden")
        checked += 1
        # Its own store answers as usual (whatever the status, never 401/403),
        # but for deletion for good, which needs admin.
        own = call(agent, method, path, "a", json={})
        if (method, path) in ADMIN_ONLY:
            assert_error(own, 403, "forbidden")
        else:
            assert own.status_code not in (401, 403), (method, path, own.text)
    assert checked >= 20
    assert snapshot(admin, "b") == before
    # The default store is a store like any other: not in the grant, so refused.
    assert_error(agent.get("/short"), 403, "forbidden")


def test_a_read_only_token_gets_403_on_every_write(live) -> None:
    """Read-only token: reads of its store work; every write, delete or run is 403."""
    admin, reader = live.client(), live.client(token=A_READER)
    before = snapshot(admin, "a")
    writes = 0
    for method, path in endpoints(admin):
        if path in STORELESS:
            continue
        r = call(reader, method, path, "a", json={})
        if (method, path) in ADMIN_ONLY:
            assert_error(r, 403, "forbidden")
        elif _is_read(method, path):
            assert r.status_code != 403, (method, path, r.text)
        else:
            assert_error(r, 403, "forbidden")
            writes += 1
    assert writes >= 10
    assert_error(reader.post("/stores", json={"name": "a"}), 403, "forbidden")
    assert snapshot(admin, "a") == before
    hits = reader.post("/search", params={"store": "a"}, json={"query": "memory"}).json()
    assert hits["results"] and all("store a" in h["content"] for h in hits["results"])


def test_admin_of_a_store_may_delete_there_only(live) -> None:
    """A store-admin token deletes in its store (dry run here), and gets 403 elsewhere."""
    ops = live.client(token=A_ADMIN)
    r = ops.post("/forget-about", params={"store": "a"}, json={"subject": "memory"})
    assert r.status_code == 200 and r.json()["found"], r.text
    assert_error(
        ops.post("/forget-about", params={"store": "b"}, json={"subject": "memory"}),
        403,
        "forbidden",
    )
    assert_error(ops.delete("/stores/b"), 403, "forbidden")
    assert "b" in live.client().get("/stores").json()["stores"]
    # A whole store out: its own, not another.
    r = ops.post("/export", params={"store": "a"})
    assert r.status_code == 200 and b"a memory of store a" in r.content, r.text
    assert_error(ops.post("/export", params={"store": "b"}), 403, "forbidden")
    assert_error(ops.post("/backup", params={"store": "b"}), 403, "forbidden")
    entries = live.client().get("/audit", params={"store": "a"}).json()["entries"]
    assert any(e["action"] == "store.export" and e["token"] == "admin-a" for e in entries)


def test_store_list_metrics_and_hashed_tokens_show_only_the_grant(live) -> None:
    """GET /stores and /metrics name only granted stores; a sha256: token works; unknown is 401."""
    agent = live.client(token=A_TOKEN)
    assert agent.get("/stores").json() == {"stores": ["a"]}
    assert set(live.client().get("/stores").json()["stores"]) >= {"a", "b"}
    text = agent.get("/metrics").text
    assert 'store="a"' in text and 'store="b"' not in text
    assert 'store="b"' in live.client().get("/metrics").text
    hashed = live.client(token=HASHED)
    assert hashed.get("/short", params={"store": "a"}).status_code == 200
    assert_error(hashed.get("/short", params={"store": "b"}), 403, "forbidden")
    # The hash itself is not a token.
    digest = hashlib.sha256(HASHED.encode()).hexdigest()
    assert_error(live.client(token=digest).get("/stores"), 401, "unauthorized")
    assert_error(agent.post("/stores", json={"name": "b"}), 403, "forbidden")
    # No token value reaches the server log.
    log = live.log()
    assert all(t not in log for t in (ADMIN, A_TOKEN, A_READER, A_ADMIN, HASHED))


def test_mcp_tools_keep_to_the_grant(live) -> None:
    """Over MCP: a store-a token cannot read, write or consolidate b; read-only cannot write."""

    async def as_agent(session: ClientSession) -> dict[str, bool | str]:
        out: dict[str, bool | str] = {}
        for tool, args in (
            ("remember", {"content": "sneaking into b"}),
            ("recall", {"query": "memory"}),
            ("stats", {}),
            ("context", {}),
            ("consolidate", {"action": "run"}),
            ("loops", {"action": "list"}),
            ("forget_about", {"subject": "memory"}),
            ("delete_store", {}),
            ("export_store", {"path": "export.jsonl"}),
        ):
            r = await session.call_tool(tool, {**args, "store": "b"})
            out[f"{tool}@b"] = r.isError and "does not open store 'b'" in r.content[0].text  # type: ignore[union-attr]
        r = await session.call_tool("remember", {"content": "no store named"})
        out["default"] = r.isError
        ok = await session.call_tool("remember", {"content": "agent a wrote this", "store": "a"})
        out["own"] = not ok.isError
        # Deleting needs admin, even in its own store.
        wipe = await session.call_tool("forget_about", {"subject": "memory", "store": "a"})
        out["admin"] = wipe.isError and "admin" in wipe.content[0].text  # type: ignore[union-attr]
        return out

    async def as_reader(session: ClientSession) -> dict[str, bool]:
        write = await session.call_tool("remember", {"content": "read only", "store": "a"})
        run = await session.call_tool("consolidate", {"action": "run", "store": "a"})
        dry = await session.call_tool("consolidate", {"action": "dry_run", "store": "a"})
        read = await session.call_tool("recall", {"query": "memory", "store": "a"})
        # status reads, as GET /consolidate/status does for the same token.
        status = await session.call_tool("consolidate", {"action": "status", "store": "a"})
        plain = await session.call_tool("consolidate", {"store": "a"})  # status by default
        return {
            "write": write.isError and "read-only" in write.content[0].text,  # type: ignore[union-attr]
            "run": run.isError,
            "dry": dry.isError,
            "read": not read.isError,
            "status": not status.isError and "mode" in status.content[0].text,  # type: ignore[union-attr]
            "default": not plain.isError,
        }

    async def as_store_admin(session: ClientSession) -> bool:
        # Files on the server's machine are its operator's, not one store's admin's.
        r = await session.call_tool("backup_store", {"path": "copy.sqlite3", "store": "a"})
        return r.isError and "admin token of every store" in r.content[0].text  # type: ignore[union-attr]

    admin = live.client()
    before = snapshot(admin, "b")
    got = asyncio.run(over_http(f"{live.url}/mcp", as_agent, A_TOKEN))
    assert all(got.values()), got
    assert snapshot(admin, "b") == before
    reader = asyncio.run(over_http(f"{live.url}/mcp", as_reader, A_READER))
    assert all(reader.values()), reader
    assert asyncio.run(over_http(f"{live.url}/mcp", as_store_admin, A_ADMIN))


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ({"id": "x", "token": "short"}, "at least 16"),
        ({"id": "x", "token": "sha256:abc"}, "64 lowercase hex"),
        ({"id": "x", "token": A_TOKEN, "stores": ["../etc"]}, "invalid store name"),
        ({"id": "bad id", "token": A_TOKEN}, "id"),
        ({"id": "x", "token": A_TOKEN, "admni": True}, "admni"),
    ],
)
def test_bad_token_entries_are_refused_at_load(entry: dict[str, Any], complaint: str) -> None:
    """A malformed token entry stops the config from loading, naming what is wrong."""
    from pydantic import ValidationError

    from halls.config import Settings

    with pytest.raises(ValidationError, match=complaint):
        Settings(server={"tokens": [entry]})
    with pytest.raises(ValidationError, match="used twice"):
        Settings(server={"bearer_token": ADMIN, "tokens": [{"id": "bearer_token", "token": ADMIN}]})


def _samples(text: str, name: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(name)]


def test_metrics_show_a_token_of_some_stores_only_what_concerns_them(live) -> None:
    """A store-a token sees its own stores open and no server-wide series; the admin all."""
    admin = live.client()
    for store in ("a", "b"):
        assert admin.get("/stats", params={"store": store}).status_code == 200
    everything = admin.get("/metrics").text
    assert float(_samples(everything, "halls_stores_open ")[0].split()[1]) >= 2
    assert _samples(everything, "halls_http_requests_total")
    assert _samples(everything, "halls_consolidation_runs_total")
    assert _samples(everything, 'halls_http_waiting_requests{lane="read"}')
    assert _samples(everything, 'halls_http_waiting_requests{lane="write"}')
    for token in (A_TOKEN, A_READER):
        text = live.client(token=token).get("/metrics").text
        assert _samples(text, "halls_stores_open ") == ["halls_stores_open 1.0"], text
        assert not _samples(text, "halls_http_request"), text
        assert not _samples(text, "halls_consolidation_runs"), text
        assert not _samples(text, "halls_http_waiting"), text
        assert _samples(text, "halls_build_info")
        assert 'store="b"' not in text
