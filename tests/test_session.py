"""The session-start block (/context): budget, due loops, ranking, dedup; pure, service and HTTP."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from halls import InvalidInput, Memory, Settings
from halls.models import Hit, LongFact, OpenLoop, new_id, to_datetime
from halls.service.session import (
    HEADER,
    assemble,
    due_loops,
    estimate_tokens,
    rank_facts,
    token_counter,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def fact(content: str, evidence: int = 1, days_ago: float = 0, status: str = "active") -> LongFact:
    when = NOW - timedelta(days=days_ago)
    return LongFact(
        id=new_id("long"),
        content=content,
        evidence_count=evidence,
        first_seen=when,
        last_confirmed=when,
        created_at=when,
        occurred_at=when,
        status=status,  # type: ignore[arg-type]
    )


def loop(intent: str, trigger: str, value: str | None = None, **kw: Any) -> OpenLoop:
    return OpenLoop(
        id=new_id("near"),
        intent=intent,
        trigger_type=trigger,
        trigger_value=value,  # type: ignore[arg-type]
        created_at=NOW - timedelta(days=3),
        occurred_at=NOW - timedelta(days=3),
        **kw,
    )


def hit(content: str, id: str | None = None, tier: str = "short") -> Hit:
    return Hit(
        id=id or new_id("short"),
        tier=tier,
        content=content,
        topic=None,
        metadata={},
        occurred_at=NOW,
        created_at=NOW,
        score=0.5,
        relevance=0.5,
        score_detail={},
    )


def test_due_loops_by_trigger() -> None:
    """session and past time triggers are due; future, expired, manual and off-topic are not."""
    past = loop("renew the TLS cert", "time", (NOW - timedelta(hours=1)).isoformat())
    future = loop("book the dentist", "time", (NOW + timedelta(days=2)).isoformat())
    session = loop("ask how the move went", "session")
    topic = loop("mention the tax deadline", "topic", "tax filing")
    manual = loop("someday: learn Rust", "manual")
    expired = loop("expired", "session", expires_at=NOW - timedelta(seconds=1))
    done = loop("done already", "session", status="done")
    loops = [future, session, topic, manual, expired, done, past]
    now = NOW.timestamp()
    # Ordered by when each became due: the session loop when it was made, 3 days ago.
    assert due_loops(loops, now, None) == [session, past]
    with_topic = due_loops(loops, now, "How is the Tax filing going?")
    assert {x.id for x in with_topic} == {past.id, session.id, topic.id}
    assert topic not in due_loops(loops, now, "tax refund")  # every topic word must appear


def test_facts_ranked_by_evidence_and_recency() -> None:
    """More evidence outranks less; among equals, the recently confirmed one wins; no demoted."""
    strong_old = fact("strong but old", evidence=20, days_ago=90)
    weak_new = fact("weak and new", evidence=1)
    weak_old = fact("weak and old", evidence=1, days_ago=200)
    demoted = fact("demoted", evidence=50, status="demoted")
    ranked = rank_facts(
        [weak_old, demoted, weak_new, strong_old], NOW.timestamp(), Settings().recall
    )
    assert ranked == [strong_old, weak_new, weak_old]


@pytest.mark.parametrize("budget", [10, 25, 50, 80, 200, 400])
def test_assemble_never_exceeds_budget(budget: int) -> None:
    """Whatever the inputs, the block's own token count is within budget (estimate counter)."""
    facts = [fact(f"fact number {i} " + "word " * (i % 40), evidence=i % 7 + 1) for i in range(300)]
    loops = [loop(f"loop {i} " + "x" * (i * 13), "session") for i in range(10)]
    hits = [hit(f"hit {i} " + "y " * i * 5) for i in range(8)]
    block = assemble(
        facts=facts, loops=loops, hits=hits, now=NOW.timestamp(), query="q", budget_tokens=budget
    )
    assert block.tokens == estimate_tokens(block.text) <= budget
    if block.ids:
        assert block.text.startswith(HEADER + "\nOpen loops due now:\n- loop 0 ")
    else:
        assert block.text == "" and block.tokens == 0
    assert bool(block.ids) == (budget >= 50)


def test_assemble_orders_dedups_and_shortens() -> None:
    """Loops first, then recalls, then facts; one copy of each memory; long items shortened."""
    f1 = fact("Chad prefers absolute paths in configs", evidence=5)
    long_fact = fact("z" * 5000)
    due = loop("Ask how the tax filing went", "session")
    dup_by_id = hit(f1.content, id=f1.id, tier="long")
    dup_by_text = hit("  chad PREFERS absolute   paths in configs ")
    fresh = hit("The CI runner has 2 cores")
    block = assemble(
        facts=[f1, long_fact],
        loops=[due],
        hits=[fresh, dup_by_id, dup_by_text],
        now=NOW.timestamp(),
        query="paths",
        budget_tokens=2000,
    )
    assert block.ids == [due.id, fresh.id, f1.id, long_fact.id]
    lines = block.text.splitlines()
    assert lines[:3] == [HEADER, "Open loops due now:", f"- Ask how the tax filing went [{due.id}]"]
    # The fact is a recall hit too: it is shown once, among the relevant memories.
    assert lines[3:6] == ["Relevant memories:", "- The CI runner has 2 cores", f"- {f1.content}"]
    assert lines[6] == "Long-term facts:"
    assert lines[7].startswith("- zzz") and lines[7].endswith("…") and len(lines[7]) == 302
    assert len(lines) == 8
    assert block.text.lower().count("absolute paths") == 1


