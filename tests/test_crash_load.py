"""Crash safety and load, shortened for CI: the real scripts, run as a user would.

The full-length runs (2,000 writes x 5 kills; 50 clients x 60 s) are in
docs/reliability.md with the commands that produced them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from conftest import REPO


def _script(name: str, *args: str, timeout: float) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts" / name), *args, "--json"],
        capture_output=True, text=True, env=env, timeout=timeout, cwd=REPO,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.slow
def test_acknowledged_writes_and_runs_survive_sigkill() -> None:
    """300 writes with 2 SIGKILLs, then 2 consolidation runs killed at random moments."""
    result = _script(
        "crash_test.py", "--writes", "300", "--kills", "2", "--entries", "600",
        "--run-kills", "2", "--seed", "7", "--time-limit", "420", timeout=480,
    )  # fmt: skip
    assert result["problems"] == []
    writes = result["writes"]
    assert writes["acknowledged"] == 300 and writes["kills"] == 2
    assert writes["integrity"] == "ok"
    # Two kills counted, each tried up to three times until it lands in a run.
    assert 2 <= len(result["runs"]) <= 6
    assert any(run["in_flight"] for run in result["runs"])
    for run in result["runs"]:
        assert run["outcome"] in ("applied", "not applied") and run["integrity"] == "ok"


@pytest.mark.slow
def test_concurrent_clients_mixing_writes_searches_and_runs() -> None:
    """10 clients for 10 s beside consolidation runs: no error, no lost write."""
    result = _script(
        "load_test.py", "--clients", "10", "--seconds", "10", "--seed-entries", "600",
        "--idle", "20", "--run-every", "4", timeout=300,
    )  # fmt: skip
    assert result["problems"] == []
    assert result["errors"] == 0 and result["lost"] == 0 and result["integrity"] == "ok"
    assert result["writes"] > 0 and result["load"]["search"]["n"] > 0 and result["runs"]
