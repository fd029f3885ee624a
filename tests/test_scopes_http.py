"""Work scopes through a live ``halls serve`` (both backends), the official MCP client,
the CLI and the Claude Code hooks: writes open scopes, turns close them, and a closed
scope's memories leave the session-start context."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from mcp import ClientSession

from conftest import LiveServer
from halls.cli import main
from mcp_scenario import call, error, over_http, over_stdio

LOGIN = "web/fix-login"
BILLING = "web/billing"
# Marked critical, each becomes a long-term fact at the next run (promote_min_importance).
LOGIN_FACT = "The login service keeps its session tokens in Redis with a two hour expiry"
BILLING_FACT = "The billing service sends every invoice through the Stripe sandbox first"
PLAIN_FACT = "Chad prefers absolute paths in every configuration file"


@pytest.fixture
def server(api_server: LiveServer) -> LiveServer:
    """This module's HTTP tests run on SQLite and on PostgreSQL."""
    return api_server


def _write(c: httpx.Client, store: str, content: str, **extra: Any) -> dict[str, Any]:
    r = c.post("/short", params={"store": store}, json={"content": content, **extra})
    assert r.status_code == 201, r.text
    return dict(r.json())


def _scopes(c: httpx.Client, store: str, **params: Any) -> dict[str, Any]:
    r = c.get("/scopes", params={"store": store, **params})
    assert r.status_code == 200, r.text
    return dict(r.json())


def _by_name(c: httpx.Client, store: str) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in _scopes(c, store)["scopes"]}


def _context(c: httpx.Client, store: str, **body: Any) -> dict[str, Any]:
    r = c.post("/context", params={"store": store}, json=body)
    assert r.status_code == 200, r.text
    return dict(r.json())


def _facts(c: httpx.Client, store: str) -> dict[str, dict[str, Any]]:
    r = c.post("/consolidate/run", params={"store": store})
    assert r.status_code == 201, r.text
    listed = c.get("/long", params={"store": store, "status": "active"}).json()
    return {f["content"]: f for f in listed}


def test_a_write_opens_its_scope_and_three_turns_elsewhere_close_it(
    server: LiveServer, store_name: str
) -> None:
    """The first write for a scope opens it; three turns writing for another close it as
    switched; turns naming no scope do not count towards a switch; a new write reopens it."""
    c = server.client()
    entry = _write(c, store_name, "The login page now posts to /api/session", scope=LOGIN)
    assert entry["scope"] == LOGIN
    listed = _scopes(c, store_name)
    assert listed["turn"] == 1
    [login] = listed["scopes"]
    assert login["name"] == LOGIN and login["status"] == "open" and login["turns"] == 1
    _write(c, store_name, "A note about nothing in particular")  # no scope: not a switch
    for n in range(2):
        _write(c, store_name, f"Billing step {n} is drafted", scope=BILLING)
    assert _by_name(c, store_name)[LOGIN]["status"] == "open"
    assert _by_name(c, store_name)[LOGIN]["elsewhere"] == 2
    # A loop and a journal event are turns too: the loop is the third for billing.
    r = c.post(
        "/near", params={"store": store_name}, json={"intent": "Ask about VAT", "scope": BILLING}
    )
    assert r.status_code == 201 and r.json()["scope"] == BILLING
    scopes = _by_name(c, store_name)
    assert scopes[LOGIN]["status"] == "closed" and scopes[LOGIN]["closed_because"] == "switched"
    assert scopes[BILLING]["status"] == "open" and scopes[BILLING]["turns"] == 3
    assert [s["name"] for s in _scopes(c, store_name, status="open")["scopes"]] == [BILLING]
    r = c.post(
        "/journal", params={"store": store_name}, json={"content": "back to login", "scope": LOGIN}
    )
    assert r.status_code == 201 and r.json()["scope"] == LOGIN
    login = _by_name(c, store_name)[LOGIN]
    assert login["status"] == "open" and login["closed_because"] is None and login["turns"] == 2


