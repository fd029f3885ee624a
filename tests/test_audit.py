"""The audit log: every mutation on a hash chain, by token id, never content.

A real history is made over HTTP and MCP on a live server with scoped tokens;
`halls audit verify` passes on it, and names the entry after one byte of the
log is changed.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import LiveServer, start_server
from http_helpers import assert_error, created
from mcp_scenario import over_http

ADMIN = "audit-admin-token-0123456789"
AGENT = "audit-agent-token-0123456789"
OPS = "audit-ops-token-0123456789abc"
SECRET = "Theodora's locker code is 8812"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    tmp = tmp_path_factory.mktemp("audit")
    cfg = {
        "server": {
            "bearer_token": ADMIN,
            "tokens": [
                {"id": "agent-a", "token": AGENT, "stores": ["a"]},
                {"id": "ops-a", "token": OPS, "stores": ["a"], "admin": True},
            ],
        },
        "consolidator": {"mode": "external"},
        "mcp": {"tools": "all"},
    }
    (tmp / "halls.yaml").write_text(yaml.safe_dump(cfg))
    server = start_server(tmp / "data", args=["--config", str(tmp / "halls.yaml")])
    server.token = ADMIN
    yield server
    server.stop()


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "halls", "audit", *args, "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _history(live: LiveServer) -> dict[str, Any]:
    agent, ops = live.client(token=AGENT), live.client(token=OPS)
    entry = created(agent, "/short", "a", {"content": SECRET, "pinned": True})
    loop = created(agent, "/near", "a", {"intent": "ask Theodora about the locker"})
    assert agent.post(f"/near/{loop['id']}/complete", params={"store": "a"}).status_code == 200
    ev = created(agent, "/journal", "a", {"content": f"user: {SECRET}"})
    run = agent.post("/consolidate/run", params={"store": "a"}, json={})
    assert run.status_code == 201, run.text

    async def via_mcp(session: Any) -> None:
        r = await session.call_tool("remember", {"content": "MCP note", "store": "a"})
        assert not r.isError

    asyncio.run(over_http(f"{live.url}/mcp", via_mcp, AGENT))
    r = ops.post(
        "/forget-about", params={"store": "a"}, json={"subject": "Theodora", "dry_run": False}
    )
    assert r.status_code == 200 and r.json()["found"], r.text
    created(live.client(), "/short", "b", {"content": "the admin's own store"})
    return {"short": entry["id"], "loop": loop["id"], "journal": ev["id"]}


def test_every_mutation_is_in_the_chain_with_its_token_id(live) -> None:
    """Writes, a run, an MCP call, a purge: each an entry naming the token id, no content."""
    ids = _history(live)
    r = live.client().get("/audit", params={"limit": 1000})
    assert r.status_code == 200, r.text
    entries = r.json()["entries"]
    seen = {(e["store"], e["action"], e["token"]) for e in entries}
    assert {
        ("a", "short.add", "agent-a"),
        ("a", "near.add", "agent-a"),
        ("a", "near.complete", "agent-a"),
        ("a", "journal.add", "agent-a"),
        ("a", "consolidate.run", "agent-a"),
        ("a", "forget_about", "ops-a"),
        ("b", "short.add", "bearer_token"),
    } <= seen, seen
    [purge] = [e for e in entries if e["action"] == "forget_about"]
    assert {ids["short"], ids["journal"]} <= set(purge["ids"])
    # Ids only: nothing of what was purged, no token. (Not the code's digits
    # alone: hex hashes and ids may hold any four digits by chance.)
    raw = (live.data_dir / "audit.jsonl").read_bytes()
    assert b"Theodora" not in raw and b"locker code is" not in raw
    assert all(t.encode() not in raw for t in (ADMIN, AGENT, OPS))
    assert [e["seq"] for e in entries] == sorted((e["seq"] for e in entries), reverse=True)


def test_audit_reads_need_admin(live) -> None:
    """GET /audit: all stores for the operator; one store for its admin; 403 otherwise."""
    ops, agent = live.client(token=OPS), live.client(token=AGENT)
    created(agent, "/short", "a", {"content": "one more"})
    mine = ops.get("/audit", params={"store": "a"})
    assert mine.status_code == 200 and mine.json()["entries"]
    assert {e["store"] for e in mine.json()["entries"]} == {"a"}
    assert_error(ops.get("/audit"), 403, "forbidden")
    assert_error(ops.get("/audit", params={"store": "b"}), 403, "forbidden")
    assert_error(agent.get("/audit", params={"store": "a"}), 403, "forbidden")

    async def read(session: Any) -> tuple[bool, Any]:
        r = await session.call_tool("audit", {"store": "a"})
        return r.isError, r.structuredContent

    refused, _ = asyncio.run(over_http(f"{live.url}/mcp", read, AGENT))
    allowed, got = asyncio.run(over_http(f"{live.url}/mcp", read, OPS))
    assert refused and not allowed
    assert got["entries"] and {e["store"] for e in got["entries"]} == {"a"}


def test_verify_passes_then_names_the_entry_after_one_changed_byte(live) -> None:
    """`halls audit verify`: OK on the real history; after one byte changes, that entry."""
    for n in range(5):  # a history of its own, whichever tests ran before on this server
        created(live.client(), "/short", "a", {"content": f"so the log is not empty ({n})"})
    ok = _cli(live.data_dir, "verify")
    assert ok.returncode == 0 and ok.stdout.startswith("OK: "), ok.stdout + ok.stderr
    path = live.data_dir / "audit.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) >= 5
    target = len(lines) // 2  # 0-based: entry target + 1
    entry = json.loads(lines[target])
    # One byte of its time: a plausible forgery, still valid JSON.
    at = lines[target].index(b'"time":"') + len(b'"time":"') + 3
    old = lines[target][at : at + 1]
    new = b"7" if old != b"7" else b"8"
    lines[target] = lines[target][:at] + new + lines[target][at + 1 :]
    path.write_bytes(b"".join(lines))
    bad = _cli(live.data_dir, "verify")
    assert bad.returncode == 1
    assert f"broken at entry {entry['seq']}" in bad.stderr, bad.stderr
    assert f"{target} entries before it are intact" in bad.stderr
