"""Abstention: a live server, a store about a software project, and questions it cannot answer.

Each hit carries a calibrated ``relevance`` (halls.recall.relevance); /search,
/context, the MCP recall tool and the CLI return only the hits that clear
``min_relevance``, so an unrelated question gets no hit instead of the five
nearest unrelated memories.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from mcp import ClientSession

from conftest import LiveServer
from halls.cli import main
from halls.recall.relevance import DEFAULT_MIN_RELEVANCE
from http_helpers import assert_error, counts
from mcp_scenario import over_http

PROJECT = [
    "The billing service stores invoices in PostgreSQL 16 on the db-billing-01 host.",
    "We deploy the API with a GitHub Actions workflow that builds a Docker image for GHCR.",
    "Code review rule: every pull request needs one approval from the platform team before merge.",
    "Staging runs on a single Hetzner box; production is on three nodes behind HAProxy.",
    "Mina decided we pin Python to 3.12 until the numpy wheels for 3.13 are stable.",
    "The nightly overdue-invoice email job failed twice last week because SMTP timed out.",
    "Frontend is a React app built with Vite; the design system lives in packages/ui.",
    "Tests run with pytest and a real PostgreSQL started by testcontainers, never mocks.",
    "Release notes go into CHANGELOG.md under Unreleased, one line per user-visible change.",
    "Feature flags are read from LaunchDarkly at startup and cached for five minutes.",
    "The on-call rotation changes every Monday at 10:00; Jonas is on call this week.",
    "We use ruff for linting and mypy in strict mode for type checks in CI.",
]
UNRELATED = "What is the capital of Mongolia?"
RELATED = "Which database do we keep the invoices in?"


@pytest.fixture(scope="module")
def project(server: LiveServer) -> str:
    store = "relevance-project"
    with server.client() as c:
        items = [{"content": t} for t in PROJECT]
        r = c.post("/short/batch", params={"store": store}, json={"items": items})
        assert r.status_code == 201, r.text
    return store


def _search(c: httpx.Client, store: str, **body: Any) -> httpx.Response:
    return c.post("/search", params={"store": store}, json={"reinforce": False, **body})


def test_unrelated_question_gets_no_hit(server: LiveServer, project: str) -> None:
    """A general-knowledge question about nothing in the store: no hit, at the default."""
    with server.client() as c:
        r = _search(c, project, query=UNRELATED)
        assert r.status_code == 200, r.text
        assert r.json()["results"] == []
        # Every hit there is would have scored: they are all below the threshold.
        every = _search(c, project, query=UNRELATED, min_relevance=0).json()["results"]
        assert len(every) == 5
        assert all(h["relevance"] < DEFAULT_MIN_RELEVANCE for h in every)


def test_related_question_still_finds_its_memory(server: LiveServer, project: str) -> None:
    with server.client() as c:
        hits = _search(c, project, query=RELATED).json()["results"]
    assert hits and hits[0]["content"] == PROJECT[0]
    assert all(DEFAULT_MIN_RELEVANCE <= h["relevance"] <= 1 for h in hits)


def test_min_relevance_zero_returns_hits_as_before(server: LiveServer, project: str) -> None:
    """0 returns the n best whatever their relevance, in score order."""
    with server.client() as c:
        hits = _search(c, project, query=UNRELATED, n_results=8, min_relevance=0).json()["results"]
    assert len(hits) == 8
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert all(0 <= h["relevance"] <= 1 for h in hits)


def test_min_relevance_one_is_allowed(server: LiveServer, project: str) -> None:
    """The bounds are valid values: 1 asks for certainty, which no hit reaches here."""
    with server.client() as c:
        r = _search(c, project, query=RELATED, min_relevance=1)
    assert r.status_code == 200 and r.json()["results"] == []


def test_context_for_unrelated_query_holds_no_relevant_memories(
    server: LiveServer, project: str
) -> None:
    with server.client() as c:
        unrelated = c.post("/context", params={"store": project}, json={"query": UNRELATED})
        related = c.post("/context", params={"store": project}, json={"query": RELATED})
        every = c.post(
            "/context", params={"store": project}, json={"query": UNRELATED, "min_relevance": 0}
        )
    assert unrelated.status_code == related.status_code == every.status_code == 200
    assert "Relevant memories" not in unrelated.json()["text"]
    assert "Relevant memories" in related.json()["text"] and PROJECT[0] in related.json()["text"]
    assert "Relevant memories" in every.json()["text"]


@pytest.mark.parametrize("bad", [-0.1, 1.5, "high", True, None, [0.5]])
def test_bad_min_relevance_is_refused_and_changes_nothing(
    server: LiveServer, project: str, bad: Any
) -> None:
    with server.client() as c:
        before = counts(c, project)
        for path in ("/search", "/context"):
            body = {"query": RELATED, "min_relevance": bad}
            r = c.post(path, params={"store": project}, json=body)
            assert_error(r, 422, "invalid_request")
        assert counts(c, project) == before


def test_library_refuses_bad_min_relevance(memory: Any) -> None:
    """The Python library checks it too (InvalidInput, a 400 over the wire)."""
    from halls.errors import InvalidInput

    memory.remember(PROJECT[0], store="lib")
    for bad in (-1, 2, float("nan"), "0.5", True):
        with pytest.raises(InvalidInput, match="min_relevance"):
            memory.search(RELATED, store="lib", min_relevance=bad)
        with pytest.raises(InvalidInput, match="min_relevance"):
            memory.context(store="lib", query=RELATED, min_relevance=bad)
    assert memory.search(UNRELATED, store="lib") == []
    assert [h.content for h in memory.search(RELATED, store="lib")] == [PROJECT[0]]
    assert len(memory.search(UNRELATED, store="lib", min_relevance=0)) == 1


def test_cli_recall_min_relevance(server: LiveServer, project: str, tmp_path: Path) -> None:
    runner = CliRunner()
    remote = ["--server-url", server.url, "--store", project]
    quiet = runner.invoke(main, ["recall", UNRELATED, *remote])
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stdout == "" and "no memories found" in quiet.stderr
    loud = runner.invoke(main, ["recall", UNRELATED, "--min-relevance", "0", "-n", "3", *remote])
    assert loud.exit_code == 0 and loud.stdout.count("\n") == 3
    bad = runner.invoke(main, ["recall", RELATED, "--min-relevance", "1.5", *remote])
    assert bad.exit_code == 2 and "min-relevance" in bad.stderr


def test_mcp_recall_abstains(server: LiveServer, project: str) -> None:
    """The MCP recall tool, with the official client: no hit for an unrelated question."""

    async def work(session: ClientSession) -> dict[str, Any]:
        out = {}
        for name, args in {
            "unrelated": {"query": UNRELATED},
            "related": {"query": RELATED},
            "every": {"query": UNRELATED, "min_relevance": 0},
            "bad": {"query": RELATED, "min_relevance": 2},
        }.items():
            out[name] = await session.call_tool("recall", {**args, "store": project})
        listed = await session.list_tools()
        out["doc"] = next(t for t in listed.tools if t.name == "recall").description
        return out

    got = asyncio.run(over_http(f"{server.url}/mcp", work))
    assert got["unrelated"].structuredContent["results"] == []
    related = got["related"].structuredContent["results"]
    assert related[0]["content"] == PROJECT[0] and related[0]["relevance"] >= DEFAULT_MIN_RELEVANCE
    assert len(got["every"].structuredContent["results"]) == 5
    assert got["bad"].isError and "min_relevance" in got["bad"].content[0].text
    assert "knows nothing" not in got["doc"] and "min_relevance" in got["doc"]


def test_searches_the_model_cannot_judge_are_not_thresholded(
    server: LiveServer, project: str
) -> None:
    """The bm25 retriever has no cosine: its hits have no relevance, and all come back."""
    with server.client() as c:
        hits = _search(c, project, query="invoices PostgreSQL", retriever="bm25").json()["results"]
        dense = _search(c, project, query=UNRELATED, retriever="dense").json()["results"]
    assert hits and hits[0]["content"] == PROJECT[0]
    assert all(h["relevance"] is None for h in hits)
    # The dense retriever is judged (by its cosine alone): still no hit.
    assert dense == []
