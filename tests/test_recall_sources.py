"""A long-term fact hit carries the records it derives from (``Hit.sources``).

Through every interface that returns hits: HTTP (an in-process server with
an injected clock, so that TTLs run out), MCP (the official client against
the session's live server) and the CLI; facts made by real consolidation
runs on real SQLite files with the real embedding model. The choice itself
(``halls.recall.sources``) is pinned on values.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from mcp import ClientSession

from clock_server import DAY, FakeClock, InProcessServer, serve
from conftest import BOTH
from halls import Memory, Settings
from halls.cli import main
from halls.config import StorageSettings
from halls.models import Hit, JournalEvent, LongFact, NewJournal, ShortEntry
from halls.recall import sources
from mcp_scenario import call, over_http

S = {"store": "s"}
# Five paraphrases on five days: one fact derived from five entries.
PATHS = [
    "Chad prefers absolute paths in config files",
    "Chad likes to use absolute paths in his configs",
    "In configs, Chad wants paths written as absolute paths",
    "Chad insists on absolute paths inside configuration files",
    "Absolute paths are what Chad wants in every config file",
]
OTHER = "The staging database was moved to the Frankfurt region"
TOLD = "I prefer tabs over spaces in Python code."
SOURCE_KEYS = {"id", "tier", "content", "occurred_at", "metadata", "score"}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def live(
    tmp_path: Path, embedder: Any, clock: FakeClock, storage: StorageSettings
) -> Iterator[InProcessServer]:
    settings = Settings(
        data_dir=tmp_path / "data", storage=storage, consolidator={"mode": "external"}
    )
    with serve(Memory(settings, embedder=embedder, clock=clock)) as server:
        yield server


def search(c: httpx.Client, query: str, **options: Any) -> list[dict[str, Any]]:
    body = {"query": query, "n_results": 20, "min_relevance": 0, **options}
    r = c.post("/search", params=S, json=body)
    assert r.status_code == 200, r.text
    return list(r.json()["results"])


def consolidate(c: httpx.Client, store: dict[str, str] = S) -> dict[str, Any]:
    r = c.post("/consolidate/run", params=store)
    assert r.status_code == 201, r.text
    return dict(r.json())


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_a_fact_hit_shows_its_best_sources_over_http(live: InProcessServer, clock) -> None:
    """A fact from five entries shows the three that match the query best, each scored as
    its own hit's relevance (with the bm25 retriever too); other hits show none; once the
    entries age out, none is left."""
    c = live.client
    ids = []
    for text in PATHS:
        r = c.post("/short", params=S, json={"content": text, "metadata": {"n": len(ids)}})
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
        clock.advance(DAY)
    assert c.post("/short", params=S, json={"content": OTHER}).status_code == 201
    consolidate(c)
    [fact] = c.get("/long", params=S).json()
    assert sorted(fact["derived_from"]) == sorted(ids)

    hits = search(c, PATHS[3])
    by_id = {h["id"]: h for h in hits}
    [hit] = [h for h in hits if h["tier"] == "long"]
    assert all(h["sources"] == [] for h in hits if h["tier"] != "long")
    got = hit["sources"]
    assert len(got) == sources.MAX_SOURCES
    assert all(set(s) == SOURCE_KEYS and s["tier"] == "short" for s in got)
    # The entry the query repeats word for word is the best source.
    assert got[0]["id"] == ids[3] and got[0]["content"] == PATHS[3]
    assert got[0]["metadata"] == {"n": 3}
    scores = [s["score"] for s in got]
    assert scores == sorted(scores, reverse=True) and all(0 < x <= 1 for x in scores)
    # Each source's score is its relevance to the query as a hit of its own,
    # and those left out score no higher than the last one shown.
    assert set(ids) <= set(by_id), "every entry is also a hit here"
    for s in got:
        assert s["score"] == pytest.approx(by_id[s["id"]]["score_detail"]["relevance"], abs=1e-5)
        assert s["occurred_at"] == by_id[s["id"]]["occurred_at"]
    left = set(ids) - {s["id"] for s in got}
    assert all(by_id[i]["score_detail"]["relevance"] <= scores[-1] + 1e-6 for i in left)
    # Words alone: the entries the text search found score by their BM25, the rest 0.
    words = search(c, PATHS[3], retriever="bm25")
    [hit] = [h for h in words if h["tier"] == "long"]
    assert hit["sources"][0]["id"] == ids[3] and len(hit["sources"]) == sources.MAX_SOURCES
    relevance = {h["id"]: h["score_detail"]["relevance"] for h in words}
    assert all(s["score"] == pytest.approx(relevance.get(s["id"], 0.0), abs=1e-5)
               for s in hit["sources"])  # fmt: skip

    # The promoted entries age out (their TTL, then a run): the fact stays, its sources go.
    clock.advance(9 * DAY)
    aged = consolidate(c)
    assert {a["target_id"] for a in aged["actions"] if a["kind"] == "age_out"} >= set(ids)
    [hit] = [h for h in search(c, PATHS[3]) if h["tier"] == "long"]
    assert hit["id"] == fact["id"] and hit["sources"] == []


def test_mcp_recall_shows_a_facts_journal_source(server: Any, store_name: str) -> None:
    """A fact distilled from a journal event: MCP recall shows the event under the fact,
    compactly; the event is not in the ranked list (the journal is not searched)."""
    store = {"store": store_name}
    with server.client() as http:
        r = http.post(
            "/journal/batch",
            params=store,
            json={"items": [{"content": "Hi! Can you help me?", "role": "user"},
                            {"content": TOLD, "role": "user"}]},
        )  # fmt: skip
        assert r.status_code == 201, r.text
        told = r.json()["ids"][1]
        consolidate(http, store)

    async def work(session: ClientSession) -> dict[str, Any]:
        return await call(
            session, "recall", query="Tabs or spaces in Python?", store=store_name, n_results=5
        )

    found = asyncio.run(over_http(f"{server.url}/mcp", work))["results"]
    [fact] = [h for h in found if h["tier"] == "long"]
    assert "tabs" in fact["content"]
    [source] = fact["sources"]
    assert set(source) == {"id", "tier", "content", "occurred_at", "score"}
    assert (source["id"], source["tier"], source["content"]) == (told, "journal", TOLD)
    assert 0 < source["score"] <= 1
    assert all("sources" not in h for h in found if h["tier"] != "long")
    assert told not in {h["id"] for h in found}


def test_cli_recall_prints_a_facts_sources_under_it(tmp_path: Path, embedder: Any) -> None:
    """`halls recall` prints a "from" line per source under the fact; --json carries them."""
    data = tmp_path / "data"
    with Memory(Settings(data_dir=data), embedder=embedder) as m:
        [told] = m.journal([NewJournal(content=TOLD, role="user")])
        m.consolidate()
    args = ["recall", "tabs or spaces in Python", "--data-dir", str(data), "--min-relevance", "0"]
    out = CliRunner().invoke(main, args, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "  long   l_" in line)
    source = lines[at + 1].split(maxsplit=4)
    assert source[0] == "from" and source[2:] == ["journal", told.id, TOLD]
    assert 0 < float(source[1]) <= 1
    found = json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    [fact] = [h for h in found if h["tier"] == "long"]
    assert [s["id"] for s in fact["sources"]] == [told.id]


# -- the choice, on values --

T = datetime(2026, 1, 1, tzinfo=UTC)


def _hit(id: str, tier: str) -> Hit:
    return Hit(id=id, tier=tier, content=id, topic=None, metadata={}, occurred_at=T,
               created_at=T, score=1.0, relevance=None, score_detail={})  # fmt: skip


def _short(id: str) -> ShortEntry:
    return ShortEntry(id=id, content=f"text of {id}", occurred_at=T, created_at=T, expires_at=None)


def test_choose_keeps_the_best_scored_ties_by_the_facts_order_and_skips_unscored() -> None:
    """At most MAX_SOURCES, best first; equal scores keep the order the fact names them;
    a source with no score (not stored) is left out."""
    wanted = {"l_1": ["s_a", "s_b", "s_c", "s_d", "s_gone"], "l_2": ["s_gone"]}
    scores = {"s_a": 0.2, "s_b": 0.5, "s_c": 0.2, "s_d": 0.1}
    assert sources.choose(wanted, scores) == {"l_1": ["s_b", "s_a", "s_c"], "l_2": []}


def test_attach_shows_read_sources_and_never_a_private_event() -> None:
    """A private journal event is never shown, a summary one only as its summary line;
    hits without chosen sources are returned as they were."""
    private = JournalEvent(id="j_p", content="secret", occurred_at=T, created_at=T,
                           visibility="private")  # fmt: skip
    summary = JournalEvent(id="j_s", content="four words said here", role="user",
                           occurred_at=T, created_at=T, visibility="summary")  # fmt: skip
    records = {"s_a": _short("s_a"), "j_p": private, "j_s": summary}
    hits = [_hit("l_1", "long"), _hit("s_a", "short")]
    chosen = {"l_1": ["j_p", "s_a", "j_s", "s_unread"]}
    out = sources.attach(hits, chosen, records, {"s_a": 0.4, "j_s": 0.3})
    assert [(s.id, s.score) for s in out[0].sources] == [("s_a", 0.4), ("j_s", 0.3)]
    assert out[0].sources[1].content == "[summary] user event: content withheld (4 words)"
    assert out[1] is hits[1]


def test_derived_reads_only_fact_hits_sources() -> None:
    """Only a long-term hit's record gives sources, at most MAX_READ of them, once each."""
    many = [f"s_{i}" for i in range(sources.MAX_READ + 5)]
    fact = LongFact(id="l_1", content="x", occurred_at=T, created_at=T, first_seen=T,
                    last_confirmed=T, derived_from=[many[0], *many])  # fmt: skip
    got = sources.derived([_hit("l_1", "long"), _hit("s_a", "short")], {"l_1": fact})
    assert got == {"l_1": many[: sources.MAX_READ]}
