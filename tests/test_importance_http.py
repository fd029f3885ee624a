"""Importance set on write, through a live ``halls serve`` (both backends), MCP and the CLI.

Ranking, the session block, validation, PATCH and the archive round trip;
lifetimes (TTL, retirement) and promotion are in ``test_importance_aging``.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from mcp import ClientSession

from conftest import LiveServer
from halls import Memory, Settings
from halls.cli import main
from mcp_scenario import call, error, over_http, over_stdio

# One statement, written three times: every signal but importance is equal.
SAME = "The staging cluster is rebuilt from the ops repository every Monday"
QUERY = "how is the staging cluster rebuilt?"
BAD = [1.5, -0.1, "urgent", "HIGH", True, "0.5", [0.5], {"level": "high"}]


@pytest.fixture
def server(api_server: LiveServer) -> LiveServer:
    """This module's HTTP tests run on SQLite and on PostgreSQL."""
    return api_server


def _write(c: httpx.Client, store: str, content: str, **extra: Any) -> dict[str, Any]:
    r = c.post("/short", params={"store": store}, json={"content": content, **extra})
    assert r.status_code == 201, r.text
    return dict(r.json())


def _search(c: httpx.Client, store: str, **body: Any) -> list[dict[str, Any]]:
    r = c.post("/search", params={"store": store}, json={"query": QUERY, "n_results": 10, **body})
    assert r.status_code == 200, r.text
    return list(r.json()["results"])


def test_a_high_importance_memory_outranks_an_otherwise_equal_one(
    server: LiveServer, store_name: str
) -> None:
    """Same text: high ranks above unset above low, by the factor its score_detail names."""
    c = server.client()
    # Written unset first: on a tie the older id would win, so only importance can lift `high`.
    unset = _write(c, store_name, SAME)["id"]
    high = _write(c, store_name, SAME, importance="high")["id"]
    low = _write(c, store_name, SAME, importance=0.25)["id"]
    for retriever in ("fused", "full"):
        hits = _search(c, store_name, retriever=retriever)
        assert [h["id"] for h in hits] == [high, unset, low], retriever
        by_id = {h["id"]: h for h in hits}
        assert by_id[high]["importance"] == 0.75
        assert by_id[high]["score_detail"]["importance"] == 1.1
        assert by_id[unset]["importance"] is None
        assert by_id[unset]["score_detail"]["importance"] == 1.0
        assert by_id[low]["score_detail"]["importance"] == 0.9
    # Fused (no neighbour bonus): the scores differ by exactly the factor, within rounding.
    fused = {h["id"]: h["score"] for h in _search(c, store_name, retriever="fused")}
    assert fused[high] / fused[unset] == pytest.approx(1.1, rel=1e-3)
    assert fused[low] / fused[unset] == pytest.approx(0.9, rel=1e-3)


def test_bad_importance_is_422_and_changes_nothing(server: LiveServer, store_name: str) -> None:
    """Out of range, unknown levels and other types: 422 on every write; nothing stored."""
    c = server.client()
    p = {"store": store_name}
    kept = _write(c, store_name, "The backup job runs at 02:00", importance="critical")
    for value in BAD:
        r = c.post("/short", params=p, json={"content": "not stored", "importance": value})
        assert r.status_code == 422, (value, r.text)
        assert r.json()["error"]["code"] == "invalid_request"
        assert "Traceback" not in r.text and ".py" not in r.text
        batch = [{"content": "good one"}, {"content": "bad one", "importance": value}]
        assert c.post("/short/batch", params=p, json={"items": batch}).status_code == 422
        r = c.patch(f"/short/{kept['id']}", params=p, json={"importance": value})
        assert r.status_code == 422, (value, r.text)
        r = c.post("/near", params=p, json={"intent": "not stored", "importance": value})
        assert r.status_code == 422, (value, r.text)
    assert [e["id"] for e in c.get("/short", params=p).json()] == [kept["id"]]
    assert c.get(f"/short/{kept['id']}", params=p).json() == kept
    assert c.get("/near", params=p).json() == []


def test_importance_is_returned_patched_and_scales_the_ttl(
    server: LiveServer, store_name: str
) -> None:
    """Reads return it; PATCH sets or clears it and rescales expires_at from created_at."""
    c = server.client()
    p = {"store": store_name}
    entry = _write(c, store_name, "Deploys need two approvals", importance="critical")
    ttl = _seconds(entry["expires_at"]) - _seconds(entry["created_at"])
    plain = _write(c, store_name, "Deploys happen on weekdays")
    plain_ttl = _seconds(plain["expires_at"]) - _seconds(plain["created_at"])
    assert entry["importance"] == 1.0 and plain["importance"] is None
    assert ttl == pytest.approx(4 * plain_ttl, abs=1) and plain_ttl == pytest.approx(691200, abs=1)
    assert c.get(f"/short/{entry['id']}", params=p).json()["importance"] == 1.0

    r = c.patch(f"/short/{entry['id']}", params=p, json={"importance": 0.25})
    assert r.status_code == 200, r.text
    low = r.json()
    assert low["importance"] == 0.25
    assert _seconds(low["expires_at"]) - _seconds(low["created_at"]) == pytest.approx(
        plain_ttl / 2, abs=1
    )
    cleared = c.patch(f"/short/{entry['id']}", params=p, json={"importance": None}).json()
    assert cleared["importance"] is None
    assert _seconds(cleared["expires_at"]) - _seconds(cleared["created_at"]) == pytest.approx(
        plain_ttl, abs=1
    )
    # A PATCH without importance leaves it as it is.
    c.patch(f"/short/{plain['id']}", params=p, json={"importance": "high"})
    assert (
        c.patch(f"/short/{plain['id']}", params=p, json={"topic": "ops"}).json()["importance"]
        == 0.75
    )
    loop = c.post("/near", params=p, json={"intent": "Renew the cert", "importance": "high"})
    assert loop.status_code == 201 and loop.json()["importance"] == 0.75
    batch = [{"content": "one", "importance": 0}, {"content": "two"}]
    ids = c.post("/short/batch", params=p, json={"items": batch}).json()["ids"]
    assert [c.get(f"/short/{i}", params=p).json()["importance"] for i in ids] == [0.0, None]


