"""First-hour mistakes, each met by the real CLI (a subprocess) with one clear line.

A taken port, a misspelt key in the config file and a misspelt ``HALLS_*``
variable used to pass in silence or after a false "serving on".
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m halls ARGS`` in a clean environment plus ``env``."""
    full = {k: v for k, v in os.environ.items() if not k.upper().startswith("HALLS_")}
    full.update(env)
    return subprocess.run(
        [sys.executable, "-m", "halls", *args],
        env=full, cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The one line a failing command printed (asserting it printed one, and no traceback)."""
    assert proc.returncode != 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("Error: ")
    return lines[0]


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port another program listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_serve_on_a_taken_port_fails_in_one_line_before_announcing(
    tmp_path: Path, taken_port: int
) -> None:
    """`halls serve` on a busy port exits 1 with one line naming the port, never "serving on"."""
    proc = run("serve", "--data-dir", str(tmp_path / "data"), "--port", str(taken_port))
    line = error_line(proc)
    assert f"port {taken_port} on 127.0.0.1 is already in use by another program" in line
    assert "--port" in line
    assert "serving on" not in proc.stderr + proc.stdout


def test_serve_on_the_port_of_a_running_halls_says_so(tmp_path: Path, server_factory) -> None:
    """A second `halls serve` on a running server's port says a halls server holds it."""
    live = server_factory()
    proc = run("serve", "--data-dir", str(tmp_path / "other"), "--port", str(live.port))
    assert "already in use by a halls server" in error_line(proc)


def test_unknown_config_key_is_an_error_naming_the_nearest(tmp_path: Path) -> None:
    """A misspelt nested key in the config file stops the command and names the valid key."""
    config = tmp_path / "halls.yaml"
    config.write_text("server:\n  prot: 7421\n")
    proc = run("stores", "--config", str(config), "--data-dir", str(tmp_path / "data"))
    line = error_line(proc)
    assert "halls.yaml: unknown setting server.prot; did you mean server.port?" in line
    assert not (tmp_path / "data").exists()


def test_unknown_top_level_and_deep_config_keys_are_errors(tmp_path: Path) -> None:
    """Misspelt keys at the top, three levels down and in a token are each named."""
    cases = {
        "defualt_store: x\n": "unknown setting defualt_store; did you mean default_store?",
        "storage:\n  sqlite:\n    synchronus: FULL\n": (
            "unknown setting storage.sqlite.synchronus; did you mean storage.sqlite.synchronous?"
        ),
        "server:\n  tokens:\n    - {id: a, token: aaaaaaaaaaaaaaaa, amdin: true}\n": (
            "unknown setting server.tokens[0].amdin; did you mean server.tokens[0].admin?"
        ),
    }
    for text, expected in cases.items():
        config = tmp_path / "halls.yaml"
        config.write_text(text)
        proc = run("stores", "--config", str(config), "--data-dir", str(tmp_path / "data"))
        assert expected in error_line(proc), text


def test_valid_config_keys_and_the_old_alias_pass(tmp_path: Path) -> None:
    """Every key of a correct file (nested, listed, the old storage.synchronous) is accepted."""
    config = tmp_path / "halls.yaml"
    config.write_text(
        "default_store: notes\n"
        "server:\n  port: 7421\n  tokens:\n    - {id: a, token: aaaaaaaaaaaaaaaa}\n"
        "storage:\n  synchronous: NORMAL\n  sqlite: {}\n"
        "recall:\n  graph_edges: [mentions]\n"
    )
    proc = run("stores", "--config", str(config), "--data-dir", str(tmp_path / "data"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


def test_unknown_env_variable_warns_with_the_nearest_and_runs_on(tmp_path: Path) -> None:
    """A misspelt HALLS_* variable is a warning naming the valid one; the command still runs."""
    proc = run("stores", "--data-dir", str(tmp_path / "data"), HALLS_SERVER__PROT="7421",
               HALLS_DATA_DRI="/nowhere", HALLS_NOTHING_LIKE_IT="1")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.strip()]
    assert warnings == [
        "halls: warning: HALLS_DATA_DRI is not a halls setting; did you mean HALLS_DATA_DIR?",
        "halls: warning: HALLS_NOTHING_LIKE_IT is not a halls setting",
        "halls: warning: HALLS_SERVER__PROT is not a halls setting; "
        "did you mean HALLS_SERVER__PORT?",
    ]


def test_valid_env_variables_raise_no_warning(tmp_path: Path) -> None:
    """Nested names (joined by __, any case), whole sections and the CLI's own are not flagged."""
    proc = run(
        "stores", "--data-dir", str(tmp_path / "data"),
        HALLS_SERVER__PORT="7421",
        halls_server__access_log="false",
        HALLS_STORAGE__SQLITE__SYNCHRONOUS="FULL",
        HALLS_STORAGE__SYNCHRONOUS="FULL",
        HALLS_EMBEDDER__BATCH_SIZE="32",
        HALLS_SHORT='{"ttl_seconds": 3600}',
        HALLS_TOKEN="t" * 20,
        HALLS_PASSPHRASE="secret",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
