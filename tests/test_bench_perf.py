"""``halls bench perf``: the benchmark code at a tiny size, against live servers.

No timing is asserted: only that the benchmark drives a real server, that
what it reports is complete and self-consistent, and that it cleans up.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from halls.bench import perf
from halls.bench.corpus import memories, questions
from halls.cli import main

REPO = Path(__file__).resolve().parent.parent


def check_stage(stage: dict, size: int, added: int) -> None:
    assert stage["size"] == size
    assert stage["stored"] == size
    assert stage["ingest"]["count"] == added
    assert stage["ingest"]["seconds"] > 0
    # The rate is the count over the wall-clock seconds it took, rounded.
    expected = added / stage["ingest"]["seconds"]
    assert abs(stage["ingest"]["per_second"] - expected) <= 0.01 * expected + 0.1
    search = stage["search"]
    assert search["first_ms"] > 0
    assert 0 < search["p50_ms"] <= search["p95_ms"] <= search["p99_ms"] <= search["max_ms"]
    assert 0 < search["mean_ms"] <= search["max_ms"]
    assert stage["store_bytes"] > 0


def test_corpus_is_seeded_varied_and_sized() -> None:
    """The generated memories repeat per seed, vary within a run and hold 8-25 words."""
    first = memories(random.Random(3), 2000)
    assert first == memories(random.Random(3), 2000)
    assert first != memories(random.Random(4), 2000)
    assert len(set(first)) > 1900
    assert all(8 <= len(m.split()) <= 25 for m in first)
    asked = questions(random.Random(3), 200)
    assert len(set(asked)) > 150
    assert all(q.strip() for q in asked)


def test_run_against_a_live_server_reports_consistent_figures(server) -> None:
    """run() ingests cumulatively over HTTP, and its counts match the server's /stats."""
    result = perf.run(perf.Server(server.url), sizes=[80, 200], queries=20, batch=64)
    store = result["config"]["store"]
    assert result["config"]["sizes"] == [80, 200]
    assert result["machine"]["cpus"] >= 1
    assert [s["size"] for s in result["stages"]] == [80, 200]
    check_stage(result["stages"][0], 80, 80)
    check_stage(result["stages"][1], 200, 120)
    # No process id for a server the benchmark did not start: no CPU figures.
    assert result["stages"][0]["ingest"]["server_cpu_ms_per_memory"] is None
    stats = httpx.get(f"{server.url}/stats", params={"store": store}).json()
    assert stats["counts"]["short"] == 200
    assert len(perf.table_rows(result)) == 2
    assert all(len(row) == len(perf.TABLE_HEADERS) for row in perf.table_rows(result))


@pytest.mark.slow  # the benchmark end to end: its own server, two stages
def test_cli_starts_its_own_server_and_writes_json(tmp_path: Path) -> None:
    """`halls bench perf` starts a server, prints the table, writes the JSON, leaves nothing."""
    out = tmp_path / "perf.json"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    env["TMPDIR"] = str(scratch)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "halls",
            "bench",
            "perf",
            "--sizes",
            "150",
            "--queries",
            "10",
            "--batch",
            "100",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "memories" in done.stdout and "150" in done.stdout
    result = json.loads(out.read_text())
    (stage,) = result["stages"]
    check_stage(stage, 150, 150)
    # A server it started is measured in CPU time too.
    assert stage["ingest"]["server_cpu_ms_per_memory"] > 0
    assert stage["search"]["server_cpu_ms_per_search"] > 0
    # Its temporary data directory is gone with the server (torch may leave a cache dir).
    assert list(scratch.glob("halls-bench-*")) == []


def test_cli_refuses_bad_sizes_before_starting_anything() -> None:
    """Sizes that are not positive and increasing are a usage error (exit 2)."""
    runner = CliRunner()
    for sizes in ("10k,1k", "0", "ten", "1k,1k"):
        got = runner.invoke(main, ["bench", "perf", "--sizes", sizes])
        assert got.exit_code == 2, (sizes, got.output)
        assert "--sizes" in got.output
    got = runner.invoke(main, ["bench", "perf", "--sizes", "1k,10k", "--batch", "5000"])
    assert got.exit_code == 2
