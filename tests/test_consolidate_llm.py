"""The llm engine against a local OpenAI chat-completions stub, over live HTTP.

The stub (``openai_chat_stub.ChatStub``) is the user's model endpoint: it
answers scripted good JSON, broken JSON, HTTP errors, or is not there at all.
Prompts that judge statement pairs (the pairs the local judge is unsure of)
are answered by a route of their own, so the scripted replies go to the
fact and forget prompts they were written for.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from clock_server import DAY, FakeClock, InProcessServer, free_port, serve
from halls import Memory, Settings
from halls.config import ConsolidatorSettings
from halls.consolidate.engine import EngineUnavailable
from halls.consolidate.judge import Pair, default_judge
from halls.consolidate.llm import SILENT_LIMIT, ChatClient, LLMJudge
from openai_chat_stub import ChatStub
from test_consolidate_http import PATHS, S, facts, kinds, paraphrases, remember, state

_PAIR = re.compile(r'^\d+\. earlier: "(.*)" / later: "(.*)"$', re.M)


def is_judging(body: dict[str, Any]) -> bool:
    return bool(body["messages"][-1]["content"].startswith("Pairs of statements"))


def judge_route(
    label: Callable[[str, str], str | None],
) -> Callable[[dict[str, Any]], str | int | None]:
    """Answer pair-judging prompts with ``label(earlier, later)`` per pair; others: the queue.

    ``label`` answering None for any pair makes the whole answer broken JSON.
    """

    def route(body: dict[str, Any]) -> str | None:
        if not is_judging(body):
            return None
        labels = [label(a, b) for a, b in _PAIR.findall(body["messages"][-1]["content"])]
        if None in labels:
            return '{"labels": ["same", '
        return json.dumps({"labels": labels})

    return route


def fact_requests(stub: ChatStub) -> list[dict[str, Any]]:
    return [r for r in stub.requests if not is_judging(r["body"])]


@pytest.fixture
def stub() -> Iterator[ChatStub]:
    with ChatStub() as s:
        # Paraphrases unless a test says otherwise.
        s.route = judge_route(lambda a, b: "same")
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
        "llm_judge_below": 1.0,  # every pair the clusterer or reconciler judges goes to the model
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
    [req] = fact_requests(stub)
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test-key"
    assert req["body"]["model"] == "tiny-3b"
    assert req["body"]["max_tokens"] == 512  # every answer bounded (consolidator.max_tokens)
    # The run record counts the questions asked (one a request here) and the fallbacks.
    assert record["counts"]["llm_calls"] == len(stub.requests) >= 2
    assert record["counts"]["llm_fallbacks"] == 0
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
    assert len(fact_requests(stub)) == 2
    # Counted in the run record: the one unusable fact answer (the judging ones were good).
    assert r.json()["counts"]["llm_fallbacks"] == 1
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
    stub.default, stub.route = 500, None  # judging prompts fail too
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


# Three things said twice each, a day apart: three clusters, three fact questions.
TOPICS = [
    PATHS[:2],
    ["Lena's dog Biscuit is a beagle", "Biscuit, Lena's dog, is a beagle"],
    ["Omar drinks his coffee black", "Omar takes his coffee black, no sugar"],
]


def test_no_answer_in_time_falls_back_and_a_silent_model_is_asked_no_more(
    tmp_path, embedder, stub
) -> None:
    """A model that never answers in time: each question waits timeout_seconds, is not
    retried, falls back to the local decision and is counted; after SILENT_LIMIT in a row
    the rest of the run is not asked. The run completes as the heuristic's would."""
    stub.gate = threading.Event()  # never opened: every request hangs past the timeout
    cfg = {
        "mode": "external",
        "engine": "llm",
        "model_url": stub.url,
        "model": "tiny-3b",
        "timeout_seconds": 0.5,
        "llm_judge_below": 1.0,
    }
    clock = FakeClock()
    memory = Memory(
        Settings(data_dir=tmp_path / "data", consolidator=cfg), embedder=embedder, clock=clock
    )
    with serve(memory) as server:
        c = server.client
        written = [i for texts in TOPICS for i in paraphrases(c, clock, texts)]
        r = c.post("/consolidate/run", params=S)
        assert r.status_code == 201, r.text
        record = r.json()
    counts = record["counts"]
    # One request a question (no retry), each cut at the timeout, then no more asked.
    assert len(stub.requests) == counts["llm_calls"] == SILENT_LIMIT
    assert counts["llm_timeouts"] == counts["llm_fallbacks"] == SILENT_LIMIT
    assert counts["llm_skipped"] >= 1
    assert kinds(record) == ["promote"] * 3
    notes = [a["engine_note"] for a in record["actions"]]
    assert any(n.startswith("llm: no answer within 0.5 s (ReadTimeout)") for n in notes), notes
    assert any(n.startswith("not asked: the model had not answered in time") for n in notes)
    # The heuristic's facts: each from its two entries, nothing lost.
    promoted = sorted(sorted(a["inputs"]) for a in record["actions"])
    assert promoted == sorted(sorted(written[n : n + 2]) for n in (0, 2, 4))


# -- the model as pair judge, with the local judge as fallback --

