"""Open loops that fire: due by time, topic and session, in /context and recall; cancelled never.

Through HTTP on an in-process server with an injected clock, so a time
trigger comes due without waiting; the hooks' project-aware session start
runs the real ``halls hook`` against a live server.
"""

from __future__ import annotations

import itertools
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from clock_server import DAY, FakeClock, InProcessServer, serve
from halls.config import Settings
from halls.models import to_datetime
from halls.service import Memory
from halls.service.notation import TERSE, VERBOSE, terse_text
from test_install import halls

S = {"store": "loops"}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def live(tmp_path: Path, embedder: Any, clock: FakeClock) -> Iterator[InProcessServer]:
    settings = Settings(data_dir=tmp_path / "data", consolidator={"mode": "external"})
    with serve(Memory(settings, embedder=embedder, clock=clock)) as server:
        yield server


def loop(c: httpx.Client, intent: str, trigger: str, value: str | None = None) -> str:
    body = {"intent": intent, "trigger_type": trigger, "trigger_value": value}
    r = c.post("/near", params=S, json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def due(c: httpx.Client, **params: str) -> dict[str, str]:
    r = c.get("/near/due", params={**S, **params})
    assert r.status_code == 200, r.text
    return {d["id"]: d["reason"] for d in r.json()}


def due_section(block: dict[str, Any]) -> str:
    """The block's due loops' lines, verbose or terse (open loops may also be recalled)."""
    text = str(block["text"])
    for heading in (VERBOSE.sections["loops"], TERSE.sections["loops"]):
        if f"\n{heading}\n" in text:
            break
    else:
        return ""
    lines = []
    for line in text.split(f"\n{heading}\n", 1)[1].splitlines():
        if line in TERSE.sections.values() or line in VERBOSE.sections.values():
            break
        lines.append(line)
    return "\n".join(lines)


def test_due_loops_fire_in_context_and_recall_cancelled_never(
    live: InProcessServer, clock: FakeClock
) -> None:
    """Each trigger fires when it should, everywhere loops are shown; a cancelled one never."""
    c = live.client
    tomorrow = to_datetime(clock() + DAY).isoformat()
    session = loop(c, "Ask Priya how the offsite planning is going", "session")
    timed = loop(c, "Renew the TLS certificate of the status page", "time", tomorrow)
    topic = loop(c, "Remind Priya that the tax filing deadline moved", "topic", "tax filing")
    manual = loop(c, "Look into faster CI runners some day", "manual")
    dropped = loop(c, "Ask Priya about her tax filing software", "session")
    c.post("/short", params=S, json={"content": "Priya handles the team's tax filing"})

    cancelled = c.post(f"/near/{dropped}/cancel", params=S)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert c.post(f"/near/{dropped}/cancel", params=S).status_code == 409
    assert c.post(f"/near/{dropped}/complete", params=S).status_code == 409
    assert c.post("/near/n_00000000000000000000000000/cancel", params=S).status_code == 404
    assert c.post("/near/bad-id/cancel", params=S).status_code == 400

    # Now: the session loop always; the topic loop only when its words come up.
    assert due(c) == {session: "raised at the start of a session"}
    assert due(c, query="how is the Tax Filing going?") == {
        session: "raised at the start of a session",
        topic: "the topic came up (filing, tax)",
    }
    searched = c.post("/search", params=S, json={"query": "who does our tax filing?"}).json()
    assert [d["id"] for d in searched["due"]] == [session, topic]
    assert searched["results"][0]["content"] == "Priya handles the team's tax filing"
    only_long = c.post(
        "/search", params=S, json={"query": "who does our tax filing?", "tiers": ["long"]}
    )
    assert only_long.json()["due"] == []  # loops are not searched, so none are raised
    block = c.post("/context", params=S, json={"query": "tax filing"}).json()
    raised = due_section(block)
    assert session in raised and topic in raised and timed not in raised

    # A day later the time trigger has come due too.
    clock.advance(DAY + 60)
    now = due(c)
    assert set(now) == {session, timed} and now[timed].startswith("its time came")
    block = c.post("/context", params=S, json={}).json()
    raised = due_section(block)
    assert session in raised and timed in raised and manual not in raised
    # A cancelled loop is not even searchable any more, so no part of the block shows it.
    block = c.post("/context", params=S, json={"query": "tax filing software"}).json()
    assert dropped not in block["ids"] and "her tax filing software" not in block["text"]
    assert dropped not in due(c, query="tax filing software")
    searched = c.post("/search", params=S, json={"query": "Priya tax filing software"}).json()
    assert dropped not in {h["id"] for h in searched["results"]}

    # Completing removes a loop from everything due.
    assert c.post(f"/near/{timed}/complete", params=S).status_code == 200
    assert timed not in due(c)


def test_due_refuses_bad_input(live: InProcessServer) -> None:
    """An over-long project or query is 422; an unknown store is 404."""
    c = live.client
    assert c.get("/near/due", params={**S, "project": "p" * 201}).status_code == 422
    assert c.get("/near/due", params={**S, "query": "q" * 2001}).status_code == 422
    assert c.get("/near/due", params={"store": "no-such-store"}).status_code == 404
    assert c.post("/context", params=S, json={"project": "p" * 201}).status_code == 422


PROJECTS = {
    "atlas": [
        "The atlas repository deploys to Fly.io from GitHub Actions on every tag",
        "atlas keeps its database migrations in the migrations folder, numbered",
    ],
    "zephyr": [
        "The zephyr service runs PostgreSQL 16 with logical replication",
        "zephyr releases are cut on Thursdays by Marta",
    ],
}


def _repo(root: Path, name: str, remote: str) -> Path:
    path = root / name
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def test_session_start_hook_puts_the_projects_memories_first(
    server: Any, store_name: str, tmp_path: Path
) -> None:
    """In two projects, each session-start block shows that project's memories first, in the
    terse notation (the hook's default) and the verbose one."""
    with server.client() as http:
        for texts in PROJECTS.values():
            for text in texts:
                r = http.post("/short", params={"store": store_name}, json={"content": text})
                assert r.status_code == 201
        topical = http.post(
            "/near",
            params={"store": store_name},
            json={
                "intent": "Rotate the zephyr replication password",
                "trigger_type": "topic",
                "trigger_value": "zephyr",
            },
        )
        assert topical.status_code == 201
    # atlas is found by its directory name; zephyr's checkout has another
    # directory name and is known by its git remote.
    dirs = {
        "atlas": _repo(tmp_path, "atlas", "git@example.org:acme/atlas.git"),
        "zephyr": _repo(tmp_path, "checkout-2", "https://example.org/acme/zephyr.git"),
    }
    for (project, cwd), fmt in itertools.product(dirs.items(), ("terse", "verbose")):
        event = json.dumps({"source": "startup", "cwd": str(cwd)})
        chosen = () if fmt == "terse" else ("--format", fmt)
        out = halls(
            tmp_path,
            "hook",
            "session-start",
            "--server-url",
            server.url,
            "--store",
            store_name,
            *chosen,
            stdin=event,
        )
        assert out.returncode == 0 and out.stderr == "", out.stderr
        text = out.stdout
        assert text.startswith(TERSE.header if fmt == "terse" else VERBOSE.header), text
        written = terse_text if fmt == "terse" else str
        other = next(p for p in PROJECTS if p != project)
        ours = [text.find(written(t)) for t in PROJECTS[project]]
        theirs = [text.find(written(t)) for t in PROJECTS[other] if written(t) in text]
        assert all(i >= 0 for i in ours), text
        assert all(max(ours) < j for j in theirs), text
        raised = due_section({"text": text})
        raises = written("Rotate the zephyr replication password") in raised
        assert raises == (project == "zephyr")


def test_user_prompt_hook_adds_relevant_memories_only_when_asked(
    server: Any, store_name: str, tmp_path: Path
) -> None:
    """Off by default (the reminder alone); with --prompt-tokens, the best memories in budget."""
    fact = "The staging cluster is reset every Sunday at 02:00 UTC"
    with server.client() as http:
        assert (
            http.post("/short", params={"store": store_name}, json={"content": fact}).status_code
            == 201
        )
    common = ("hook", "user-prompt", "--server-url", server.url, "--store", store_name)
    event = json.dumps({"prompt": "When does the staging cluster get reset?"})
    plain = halls(tmp_path, *common, stdin=event)
    assert plain.returncode == 0 and fact not in plain.stdout and "recall" in plain.stdout
    rich = halls(tmp_path, *common, "--prompt-tokens", "60", stdin=event)
    assert rich.returncode == 0 and rich.stderr == ""
    assert rich.stdout.startswith("halls memories that may bear on this request:")
    assert fact in rich.stdout and "recall" in rich.stdout
    memories = rich.stdout.split("\n\n")[0]
    assert len(memories) <= 60 * 4
