"""Consolidation runs as jobs, watched as they go: over HTTP (polled and as
Server-Sent Events), MCP (the official client, HTTP and stdio with progress
notifications) and the CLI (a subprocess, so no terminal: plain lines).

A live ``halls serve`` and real stores of a few hundred entries from the
consolidation bench's corpus, so that a run takes long enough to be seen
running, and makes facts.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from clock_server import free_port, serve
from halls import Memory, Settings
from halls.bench.consolidate import DAY, corpus
from mcp_scenario import call, error

REPO = Path(__file__).resolve().parent.parent
ENTRIES = 400


def fill(c: httpx.Client, store: str, n: int = ENTRIES) -> None:
    """``n`` entries of the bench's corpus (recurring facts and one-off remarks) over ten days."""
    items = [
        {
            "content": e.content,
            "occurred_at": datetime.fromtimestamp(float(e.occurred_at), UTC).isoformat(),
        }
        for e in corpus(n, 7, time.time() - 10 * DAY)
    ]
    r = c.post("/short/batch", params={"store": store}, json={"items": items})
    assert r.status_code == 201, r.text


def watch(c: httpx.Client, job: dict[str, Any], store: str) -> list[dict[str, Any]]:
    """Every state of the job seen by polling until it ends, in order."""
    seen = [job]
    deadline = time.monotonic() + 300
    while seen[-1]["status"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.01)
        r = c.get(f"/consolidate/jobs/{job['id']}", params={"store": store})
        assert r.status_code == 200, r.text
        seen.append(r.json())
    return seen


def test_job_over_http_reports_progress_then_its_run(server: Any, store_name: str) -> None:
    c = server.client()
    fill(c, store_name)
    r = c.post("/consolidate/run", params={"store": store_name}, json={"wait": False})
    assert r.status_code == 202, r.text
    job = r.json()
    assert job["id"].startswith("job_") and job["store"] == store_name
    assert job["status"] in ("queued", "running") and job["run"] is None
    assert r.headers["location"] == f"/consolidate/jobs/{job['id']}?store={store_name}"

    # One job at a time per store: the second start names the first.
    again = c.post("/consolidate/run", params={"store": store_name}, json={"wait": False})
    assert again.status_code == 409, again.text
    assert job["id"] in again.json()["error"]["message"]

    seen = watch(c, job, store_name)
    final = seen[-1]
    assert final["status"] == "done", final
    running = [s for s in seen if s["status"] == "running" and s["stage"]]
    # Progress arrived before the run ended, with a stage and its counts.
    assert running, seen
    assert all(0 <= s["done"] <= s["total"] for s in running if s["total"])
    stages = {s["stage"] for s in running}
    assert stages & {"clustering", "parsing", "judging", "candidates", "reconciling"}, stages
    assert any(s["total"] >= ENTRIES for s in running if s["stage"] == "clustering") or (
        "clustering" not in stages
    )
    assert final["elapsed_seconds"] > 0 and final["finished_at"] is not None
    record = final["run"]
    assert record["id"].startswith("r_") and record["status"] == "done"
    assert record["counts"].get("promote", 0) > 0, record["counts"]
    # The run is durable as any run: its record is in the store.
    r = c.get(f"/consolidate/runs/{record['id']}", params={"store": store_name})
    assert r.status_code == 200 and r.json()["counts"] == record["counts"]

    # A job is found only on its own store; an unknown id is 404, a malformed one 400.
    other = c.get(f"/consolidate/jobs/{job['id']}", params={"store": store_name + "-other"})
    assert other.status_code == 404, other.text
    unknown = c.get(f"/consolidate/jobs/job_{'0' * 32}", params={"store": store_name})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    bad = c.get("/consolidate/jobs/nope", params={"store": store_name})
    assert bad.status_code == 400 and "/" not in bad.json()["error"]["message"]
    # The synchronous run is still the default.
    r = c.post("/consolidate/run", params={"store": store_name})
    assert r.status_code == 201 and r.json()["id"].startswith("r_")


