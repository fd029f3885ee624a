"""Scheduling (thread mode, persisted due time) and the CLI: consolidate, runs, purge."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from clock_server import DAY, FakeClock, serve
from halls import Memory, Settings
from test_consolidate_http import PATHS, S, facts

# Personal data a write keeps (an SSN would be redacted): only a purge removes it.
IBAN = "DE89 3704 0044 0532 0130 00"


def _memory(data: Path, embedder: Any, clock: FakeClock, **cfg: Any) -> Memory:
    settings = Settings(
        data_dir=data,
        consolidator={"mode": "thread", "interval_seconds": 3600, "poll_seconds": 0.1, **cfg},
    )
    return Memory(settings, embedder=embedder, clock=clock)


def test_thread_mode_runs_when_due_and_the_due_time_survives_a_restart(tmp_path, embedder) -> None:
    """The thread runs a store once its due time passes; a restart keeps the due time."""
    clock, data = FakeClock(), tmp_path / "data"
    with serve(_memory(data, embedder, clock)) as server:
        c = server.client
        for days_ago, text in enumerate(PATHS[:2]):  # the clock stands still: not due yet
            r = c.post(
                "/short", params=S, json={"content": text, "occurred_at": clock() - days_ago * DAY}
            )
            assert r.status_code == 201
        due = c.get("/consolidate/status", params=S).json()
        assert due["mode"] == "thread" and due["last_run"] is None and due["checks"] >= 0
        assert c.get("/consolidate/runs", params=S).json()["runs"] == []
    with serve(_memory(data, embedder, clock)) as server:
        c = server.client
        again = c.get("/consolidate/status", params=S).json()
        assert again["next_due_at"] == due["next_due_at"]  # not reset by the restart
        clock.advance(3600)
        deadline = time.monotonic() + 60
        # A run is listed while it is still running: wait for its end.
        while (
            not (runs := c.get("/consolidate/runs", params=S).json()["runs"])
            or runs[0]["status"] == "running"
        ):
            assert time.monotonic() < deadline, "the scheduler never ran the due store"
            time.sleep(0.1)
        assert runs[0]["status"] == "done" and runs[0]["counts"]["promote"] == 1
        assert len(facts(c)) == 1
        after = c.get("/consolidate/status", params=S).json()
        assert after["next_due_at"] > due["next_due_at"]
        # Three more looks at the stores found it not due again: no second run.
        while c.get("/consolidate/status", params=S).json()["checks"] < after["checks"] + 3:
            assert time.monotonic() < deadline, "the scheduler stopped looking"
            time.sleep(0.05)
        assert len(c.get("/consolidate/runs", params=S).json()["runs"]) == 1


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    # A port nobody serves, so `halls purge` does not find a running server.
    env["HALLS_SERVER__PORT"] = "1"
    return subprocess.run(
        # --data-dir right after the command: `consolidate` is a group.
        [sys.executable, "-m", "halls", args[0], "--data-dir", str(data), *args[1:]],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_cli_consolidate_dry_run_runs_and_list(tmp_path, embedder) -> None:
    """`halls consolidate --dry-run` prints the plan, changes no memory and keeps the plan;
    `review` and `apply` apply it; a real run is listed."""
    clock, data = FakeClock(), tmp_path / "data"
    with _memory(data, embedder, clock, mode="external") as memory:
        for text in PATHS[:2]:
            memory.remember(text, store="s", occurred_at=clock())
            clock.advance(DAY)
    dry = _cli(data, "consolidate", "--store", "s", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "planned (dry run, no memory changed): promote 1" in dry.stdout
    plan_id = dry.stdout.split()[0]
    assert "planned" in _cli(data, "consolidate", "runs", "--store", "s").stdout
    assert "1. promote" in dry.stdout and "[pending]" in dry.stdout
    # Review the plan: a bad number is refused and changes nothing; approve, apply.
    bad = _cli(data, "consolidate", "review", plan_id, "--approve", "9", "--store", "s")
    assert bad.returncode == 1 and "has no action 9" in bad.stderr
    shown = _cli(data, "consolidate", "review", plan_id, "--store", "s")
    assert "[pending]" in shown.stdout
    approved = _cli(data, "consolidate", "review", plan_id, "--approve", "1", "--store", "s")
    assert approved.returncode == 0 and "[approved]" in approved.stdout
    applied = _cli(data, "consolidate", "apply", plan_id, "--store", "s")
    assert applied.returncode == 0 and f"{plan_id}  heuristic  done: promote 1" in applied.stdout
    again = _cli(data, "consolidate", "apply", plan_id, "--store", "s")
    assert again.returncode == 1 and "only a dry run's plan" in again.stderr
    undone = _cli(data, "consolidate", "revert", plan_id, "--store", "s")
    assert undone.returncode == 0 and "reverted" in undone.stdout
    real = _cli(data, "consolidate", "--store", "s")
    assert real.returncode == 0 and "done: promote 1" in real.stdout
    run_id = real.stdout.split()[0]
    listed = _cli(data, "consolidate", "runs", "--store", "s").stdout
    assert listed.startswith(run_id) and "promote 1" in listed
    reverted = _cli(data, "consolidate", "revert", run_id, "--store", "s")
    assert reverted.returncode == 0 and "reverted" in reverted.stdout
    bad = _cli(data, "consolidate", "revert", "nope", "--store", "s")
    assert bad.returncode == 1 and "not a valid run id" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_cli_purge_needs_confirm_then_removes_every_byte(tmp_path, embedder) -> None:
    """`halls purge` refuses without --confirm; with it the fact's bytes leave the files."""
    clock, data = FakeClock(), tmp_path / "data"
    with _memory(data, embedder, clock, mode="external") as memory:
        memory.remember(f"Chad's IBAN is {IBAN}", store="s", pinned=True)
        memory.remember("Chad likes tea", store="s", pinned=True)
        memory.consolidate(store="s")
        [fid] = [f.id for f in memory.list_long(store="s") if IBAN in f.content]
    files = lambda: b"".join(p.read_bytes() for p in data.glob("s.sqlite3*"))  # noqa: E731
    assert IBAN.encode() in files()
    refused = _cli(data, "purge", "--id", fid, "--store", "s")
    assert refused.returncode == 1 and "--confirm" in refused.stderr
    assert IBAN.encode() in files()
    done = _cli(data, "purge", "--id", fid, "--store", "s", "--confirm")
    assert done.returncode == 0, done.stderr
    assert f"purged {fid}" in done.stdout
    assert IBAN.encode() not in files()
    with Memory(Settings(data_dir=data), embedder=embedder) as memory:
        assert [f.content for f in memory.list_long(store="s")] == ["Chad likes tea"]
        [run] = memory.list_runs(store="s", limit=1)
        assert run.engine == "operator" and run.counts["purge"] == 1
    missing = _cli(data, "purge", "--id", fid, "--store", "s", "--confirm")
    assert missing.returncode == 1 and "no long-term fact" in missing.stderr