def test_six_turns_without_a_write_for_it_close_a_scope_as_idle(
    server: LiveServer, store_name: str
) -> None:
    """Turns that name no scope close an open one after six."""
    c = server.client()
    _write(c, store_name, "The login form validates e-mail addresses", scope=LOGIN)
    for n in range(5):
        _write(c, store_name, f"Unscoped note number {n}")
    assert _by_name(c, store_name)[LOGIN]["status"] == "open"
    _write(c, store_name, "The sixth unscoped note")
    login = _by_name(c, store_name)[LOGIN]
    assert login["status"] == "closed" and login["closed_because"] == "idle"
    assert _scopes(c, store_name)["turn"] == 7 and login["last_turn"] == 1


def test_bad_scopes_are_refused_and_change_nothing(server: LiveServer, store_name: str) -> None:
    """A malformed scope is a 422, one holding personal data a 400: nothing is stored, no
    turn counted; closing an unknown scope is a 404."""
    c = server.client()
    _write(c, store_name, "The login form has a captcha", scope=LOGIN)
    p = {"store": store_name}
    for bad in ["", " web", "web login", "x" * 129, "-web", 5, ["web"]]:
        r = c.post("/short", params=p, json={"content": "never stored", "scope": bad})
        assert r.status_code == 422, (bad, r.text)
    r = c.post("/short", params=p, json={"content": "never stored", "scope": "ana.k@example.org"})
    assert r.status_code == 422  # '@' is not in a scope's name
    r = c.post("/short", params=p, json={"content": "never stored", "scope": "123-45-6789"})
    assert r.status_code == 400 and "secret or personal data" in r.json()["error"]["message"]
    assert [e["content"] for e in c.get("/short", params=p).json()] == [
        "The login form has a captcha"
    ]
    assert _scopes(c, store_name)["turn"] == 1
    r = c.post("/scopes/close", params=p, json={"name": "web/unknown"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = c.get("/scopes", params={**p, "status": "gone"})
    assert r.status_code in (400, 422)


def test_a_closed_scope_leaves_the_session_start_context(
    server: LiveServer, store_name: str
) -> None:
    """Facts promoted from a scope's notes carry it; once the scope is marked done they are
    out of the session-start block, while a query can still recall them (after the rest)."""
    c = server.client()
    _write(c, store_name, LOGIN_FACT, scope=LOGIN, importance="critical")
    _write(c, store_name, BILLING_FACT, scope=BILLING, importance="critical")
    _write(c, store_name, PLAIN_FACT, importance="critical")
    facts = _facts(c, store_name)
    assert {t: f["scope"] for t, f in facts.items()} == {
        LOGIN_FACT: LOGIN,
        BILLING_FACT: BILLING,
        PLAIN_FACT: None,
    }
    start = _context(c, store_name)
    assert {facts[t]["id"] for t in facts} <= set(start["ids"])
    # The session's own scope comes first.
    for first, then in ((LOGIN, (LOGIN_FACT, BILLING_FACT)), (BILLING, (BILLING_FACT, LOGIN_FACT))):
        text = _context(c, store_name, scope=first)["text"]
        assert text.index(then[0]) < text.index(then[1]) < len(text), first

    r = c.post("/scopes/close", params={"store": store_name}, json={"name": LOGIN})
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "closed" and r.json()["closed_because"] == "done"
    start = _context(c, store_name)
    assert facts[LOGIN_FACT]["id"] not in start["ids"] and LOGIN_FACT not in start["text"]
    assert {facts[BILLING_FACT]["id"], facts[PLAIN_FACT]["id"]} <= set(start["ids"])
    # Cold, not gone: search finds it, and a query's recalls may show it.
    hits = c.post(
        "/search",
        params={"store": store_name},
        json={"query": "where are login session tokens kept?"},
    ).json()["results"]
    assert facts[LOGIN_FACT]["id"] in [h["id"] for h in hits]
    assert next(h for h in hits if h["id"] == facts[LOGIN_FACT]["id"])["scope"] == LOGIN
    asked = _context(c, store_name, query="where are login session tokens kept?")
    assert facts[LOGIN_FACT]["id"] in asked["ids"]


@pytest.mark.parametrize("via", ["http", "stdio proxy"])
def test_mcp_names_lists_and_closes_scopes(
    sqlite_live_server: LiveServer, store_name: str, via: str, tmp_path: Path
) -> None:
    """The official MCP client, over /mcp (the server serves every tool) and through
    `halls mcp --server-url --tools all`: remember takes a scope, `scopes` lists them and
    marks one done, and `context` then leaves the closed scope's fact out; a bad name is a
    tool error."""
    server = sqlite_live_server

    async def work(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        note = await call(
            session, "remember", content=LOGIN_FACT, scope=LOGIN, importance="critical",
            store=store_name,
        )  # fmt: skip
        out["note"] = note
        out["bad"] = await error(
            session, "remember", content="never stored", scope="web login", store=store_name
        )
        await call(session, "consolidate", action="run", store=store_name)
        out["before"] = await call(session, "context", store=store_name)
        out["listed"] = await call(session, "scopes", store=store_name)
        out["done"] = await call(session, "scopes", action="done", name=LOGIN, store=store_name)
        out["closed"] = await call(session, "scopes", status="closed", store=store_name)
        out["after"] = await call(session, "context", store=store_name)
        out["unknown"] = await error(
            session, "scopes", action="done", name="web/none", store=store_name
        )
        return out

    if via == "http":
        got = asyncio.run(over_http(f"{server.url}/mcp", work))
    else:
        args = ["--server-url", server.url, "--tools", "all"]
        got = asyncio.run(over_stdio(args, tmp_path / "mcp.log", work))
    assert got["note"]["scope"] == LOGIN
    assert "scope" in got["bad"]
    assert LOGIN_FACT in got["before"]["text"]
    assert [s["name"] for s in got["listed"]["scopes"]] == [LOGIN]
    assert got["done"]["status"] == "closed" and got["done"]["closed_because"] == "done"
    assert [s["name"] for s in got["closed"]["scopes"]] == [LOGIN]
    assert LOGIN_FACT not in got["after"]["text"]
    assert "no scope" in got["unknown"]
    with server.client() as c:
        assert [e["content"] for e in c.get("/short", params={"store": store_name}).json()] == [
            LOGIN_FACT
        ]


def test_cli_remembers_lists_and_closes_scopes(tmp_path: Path) -> None:
    """halls remember --scope, halls scopes list, halls scopes done, on a data directory."""
    data = str(tmp_path / "data")

    def invoke(*args: str) -> str:
        result = CliRunner().invoke(main, [*args, "--data-dir", data], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    invoke("remember", "The login page posts to /api/session", "--scope", LOGIN)
    assert invoke("scopes", "list").split("\t")[:2] == [LOGIN, "open"]
    assert invoke("scopes", "done", LOGIN).strip() == f"{LOGIN}\tclosed (done)"
    listed = json.loads(invoke("scopes", "list", "--json", "--status", "closed"))
    assert [s["name"] for s in listed["scopes"]] == [LOGIN]
    bad = CliRunner().invoke(main, ["scopes", "done", "web/none", "--data-dir", data])
    assert bad.exit_code != 0 and "no scope web/none" in bad.output


def test_hooks_name_the_directory_and_branch_as_the_scope(
    server: LiveServer, store_name: str, tmp_path: Path
) -> None:
    """The user-prompt hook journals the prompt under `<directory>/<branch>`, and
    session-start asks for that scope's memories first."""
    repo = tmp_path / "acme-web"
    repo.mkdir()
    for cmd in (["init", "-q", "-b", "fix/login"], ["commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *cmd], cwd=repo, check=True
        )
    common = ["--server-url", server.url, "--store", store_name]
    said = {"prompt": "The login page must keep the old URL", "session_id": "s1", "cwd": str(repo)}
    done = subprocess.run(
        [sys.executable, "-m", "halls", "hook", "user-prompt", *common],
        input=json.dumps(said), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with server.client() as c:
        [event] = c.get("/journal", params={"store": store_name}).json()
        assert event["scope"] == "acme-web/fix/login"
        assert [s["name"] for s in _scopes(c, store_name)["scopes"]] == ["acme-web/fix/login"]