PAIRS = [
    ("Chad prefers absolute paths", "Chad now prefers ~ paths"),
    ("Omar plays the guitar", "Omar also plays the piano"),
    ("Lena works at Siemens", "Lena's employer is Siemens"),
]


def _judge(stub: ChatStub, embedder: Any, **cfg: Any) -> tuple[LLMJudge, list[Pair]]:
    settings = ConsolidatorSettings(engine="llm", model_url=stub.url, model="tiny-3b", **cfg)
    texts = sorted({t for p in PAIRS for t in p})
    vecs = dict(zip(texts, embedder.embed(texts), strict=True))
    pairs = [Pair(a, b, vecs[a], vecs[b]) for a, b in PAIRS]
    return LLMJudge(ChatClient(settings), default_judge(), settings), pairs


def test_the_model_judges_the_pairs_the_local_judge_is_unsure_of(stub, embedder) -> None:
    """Below llm_judge_below the model's label stands; one call for a batch of pairs."""
    stub.route = judge_route(lambda a, b: "update" if "now" in b else "unrelated")
    judge, pairs = _judge(stub, embedder, llm_judge_below=1.0)  # every pair is unsure
    got = judge.judge(pairs)
    assert [j.label for j in got] == ["update", "unrelated", "unrelated"]
    assert {j.by for j in got} == {"llm tiny-3b"} and len(stub.requests) == 1
    prompt = stub.requests[0]["body"]["messages"][-1]["content"]
    assert all(f'earlier: "{a}" / later: "{b}"' in prompt for a, b in PAIRS)
    # Confident local answers are not sent: with a bar of 0.01 nothing is asked.
    local = default_judge().judge(pairs)
    judge, _ = _judge(stub, embedder, llm_judge_below=0.01)
    assert judge.judge(pairs) == local and len(stub.requests) == 1


def test_a_bad_judging_answer_keeps_the_local_judges(stub, embedder) -> None:
    """Broken JSON, then a wrong number of labels: the local judge's answers, and it is counted."""
    stub.route = None
    stub.replies.extend(['{"labels": ["same"', '{"labels": ["same"]}'])
    judge, pairs = _judge(stub, embedder, llm_judge_below=1.0)
    assert judge.judge(pairs) == default_judge().judge(pairs)
    assert judge.failed == 1 and len(stub.requests) == 2


def test_the_judging_calls_are_bounded_and_a_down_endpoint_aborts(stub, embedder) -> None:
    """max_llm_items calls at most (16 pairs each); an HTTP error raises EngineUnavailable."""
    judge, pairs = _judge(stub, embedder, llm_judge_below=1.0, max_llm_items=1)
    many = pairs * 7  # 21 pairs: two batches, one allowed
    got = judge.judge(many)
    assert len(stub.requests) == 1
    assert [j.by for j in got] == ["llm tiny-3b"] * 16 + ["local"] * 5
    stub.route, stub.default = None, 500
    judge, _ = _judge(stub, embedder, llm_judge_below=1.0)
    with pytest.raises(EngineUnavailable):
        judge.judge(pairs)


def test_over_http_the_models_judgement_reconciles_when_its_fact_answer_fails(
    llm_server, stub
) -> None:
    """The fact prompt answers broken JSON twice: the decision falls back to the judge, which
    is the model for an unsure pair ("update" here), and the action says so."""
    server, clock = llm_server
    c = server.client
    stub.replies.append('{"fact": "Chad prefers absolute paths.", "decision": "ADD"}')
    _seed(server, clock)
    c.post("/consolidate/run", params=S)
    [old] = facts(c)
    stub.route = judge_route(lambda a, b: "update" if "absolute" in a and "~" in b else "same")
    paraphrases(c, clock, ["Chad writes ~ paths these days", "Chad uses ~ in paths lately"])
    stub.replies.extend(["not json", "still not json"])
    record = c.post("/consolidate/run", params=S).json()
    assert kinds(record) == ["supersede"], record["actions"]
    [action] = record["actions"]
    assert action["target_id"] == old["id"]
    assert "judge llm tiny-3b: update" in action["reason"]
    assert action["engine_note"].startswith("llm answer invalid twice")
    judged = [r for r in stub.requests if is_judging(r["body"])]
    assert judged, "the unsure pairs went to the model"


def test_over_http_a_broken_judging_answer_leaves_the_local_judge(llm_server, stub) -> None:
    """The judging prompt answers broken JSON: the run completes on the local judge's answers."""
    server, clock = llm_server
    stub.route = judge_route(lambda a, b: None)
    stub.replies.append('{"fact": "Chad prefers absolute paths.", "decision": "ADD"}')
    _seed(server, clock)
    record = server.client.post("/consolidate/run", params=S).json()
    assert any(is_judging(r["body"]) for r in stub.requests)
    assert record["status"] == "done" and kinds(record) == ["promote"]
    assert [f["content"] for f in facts(server.client)] == ["Chad prefers absolute paths."]
    # Each judging question was answered badly twice, and counted as fallen back.
    judged = sum(is_judging(r["body"]) for r in stub.requests)
    assert record["counts"]["llm_fallbacks"] == judged // 2 >= 1
