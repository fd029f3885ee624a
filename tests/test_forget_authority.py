"""Deletion for good is an admin's: a writer's forget flag never purges, an admin's does.

A live server with an admin token and a writer token of store ``a``; a fact
is flagged "contains personal data" and a consolidation run acts on the
flag. Over HTTP and through the official MCP client (streamable HTTP): the
writer's flag demotes the fact (its sources stay), the admin's purges it and
its sources. The flag records who made it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml
from mcp import ClientSession

from conftest import LiveServer, start_server
from http_helpers import created
from mcp_scenario import over_http

ADMIN = "authority-admin-token-0123456789"
WRITER = "authority-writer-token-0123456789"
A = {"store": "a"}
REASON = {"reason": "contains personal data"}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    tmp = tmp_path_factory.mktemp("authority")
    cfg = {
        "server": {
            "bearer_token": ADMIN,
            "tokens": [{"id": "writer-a", "token": WRITER, "stores": ["a"]}],
        }
    }
    (tmp / "halls.yaml").write_text(yaml.safe_dump(cfg))
    server = start_server(
        tmp / "data", args=["--config", str(tmp / "halls.yaml")], env={"HALLS_MCP__TOOLS": "all"}
    )
    server.token = ADMIN
    yield server
    server.stop()


def _fact(c: httpx.Client, content: str) -> tuple[str, str]:
    """(fact id, source entry id): a pinned entry promoted by a run."""
    entry = created(c, "/short", "a", {"content": content, "pinned": True})
    r = c.post("/consolidate/run", params=A, json={"dry_run": False})
    assert r.status_code == 201, r.text
    [fid] = [a["target_id"] for a in r.json()["actions"] if a["kind"] == "promote"]
    return str(fid), str(entry["id"])


def _run(c: httpx.Client) -> list[dict[str, Any]]:
    r = c.post("/consolidate/run", params=A, json={"dry_run": False})
    assert r.status_code == 201, r.text
    return r.json()["actions"]  # type: ignore[no-any-return]


def test_writer_flag_demotes_and_admin_flag_purges_over_http(live: LiveServer) -> None:
    """HTTP: a writer's PII flag (run by the writer) demotes; an admin's purges fact and source."""
    admin, writer = live.client(), live.client(token=WRITER)
    fid, sid = _fact(admin, "Tamsin Okafor's allergy is to penicillin")

    r = writer.post(f"/long/{fid}/forget", params=A, json=REASON)
    assert r.status_code == 202, r.text
    assert (r.json()["flagged_by"], r.json()["admin"]) == ("writer-a", False)
    [action] = _run(writer)
    assert action["kind"] == "demote" and "needs an admin" in action["reason"], action
    fact = admin.get(f"/long/{fid}", params=A)
    assert fact.status_code == 200 and fact.json()["status"] == "demoted", fact.text
    assert admin.get(f"/short/{sid}", params=A).status_code == 200

    r = admin.post(f"/long/{fid}/forget", params=A, json=REASON)
    assert r.status_code == 202 and r.json()["admin"] is True, r.text
    assert [a["kind"] for a in _run(admin)] == ["purge"]
    assert admin.get(f"/long/{fid}", params=A).status_code == 404
    assert admin.get(f"/short/{sid}", params=A).status_code == 404


async def _mcp(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def work(session: ClientSession) -> list[Any]:
        out = []
        for tool, args in calls:
            r = await session.call_tool(tool, args)
            assert not r.isError, r.content
            out.append(json.loads(r.content[0].text))  # type: ignore[union-attr]
        return out

    return await over_http(url, work, token)  # type: ignore[no-any-return]


def test_writer_flag_demotes_and_admin_flag_purges_over_mcp(live: LiveServer) -> None:
    """MCP (official client), flag_forget and consolidate: a writer's demotes, an admin's purges."""
    admin = live.client()
    fid, sid = _fact(admin, "Bartholomew Quince's home is at 12 Larch Street")
    calls = [
        ("flag_forget", {"id": fid, **REASON, "store": "a"}),
        ("consolidate", {"action": "run", "store": "a"}),
    ]
    flag, run = asyncio.run(_mcp(f"{live.url}/mcp", WRITER, calls))
    assert (flag["flagged_by"], flag["admin"]) == ("writer-a", False)
    assert [a["kind"] for a in run["actions"]] == ["demote"], run
    assert admin.get(f"/long/{fid}", params=A).json()["status"] == "demoted"
    assert admin.get(f"/short/{sid}", params=A).status_code == 200

    flag, run = asyncio.run(_mcp(f"{live.url}/mcp", ADMIN, calls))
    assert (flag["flagged_by"], flag["admin"]) == ("bearer_token", True)
    assert [a["kind"] for a in run["actions"]] == ["purge"], run
    assert admin.get(f"/long/{fid}", params=A).status_code == 404
    assert admin.get(f"/short/{sid}", params=A).status_code == 404
