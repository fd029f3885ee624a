"""The hot set over a long session, and the terse notation, through a live ``halls serve``.

The scripted session (``halls.bench.scripted``: 200 user turns in ten
sessions, journaled as the UserPromptSubmit hook journals them, consolidated
after each session) fills the store past the hot set's budget; the block at
each session start stays within it, and every still-true seeded fact stays
recallable, cold ones among them.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from halls.bench.scripted import SESSIONS, still_true, turns
from halls.service.notation import TERSE, VERBOSE

HOT = 200  # context.hot_tokens' default


def _ok(r: httpx.Response, status: int = 200) -> Any:
    assert r.status_code == status, r.text
    return r.json()


@pytest.mark.slow
def test_hot_set_stays_in_budget_over_200_turns_and_cold_facts_stay_recallable(
    server: Any, store_name: str
) -> None:
    """After each of ten sessions' consolidation: /stats' hot set and the session-start block
    (no query) hold at most 200 tokens in both notations; at the end most facts are cold, and
    every still-true seeded fact is found by /search, the cold ones too."""
    p = {"store": store_name}
    said: dict[int, list[str]] = {}
    for session, text in turns():
        said.setdefault(session, []).append(text)
    assert sum(map(len, said.values())) == 200
    with server.client() as c:
        for session in range(SESSIONS):
            items = [
                {"content": t, "role": "user", "session_id": f"s{session}"} for t in said[session]
            ]
            _ok(c.post("/journal/batch", params=p, json={"items": items}), 201)
            _ok(c.post("/consolidate/run", params=p, json={}), 201)
            hot = _ok(c.get("/stats", params=p))["hot"]
            assert hot["budget_tokens"] == HOT
            for fmt, notation in (("verbose", VERBOSE), ("terse", TERSE)):
                assert 0 < hot[fmt]["tokens"] <= HOT, hot
                assert hot[fmt]["facts"] + hot[fmt]["cold"] == hot["active_facts"], hot
                start = _ok(c.post("/context", params={**p, "format": fmt}))
                assert 0 < start["tokens"] <= HOT, start
                assert start["text"].startswith(notation.header)
                assert len(start["ids"]) == hot[fmt]["facts"]
        # The store holds about twice what the hot set can: most facts went cold.
        assert hot["verbose"]["demand_tokens"] > 1.5 * HOT, hot
        assert hot["verbose"]["cold"] >= hot["active_facts"] // 3, hot
        # Terse fits more of the same facts in the same budget.
        assert hot["terse"]["facts"] > hot["verbose"]["facts"], hot
        shown = set(_ok(c.post("/context", params=p))["ids"])
        recalled_cold = 0
        for fact in still_true():
            hits = _ok(c.post("/search", params=p, json={"query": fact.question, "n_results": 5}))
            found = [
                h
                for h in hits["results"]
                if h["tier"] == "long" and fact.answer.lower() in h["content"].lower()
            ]
            assert found, (fact.key, fact.question, hits["results"][:2])
            recalled_cold += found[0]["id"] not in shown
        assert recalled_cold >= len(still_true()) // 3


def test_context_format_terse_and_bad_format(server: Any, store_name: str) -> None:
    """format terse (body or query) renders the notation with the same items; a bad format
    is 422 and the query overrides the body."""
    p = {"store": store_name}
    with server.client() as c:
        loop = _ok(
            c.post(
                "/near",
                params=p,
                json={"intent": "Ask whether the offsite is booked.", "trigger_type": "session"},
            ),
            201,
        )
        verbose = _ok(c.post("/context", params=p, json={}))
        terse = _ok(c.post("/context", params=p, json={"format": "terse"}))
        by_query = _ok(c.post("/context", params={**p, "format": "terse"}, json={}))
        assert terse == by_query
        assert verbose["ids"] == terse["ids"] == [loop["id"]]
        assert verbose["text"].endswith(f"- Ask whether the offsite is booked. [{loop['id']}]")
        assert (
            terse["text"] == f"{TERSE.header}\ndue:\nAsk whether offsite is booked [{loop['id']}]"
        )
        assert terse["tokens"] < verbose["tokens"]
        overridden = _ok(
            c.post("/context", params={**p, "format": "verbose"}, json={"format": "terse"})
        )
        assert overridden == verbose
        for bad in ({"format": "short"}, {"format": None}, {"format": 1}):
            r = c.post("/context", params=p, json=bad)
            assert r.status_code == 422, (bad, r.text)
        assert c.post("/context", params={**p, "format": "TERSE"}).status_code == 422