def test_token_counter_uses_the_tokenizer(embedder: Any) -> None:
    """With a tokenizer, counts are the model's tokens (no special tokens); without, chars/4."""
    count = token_counter(embedder.tokenizer)
    text = "Chad prefers absolute paths in configs"
    assert count(text) == len(embedder.tokenizer.tokenize(text))
    assert token_counter(None)("x" * 9) == 3


def _seed_facts(memory: Memory, n: int) -> list[LongFact]:
    store = memory._stores.embedded("facts", create=True)
    texts = [
        f"Fact {i}: service {i % 37} runs on host {i % 11} and owner {i % 23} reviews its "
        f"deploys every {i % 5 + 1} weeks"
        for i in range(n)
    ]
    vectors = memory.embedder.embed(texts)
    now = memory.clock()
    facts = []
    for i, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        when = datetime.fromtimestamp(now - (i % 300) * 86400, tz=UTC)
        f = LongFact(
            id=new_id("long"),
            content=text,
            evidence_count=1 + (i * 7) % 30,
            first_seen=when,
            last_confirmed=when,
            created_at=when,
            occurred_at=when,
        )
        store.add_fact(f, vector)
        facts.append(f)
    return facts


@pytest.mark.slow
def test_context_budget_with_1000_facts(memory: Memory, embedder: Any) -> None:
    """With 1,000 facts, every budget holds by the model's tokenizer, best facts first; the
    facts shown are the hot set, which fills the budget when the hot set's budget is as wide."""
    facts = _seed_facts(memory, 1000)
    count = token_counter(embedder.tokenizer)
    best = rank_facts(facts, memory.clock(), memory.settings.recall)
    for budget in (50, 120, 400, 2000, 8000):
        block = memory.context(store="facts", budget_tokens=budget)
        assert block.tokens == count(block.text) <= budget
        assert block.ids == [f.id for f in best[: len(block.ids)]]
        assert 0 < len(block.ids) < 1000
    hot = memory.context(store="facts", budget_tokens=8000)
    assert 200 - 60 < hot.tokens <= memory.settings.context.hot_tokens == 200
    queried = memory.context(store="facts", query="who reviews service 12?", budget_tokens=400)
    assert queried.tokens == count(queried.text) <= 400
    assert "Relevant memories:" in queried.text
    memory.settings.context.hot_tokens = 8000
    wide = memory.context(store="facts", budget_tokens=8000)
    assert wide.tokens > 8000 - 60  # filled, not stopped early


def test_context_due_time_loop_appears_future_does_not(memory: Memory) -> None:
    """A time-triggered loop whose time has passed is in the block; a future one is not."""
    now = to_datetime(memory.clock())
    due = memory.add_loop(
        "Renew the TLS certificate for halls.example",
        store="loops",
        trigger_type="time",
        trigger_value=(now - timedelta(hours=2)).isoformat(),
    )
    later = (now + timedelta(days=3)).isoformat()
    future = memory.add_loop(
        "Book the dentist appointment", store="loops", trigger_type="time", trigger_value=later
    )
    memory.remember("The TLS certificate is issued by the internal CA", store="loops")
    block = memory.context(store="loops")
    assert due.id in block.ids and due.intent in block.text
    assert future.id not in block.ids and "dentist" not in block.text
    topical = memory.add_loop(
        "Mention the dentist's new address",
        store="loops",
        trigger_type="topic",
        trigger_value="dentist",
    )
    assert topical.id not in memory.context(store="loops").ids
    assert topical.id in memory.context(store="loops", query="when is the dentist?").ids


def test_context_refuses_bad_budget(memory: Memory) -> None:
    """A budget outside 50..8000 is InvalidInput, and an unknown store is not created."""
    for bad in (49, 8001, 0, True):
        with pytest.raises(InvalidInput, match="budget_tokens"):
            memory.context(budget_tokens=bad)  # type: ignore[arg-type]
    assert memory.context().text == ""  # empty default store: nothing to say


def test_http_context_endpoint(server: Any, store_name: str) -> None:
    """POST /context returns {text, ids, tokens}; bad budgets are 422 and unknown stores 404."""
    with server.client() as http:
        created = http.post(
            "/near",
            params={"store": store_name},
            json={"intent": "Ask about the offsite", "trigger_type": "session"},
        )
        assert created.status_code == 201
        got = http.post("/context", params={"store": store_name}, json={"budget_tokens": 100})
        assert got.status_code == 200
        body = got.json()
        assert set(body) == {"text", "ids", "tokens"}
        assert body["ids"] == [created.json()["id"]] and "Ask about the offsite" in body["text"]
        assert 0 < body["tokens"] <= 100
        assert http.post("/context", params={"store": store_name}).status_code == 200
        for bad in ({"budget_tokens": 10}, {"budget_tokens": 9000}, {"budgett": 5}):
            assert http.post("/context", params={"store": store_name}, json=bad).status_code == 422
        missing = http.post("/context", params={"store": "no-such-store-x"}, json={})
        assert missing.status_code == 404
