"""Shared stores in one recall: a search or context reads several stores at once.

Over a live server with real SQLite stores and the real embedding model: an
agent's private store beside a team's store, both opened by a read-only
token; a token that does not open one of them gets nothing; writes still go
to exactly one store. And the same through the official MCP client.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import ClientSession

from conftest import LiveServer, start_server
from halls.models import Hit
from halls.service.shared import merged
from http_helpers import assert_error, created, snapshot
from mcp_scenario import over_http

ADMIN = "admin-token-0123456789abcdef"
READER = "reader-token-0123456789abcdef"  # reads "mine" and "team"
MINE_ONLY = "mine-only-token-0123456789abcdef"  # reads and writes "mine" only

MINE = [
    "Chad prefers absolute paths in every config file he writes.",
    "Chad's laptop runs Arch Linux with the sway window manager.",
]
TEAM = [
    "The team deploys the web app with Kamal every Friday afternoon.",
    "Code review on the team needs two approvals before a merge.",
]


def _config(tmp: Path) -> Path:
    cfg = {
        "server": {
            "bearer_token": ADMIN,
            "tokens": [
                {"id": "reader", "token": READER, "stores": ["mine", "team"], "read_only": True},
                {"id": "mine-only", "token": MINE_ONLY, "stores": ["mine"]},
            ],
        },
    }
    path = tmp / "halls.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    tmp = tmp_path_factory.mktemp("shared")
    server = start_server(tmp / "data", args=["--config", str(_config(tmp))])
    server.token = ADMIN
    admin = server.client()
    for store, notes in (("mine", MINE), ("team", TEAM)):
        for note in notes:
            created(admin, "/short", store, {"content": note})
    created(
        admin,
        "/near",
        "team",
        {
            "intent": "Ask who runs the Friday deploy",
            "trigger_type": "topic",
            "trigger_value": "deploy",
        },
    )
    yield server
    server.stop()


def _search(c: Any, body: dict[str, Any], store: str | None = None) -> Any:
    return c.post("/search", params={"store": store} if store else None, json=body)


def test_one_search_spans_a_private_and_a_shared_store_and_names_each_hits_store(live) -> None:
    reader = live.client(token=READER)
    r = _search(
        reader,
        {"query": "how does the team deploy the web app?", "stores": ["mine", "team"]},
    )
    assert r.status_code == 200, r.text
    hits = r.json()["results"]
    assert hits, r.text
    assert hits[0]["store"] == "team" and "Kamal" in hits[0]["content"]
    by_text = {h["content"]: h["store"] for h in hits}
    assert all(by_text[t] == "mine" for t in MINE if t in by_text)
    assert all(by_text[t] == "team" for t in TEAM if t in by_text)
    # The team's open loop is due on its topic; it names its store too.
    assert [(d["store"], d["intent"]) for d in r.json()["due"]] == [
        ("team", "Ask who runs the Friday deploy")
    ]

    # The other way round: the private store answers a question about Chad.
    hits = _search(
        reader, {"query": "what paths does Chad want in config files?", "stores": ["team", "mine"]}
    ).json()["results"]
    assert hits[0]["store"] == "mine" and "absolute paths" in hits[0]["content"]

    # n_results counts the merged list; min_relevance 0 keeps every store's hits.
    body = {
        "query": "Chad and the team",
        "stores": ["mine", "team"],
        "min_relevance": 0,
        "tiers": ["short"],
    }
    every = _search(reader, {**body, "n_results": 10}).json()["results"]
    assert {h["store"] for h in every} == {"mine", "team"}
    assert sorted(h["content"] for h in every) == sorted(MINE + TEAM)
    one = _search(reader, {**body, "n_results": 1}).json()["results"]
    assert len(one) == 1 and one[0]["id"] == every[0]["id"]


def test_one_store_in_stores_ranks_as_the_single_store_search(live) -> None:
    """score x relevance: with one store the factor is the same for every hit."""
    admin = live.client()
    body = {"query": "who deploys on Friday?", "min_relevance": 0, "reinforce": False}
    single = _search(admin, body, store="team").json()["results"]
    listed = _search(admin, {**body, "stores": ["team"]}).json()["results"]
    assert [(h["id"], h["score"]) for h in single] == [(h["id"], h["score"]) for h in listed]
    assert {h["store"] for h in single} == {"team"}


def test_a_store_the_token_cannot_read_is_refused_and_nothing_is_returned(live) -> None:
    mine_only = live.client(token=MINE_ONLY)
    for path, body in (
        ("/search", {"query": "how does the team deploy?"}),
        ("/context", {"query": "how does the team deploy?"}),
    ):
        r = mine_only.post(path, json={**body, "stores": ["mine", "team"]})
        err = assert_error(r, 403, "forbidden")
        assert "team" in err["message"]
        assert "Kamal" not in r.text
    # Its own store alone answers.
    r = _search(mine_only, {"query": "Chad's config paths", "stores": ["mine"]})
    assert r.status_code == 200 and r.json()["results"], r.text


def test_a_write_goes_to_exactly_one_store(live) -> None:
    admin, reader = live.client(), live.client(token=READER)
    before = {s: snapshot(admin, s) for s in ("mine", "team")}
    # The shared store with the read-only token: refused.
    r = reader.post("/short", params={"store": "team"}, json={"content": "sneaking in"})
    assert_error(r, 403, "forbidden")
    # Two stores named for one write (even by the admin): refused.
    r = admin.post(
        "/short", params=[("store", "mine"), ("store", "team")], json={"content": "both?"}
    )
    assert_error(r, 400, "invalid_input")
    # `stores` is a read's field: a write's body refuses it.
    r = admin.post(
        "/short", params={"store": "mine"}, json={"content": "both?", "stores": ["mine", "team"]}
    )
    assert r.status_code == 422, r.text
    assert {s: snapshot(admin, s) for s in ("mine", "team")} == before


def test_bad_store_lists_are_clear_4xx(live) -> None:
    admin = live.client()
    q = {"query": "deploy"}
    # Both ?store= and stores: which one was meant is a guess.
    assert_error(_search(admin, {**q, "stores": ["team"]}, store="mine"), 400, "invalid_input")
    assert_error(_search(admin, {**q, "stores": ["Not A Name"]}), 400, "invalid_store_name")
    assert_error(_search(admin, {**q, "stores": []}), 400, "invalid_input")
    too_many = [f"s{i}" for i in range(9)]
    assert_error(_search(admin, {**q, "stores": too_many}), 400, "invalid_input")
    # Not a list of names: the body's validation.
    assert _search(admin, {**q, "stores": "mine"}).status_code == 422
    assert _search(admin, {**q, "stores": ["mine", 3]}).status_code == 422
    assert_error(_search(admin, {**q, "stores": ["mine", "nowhere"]}), 404, "store_not_found")


def test_context_briefs_from_several_stores(live) -> None:
    reader = live.client(token=READER)
    r = reader.post(
        "/context",
        json={"query": "how does the team deploy the web app?", "stores": ["mine", "team"]},
    )
    assert r.status_code == 200, r.text
    block = r.json()
    assert "Kamal" in block["text"] and "Ask who runs the Friday deploy" in block["text"]
    # The default store is not in the reader's grant: without stores, refused.
    assert_error(reader.post("/context", json={}), 403, "forbidden")


def test_mcp_recall_and_context_take_stores(live) -> None:
    async def work(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        r = await session.call_tool(
            "recall", {"query": "how does the team deploy the web app?", "stores": ["mine", "team"]}
        )
        out["recall"] = (r.isError, json.loads(r.content[0].text))  # type: ignore[union-attr]
        r = await session.call_tool("context", {"query": "team deploy", "stores": ["mine", "team"]})
        out["context"] = (r.isError, r.content[0].text)  # type: ignore[union-attr]
        r = await session.call_tool(
            "recall", {"query": "deploy", "store": "mine", "stores": ["mine", "team"]}
        )
        out["both"] = (r.isError, r.content[0].text)  # type: ignore[union-attr]
        r = await session.call_tool(
            "remember", {"content": "written to the team's store", "store": "team"}
        )
        out["write"] = (r.isError, r.content[0].text)  # type: ignore[union-attr]
        return out

    async def mine_only(session: ClientSession) -> tuple[bool, str]:
        r = await session.call_tool("recall", {"query": "deploy", "stores": ["mine", "team"]})
        return r.isError, r.content[0].text  # type: ignore[union-attr]

    admin = live.client()
    before = snapshot(admin, "team")
    got = asyncio.run(over_http(f"{live.url}/mcp", work, READER))
    error, found = got["recall"]
    assert not error
    assert found["results"][0]["store"] == "team" and "Kamal" in found["results"][0]["content"]
    assert all(h["store"] in ("mine", "team") for h in found["results"])
    assert found["due"] and found["due"][0]["store"] == "team"
    assert not got["context"][0] and "Kamal" in got["context"][1]
    assert got["write"][0] and "read-only" in got["write"][1]
    assert got["both"][0] and "either `store` or `stores`" in got["both"][1]
    error, text = asyncio.run(over_http(f"{live.url}/mcp", mine_only, MINE_ONLY))
    assert error and "does not open store 'team'" in text and "Kamal" not in text
    assert snapshot(admin, "team") == before


def _hit(id: str, score: float, relevance: float | None) -> Hit:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return Hit(
        id=id,
        tier="short",
        content=id,
        topic=None,
        metadata={},
        occurred_at=at,
        created_at=at,
        score=score,
        relevance=relevance,
        score_detail={},
    )


def test_the_merge_discounts_each_stores_scores_by_its_relevance() -> None:
    """A store that likely knows nothing does not outrank one that does with its best hit."""
    sure = [_hit("s_a1", 0.8, 0.9), _hit("s_a2", 0.5, 0.9)]
    unsure = [_hit("s_b1", 1.0, 0.2)]  # the best of its search, in a store unlikely to answer
    got = merged([("a", sure), ("b", unsure)], 3)
    assert [(h.store, h.id) for h in got] == [("a", "s_a1"), ("a", "s_a2"), ("b", "s_b1")]
    assert merged([("a", sure), ("b", unsure)], 1)[0].id == "s_a1"
    # One factor per store (its best relevance): the journal's pass, with its
    # own relevance, does not reorder the store's hits, even at relevance 0.
    own = [_hit("s_a1", 0.9, 0.1), _hit("j_a2", 0.8, 0.6), _hit("s_a3", 0.7, 0.0)]
    assert [h.id for h in merged([("a", own)], 3)] == ["s_a1", "j_a2", "s_a3"]
    zero = [_hit("s_z2", 0.5, 0.0), _hit("s_z1", 0.9, 0.0)]
    assert [h.id for h in merged([("z", zero)], 2)] == ["s_z1", "s_z2"]
    # No relevance (the model cannot judge the search): the scores merge as they are.
    plain = merged([("a", [_hit("s_a1", 0.8, None)]), ("b", [_hit("s_b1", 1.0, None)])], 2)
    assert [h.id for h in plain] == ["s_b1", "s_a1"]