def events(c: httpx.Client, path: str, store: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    with c.stream("GET", path, params={"store": store}) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        kind = ""
        for line in r.iter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                out.append((kind, json.loads(line.removeprefix("data: "))))
    return out


def test_job_events_stream_until_done(server: Any, store_name: str) -> None:
    c = server.client()
    fill(c, store_name)
    job = c.post("/consolidate/run", params={"store": store_name}, json={"wait": False}).json()
    got = events(c, f"/consolidate/jobs/{job['id']}/events", store_name)
    kinds = [k for k, _ in got]
    assert kinds[-1] == "done" and set(kinds[:-1]) == {"progress"}, kinds
    assert any(d["stage"] and d["total"] for k, d in got if k == "progress"), got
    assert got[-1][1]["run"]["status"] == "done"
    # Each event says something new.
    states = [(d["status"], d["stage"], d["done"], d["total"]) for _, d in got]
    assert len(states) == len(set(states))
    missing = c.get(f"/consolidate/jobs/job_{'1' * 32}/events", params={"store": store_name})
    assert missing.status_code == 404


async def _http_session(url: str, work: Any) -> Any:
    async with (
        httpx.AsyncClient(timeout=60) as client,
        streamable_http_client(url, http_client=client) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await work(session)


def test_mcp_consolidate_start_and_job(server: Any, store_name: str) -> None:
    fill(server.client(), store_name)

    async def work(session: ClientSession) -> list[dict[str, Any]]:
        job = await call(session, "consolidate", action="start", store=store_name)
        seen = [job]
        while seen[-1]["status"] in ("queued", "running"):
            await asyncio.sleep(0.02)
            now = await call(session, "consolidate", action="job", id=job["id"], store=store_name)
            seen.append(now)
        assert "needs the job's id" in await error(session, "consolidate", action="job")
        missing = await error(session, "consolidate", action="job", id=f"job_{'2' * 32}")
        assert "no consolidation job" in missing
        return seen

    seen = asyncio.run(_http_session(f"{server.url}/mcp", work))
    assert seen[-1]["status"] == "done" and seen[-1]["run"]["status"] == "done"
    assert any(s["status"] == "running" and s["stage"] and s["total"] for s in seen), seen


def test_mcp_stdio_run_sends_progress_notifications(
    server: Any, store_name: str, tmp_path: Path
) -> None:
    """`halls mcp --server-url`: a run asked with a progress token reports its stages."""
    fill(server.client(), store_name)
    notes: list[tuple[float, float | None, str | None]] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        notes.append((progress, total, message))

    async def work(session: ClientSession) -> Any:
        return await session.call_tool(
            "consolidate", {"action": "run", "store": store_name}, progress_callback=progress
        )

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "halls", "mcp", "--server-url", server.url, "--tools", "all"],
        cwd=REPO,
        env={k: v for k, v in os.environ.items() if not k.startswith("HALLS_")},
    )

    async def session() -> Any:
        with open(tmp_path / "mcp.log", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                return await work(s)

    result = asyncio.run(session())
    assert not result.isError, result.content
    assert result.structuredContent["status"] == "done"
    assert notes, "no progress notification"
    values = [v for v, _, _ in notes]
    assert values == sorted(values) and len(set(values)) == len(values)  # MCP: increasing
    stage, counts = str(notes[-1][2]).rsplit(" ", 1)
    done, total = (int(x) for x in counts.split("/"))
    assert stage and 0 <= done <= total


def _halls(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "halls", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}, **env},
    )


def _progress_lines(stderr: str) -> list[tuple[str, int, int]]:
    out = []
    for line in stderr.splitlines():
        if line.startswith("consolidating: "):
            stage, counts = line.removeprefix("consolidating: ").rsplit(" ", 1)
            done, total = counts.split("/")
            out.append((stage, int(done), int(total)))
    return out


def test_cli_prints_progress_lines_without_a_terminal(tmp_path: Path, embedder: Any) -> None:
    data = tmp_path / "data"
    now = time.time()
    with Memory(Settings(data_dir=data), embedder=embedder) as memory:
        memory.remember_many(corpus(ENTRIES, 7, now - 10 * DAY), store="s")
    done = _halls("consolidate", "--data-dir", str(data), "--store", "s")
    assert done.returncode == 0, done.stderr
    lines = _progress_lines(done.stderr)
    assert lines, done.stderr
    assert {s for s, _, _ in lines} & {"clustering", "judging", "reconciling"}, lines
    assert all(0 <= d <= t for _, d, t in lines if t)
    assert done.stdout.startswith("r_") and "promote" in done.stdout


def test_cli_against_a_server_shows_its_jobs_progress(server: Any, store_name: str) -> None:
    fill(server.client(), store_name)
    done = _halls("consolidate", "--server-url", server.url, "--store", store_name, "--json")
    assert done.returncode == 0, done.stderr
    assert _progress_lines(done.stderr), done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "done" and record["counts"].get("promote", 0) > 0
    r = server.client().get(f"/consolidate/runs/{record['id']}", params={"store": store_name})
    assert r.status_code == 200
    # --server-url is for a run; a subcommand refuses it.
    bad = _halls("consolidate", "--server-url", server.url, "runs")
    assert bad.returncode == 2 and "--server-url" in bad.stderr


def test_a_failed_run_is_a_failed_job_with_its_error(tmp_path: Path, embedder: Any) -> None:
    """The llm engine's endpoint is not there: the job fails with the run's error
    (503's code), nothing changes, and the store is free for the next job."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    cfg = {"mode": "external", "engine": "llm", "model_url": url, "timeout_seconds": 5}
    memory = Memory(Settings(data_dir=tmp_path / "data", consolidator=cfg), embedder=embedder)
    with serve(memory) as server:
        c = server.client
        fill(c, "s", 120)
        r = c.post("/consolidate/run", params={"store": "s"}, json={"wait": False})
        assert r.status_code == 202, r.text
        final = watch(c, r.json(), "s")[-1]
        assert final["status"] == "failed" and final["run"] is None, final
        assert final["error"]["code"] == "consolidation_failed"
        assert "nothing changed" in final["error"]["message"]
        assert "Traceback" not in final["error"]["message"]
        assert c.get("/long", params={"store": "s"}).json() == []
        again = c.post("/consolidate/run", params={"store": "s"}, json={"wait": False})
        assert again.status_code == 202, again.text
        watch(c, again.json(), "s")
