"""The llm engine against a local OpenAI chat-completions stub, over live HTTP.

The stub (``openai_chat_stub.ChatStub``) is the user's model endpoint: it
answers scripted good JSON, broken JSON, HTTP errors, or is not there at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clock_server import DAY, FakeClock, InProcessServer, free_port, serve
from halls import Memory, Settings
from openai_chat_stub import ChatStub
from test_consolidate_http import PATHS, S, facts, kinds, paraphrases, remember, state


@pytest.fixture
def stub() -> Iterator[ChatStub]:
    with ChatStub() as s:
        yield s


@pytest.fixture
def llm_server(tmp_path: Path, embedder: Any, stub: ChatStub) -> Iterator[tuple[Any, FakeClock]]:
    clock = FakeClock()
    cfg = {
        "mode": "external",
        "engine": "llm",
        "model_url": stub.url,
        "model": "tiny-3b",
        "api_key": "sk-test-key",
    }
    memory = Memory(
        Settings(data_dir=tmp_path / "data", consolidator=cfg), embedder=embedder, clock=clock
    )
    with serve(memory) as server:
        yield server, clock


def _seed(server: InProcessServer, clock: FakeClock) -> None:
    paraphrases(server.client, clock, PATHS[:2])


def test_good_json_applies(llm_server, stub) -> None:
    """A valid answer writes the model's fact text and decision, noted in the action."""
    server, clock = llm_server
    stub.replies.append(
        json.dumps(
            {
                "fact": "Chad writes absolute paths in config files.",
                "decision": "ADD",
                "target_id": None,
                "reason": "a new preference",
            }
        )
    )
    _seed(server, clock)
    r = server.client.post("/consolidate/run", params=S)
    assert r.status_code == 201, r.text
    record = r.json()
    assert record["engine"] == "llm" and kinds(record) == ["promote"]
    action = record["actions"][0]
    assert action["reason"].startswith("llm: a new preference")
    assert action["engine_note"] == "decided by tiny-3b"
    [fact] = facts(server.client)
    assert fact["content"] == "Chad writes absolute paths in config files."
    assert fact["evidence_count"] == 2
    [req] = stub.requests
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test-key"
    assert req["body"]["model"] == "tiny-3b"
    assert "Chad prefers absolute paths" in req["body"]["messages"][-1]["content"]
    # The model's text was embedded: a search finds the fact by its own words.
    hits = server.client.post("/search", params=S, json={"query": "absolute paths in config"})
    assert hits.json()["results"][0]["id"] == fact["id"]


def test_good_json_update_supersedes(llm_server, stub) -> None:
    """The model's UPDATE of an offered fact supersedes it; a made-up target id is refused."""
    server, clock = llm_server
    c = server.client
    stub.replies.append('{"fact": "Chad prefers absolute paths.", "decision": "ADD"}')
    _seed(server, clock)
    c.post("/consolidate/run", params=S)
    [old] = facts(c)
    paraphrases(c, clock, ["Chad now likes ~ paths", "These days Chad uses ~ in paths"])
    stub.replies.append(
        '{"fact": "Chad prefers ~ paths.", "decision": "UPDATE", '
        '"target_id": "l_01M80YCVG916T9CTQ9BG6QPSX1"}'
    )  # not offered
    stub.replies.append(
        json.dumps(
            {
                "fact": "Chad prefers ~ paths.",
                "decision": "UPDATE",
                "target_id": old["id"],
                "reason": "changed his mind",
            }
        )
    )
    record = c.post("/consolidate/run", params=S).json()
    assert kinds(record) == ["supersede"] and record["actions"][0]["target_id"] == old["id"]
    assert c.get(f"/long/{old['id']}", params=S).json()["status"] == "superseded"
    assert [f["content"] for f in facts(c, "active")] == ["Chad prefers ~ paths."]


def test_broken_json_twice_falls_back_with_reason(llm_server, stub) -> None:
    """Broken JSON, retried once, broken again -> the heuristic decision, and why, recorded."""
    server, clock = llm_server
    stub.replies.extend(['{"fact": "Chad prefers absolute', "Sure! Here is the JSON: {fact}"])
    _seed(server, clock)
    r = server.client.post("/consolidate/run", params=S)
    assert r.status_code == 201, r.text
    [action] = r.json()["actions"]
    assert action["kind"] == "promote"
    assert action["engine_note"].startswith("llm answer invalid twice (invalid JSON")
    assert "heuristic decision used" in action["engine_note"]
    assert len(stub.requests) == 2
    [fact] = facts(server.client)
    assert fact["content"] in PATHS[:2]  # the heuristic's medoid, not a model's text


def test_broken_then_good_json_uses_the_retry(llm_server, stub) -> None:
    """One bad answer is retried; a good second answer is used."""
    server, clock = llm_server
    stub.replies.extend(
        [
            '{"decision": "MAYBE"}',
            '```json\n{"fact": "Chad uses absolute paths.", "decision": "ADD"}\n```',
        ]
    )
    _seed(server, clock)
    record = server.client.post("/consolidate/run", params=S).json()
    assert record["actions"][0]["engine_note"] == "decided by tiny-3b"
    assert [f["content"] for f in facts(server.client)] == ["Chad uses absolute paths."]


@pytest.mark.parametrize("down", ["http_error", "no_server"])
def test_endpoint_down_leaves_the_store_unchanged(tmp_path, embedder, stub, down) -> None:
    """An unreachable or failing endpoint aborts the run: 503, nothing changed, run recorded."""
    clock = FakeClock()
    stub.default = 500
    url = stub.url if down == "http_error" else f"http://127.0.0.1:{free_port()}/v1"
    cfg = {"mode": "external", "engine": "llm", "model_url": url, "timeout_seconds": 5}
    memory = Memory(
        Settings(data_dir=tmp_path / "data", consolidator=cfg), embedder=embedder, clock=clock
    )
    with serve(memory) as server:
        c = server.client
        paraphrases(c, clock, PATHS[:2])
        once = remember(c, "I had pasta for lunch today")
        clock.advance(9 * DAY)
        before = state(c)
        r = c.post("/consolidate/run", params=S)
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] == "consolidation_failed"
        assert "nothing changed" in r.json()["error"]["message"]
        assert state(c) == before and c.get(f"/short/{once}", params=S).status_code == 200
        [failed] = c.get("/consolidate/runs", params=S).json()["runs"]
        assert failed["status"] == "failed" and failed["actions"] == []
        assert "unavailable" in failed["error"]
        assert len(stub.requests) == (1 if down == "http_error" else 0)