def _seconds(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


# The session block: several memories on the subject and one that must not be missed.
NOTES = [
    "The payments service deploys through the blue-green pipeline",
    "The payments service deploy takes about twelve minutes",
    "The payments service deploy pipeline posts to the releases channel",
    "The payments service deploy runs database migrations first",
]
# Less like the query than every note: last among the hits even with its ranking factor.
CRITICAL = "Nothing ships on Fridays: the settlement window is frozen"


@pytest.mark.parametrize("importance", [None, "critical"])
def test_context_keeps_the_critical_memory_under_a_tight_budget(
    server: LiveServer, store_name: str, importance: str | None
) -> None:
    """Under a budget for three of five memories, the critical one is in although it ranks
    last; unmarked, it is not."""
    c = server.client()
    for note in NOTES:
        _write(c, store_name, note)
    warning = _write(c, store_name, CRITICAL, importance=importance)["id"]
    query = "how does the payments service deploy?"
    hits = c.post("/search", params={"store": store_name}, json={"query": query}).json()
    assert [h["id"] for h in hits["results"]][-1] == warning
    body = {"query": query, "budget_tokens": 50}
    r = c.post("/context", params={"store": store_name}, json=body)
    assert r.status_code == 200, r.text
    block = r.json()
    assert block["tokens"] <= 50 and 1 <= len(block["ids"]) < len(NOTES) + 1
    assert (warning in block["ids"]) is (importance == "critical"), block


def test_export_and_import_keep_importance(server: LiveServer, store_name: str) -> None:
    """An archive carries each record's importance; importing it restores them."""
    c = server.client()
    p = {"store": store_name}
    high = _write(c, store_name, "The on-call rotation changes on Tuesdays", importance=0.9)
    unset = _write(c, store_name, "The office plants are watered on Fridays")
    loop = c.post("/near", params=p, json={"intent": "Check the rota", "importance": "low"}).json()
    archive = c.post("/export", params=p)
    assert archive.status_code == 200, archive.text
    target = {"store": f"{store_name}-copy"}
    r = c.post("/import", params=target, content=archive.content)
    assert r.status_code in (200, 201), r.text
    assert c.get(f"/short/{high['id']}", params=target).json()["importance"] == 0.9
    assert c.get(f"/short/{unset['id']}", params=target).json()["importance"] is None
    assert c.get(f"/near/{loop['id']}", params=target).json()["importance"] == 0.25


@pytest.mark.parametrize("via", ["http", "stdio proxy"])
def test_mcp_remember_takes_importance(
    server: LiveServer, store_name: str, via: str, tmp_path: Path
) -> None:
    """The official MCP client, over /mcp and through `halls mcp --server-url`: remember
    stores a level or a number; a bad one is a tool error that stores nothing."""

    async def work(session: ClientSession) -> tuple[dict[str, Any], dict[str, Any], str]:
        high = await call(
            session, "remember", content="Rotate the API keys quarterly", importance="critical",
            store=store_name,
        )  # fmt: skip
        number = await call(
            session, "remember", content="Tea is in the second cupboard", importance=0.3,
            store=store_name,
        )  # fmt: skip
        bad = await error(
            session, "remember", content="never stored", importance=2, store=store_name
        )
        return high, number, bad

    if via == "http":
        high, number, bad = asyncio.run(over_http(f"{server.url}/mcp", work))
    else:
        args = ["--server-url", server.url]
        high, number, bad = asyncio.run(over_stdio(args, tmp_path / "mcp.log", work))
    assert high["importance"] == 1.0 and number["importance"] == 0.3
    assert "importance" in bad
    with server.client() as c:
        listed = c.get("/short", params={"store": store_name}).json()
    assert sorted(e["importance"] for e in listed) == [0.3, 1.0]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_cli_remember_takes_importance(tmp_path: Path) -> None:
    """`halls remember --importance` stores a level or a number; a bad value is a usage error."""
    d = ("--data-dir", str(tmp_path / "data"), "--store", "cli")
    res = invoke("remember", "Backups are tested monthly", "--importance", "high", *d)
    assert res.exit_code == 0, res.output
    res2 = invoke("remember", "The printer is on floor 3", "--importance", "0.2", *d)
    assert res2.exit_code == 0, res2.output
    for bad in ("1.2", "urgent", "nan"):
        refused = invoke("remember", "never stored", "--importance", bad, *d)
        assert refused.exit_code == 2 and "importance" in refused.output, refused.output
    with Memory(Settings(data_dir=tmp_path / "data")) as m:
        got = {e.content: e.importance for e in m.list_short(store="cli")}
    assert got == {"Backups are tested monthly": 0.75, "The printer is on floor 3": 0.2}
