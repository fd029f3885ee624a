"""docs/tutorial.md runs: its shell blocks, in order, against a live server."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

TUTORIAL = REPO / "docs" / "tutorial.md"
DEFAULT_URL = "http://127.0.0.1:7420"


def tutorial_script(text: str, url: str) -> str:
    """The tutorial's shell blocks as one bash script against ``url``.

    Left out: `make run` (the test starts the server) and `claude ...` lines
    (they need Claude Code). `curl -s` becomes `curl -sSf`, so an HTTP error
    fails the script instead of printing a body nobody reads.
    """
    blocks = re.findall(r"^```sh\n(.*?)^```", text, flags=re.M | re.S)
    lines = ["set -euo pipefail"]
    for block in blocks:
        for line in block.splitlines():
            if line.strip() == "make run" or line.startswith("claude "):
                continue
            lines.append(line.replace(DEFAULT_URL, url).replace("curl -s ", "curl -sSf "))
    return "\n".join(lines) + "\n"


@pytest.mark.slow  # ~15 s: a server, the CLI, two consolidation runs
def test_the_tutorial_runs_against_a_live_server(server_factory, tmp_path: Path) -> None:
    """Every command of the tutorial but `make run` and `claude` works, with the results it says."""
    assert shutil.which("curl"), "the tutorial's commands need curl"
    live = server_factory()  # type: ignore[operator]
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    env.update(
        HOME=str(home),  # `halls install claude-code` writes ~/.claude/settings.json
        HALLS_DATA_DIR=str(live.data_dir),  # the CLI's own reads (`consolidate runs`)
        HALLS_SERVER__PORT=str(live.port),  # the CLI asks the server it is configured with
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    script = tutorial_script(TUTORIAL.read_text(encoding="utf-8"), live.url)
    assert "curl -sSf" in script and "halls recall" in script
    done = subprocess.run(
        ["bash", "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Chad prefers absolute paths in configs" in out
    assert "The deploy key lives in the vault" in out
    assert '"promote":1' in out and "promoted by evidence 2 >= 2" in out
    assert re.search(r"long\s+l_\w+\s+Mia prefers tabs over spaces in Go code", out)
    assert '"status":"reverted"' in out
    assert out.rstrip().endswith("[]")  # the last `GET /long`: the fact is withdrawn
    assert "-m halls hook session-start" in (home / ".claude" / "settings.json").read_text()


def test_a_failing_step_fails_the_script() -> None:
    """The script stops at an HTTP error or a failing command (synthetic tutorial)."""
    text = "```sh\ncurl -s http://127.0.0.1:7420/nowhere\n```\n\n```sh\nmake run\nclaude x\n```\n"
    script = tutorial_script(text, "http://127.0.0.1:1")
    assert "curl -sSf http://127.0.0.1:1/nowhere" in script
    assert "make run" not in script and "claude" not in script
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
