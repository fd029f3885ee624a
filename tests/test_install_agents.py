"""`halls install/uninstall <agent>` on a temporary HOME: the MCP entry each agent gets
runs (official MCP client over stdio), and uninstall gives every file back byte for byte."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parent.parent

# Hand-written, odd layout and a comment on purpose: a rewrite would not be byte-identical.
OTHER_JSON = """{
  "editor.fontSize": 13,
    "%s": {"other": {"command": "npx", "args": ["-y", "other-server"]}},
  "note": "caf\\u00e9 ☕"
}
"""
OTHER_TOML = """# my Codex config
model = "o4-mini"   # keep this comment

[mcp_servers.other]
command = "npx"
args = ["-y", "other-server"]
"""


def halls(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HALLS_", "XDG_", "CODEX_"))}
    env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "halls", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )


def tool_names(entry: dict[str, Any], home: Path, log: Path) -> set[str]:
    """Start the installed command as the agent would (from elsewhere, no PATH help)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    env.update({"HOME": str(home), "PATH": "/nonexistent", **entry.get("env", {})})
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env=env, cwd=str(home)
    )

    async def run() -> set[str]:
        with open(log, "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return {t.name for t in (await session.list_tools()).tools}

    return asyncio.run(run())


# agent -> (extra install args, config file under HOME or project, table, TOML?)
Where = Callable[[Path, Path], Path]
AGENTS: dict[str, tuple[list[str], Where, str, bool]] = {
    "cursor": ([], lambda h, p: h / ".cursor" / "mcp.json", "mcpServers", False),
    "cursor-project": (
        ["--project", "{project}"],
        lambda h, p: p / ".cursor" / "mcp.json",
        "mcpServers",
        False,
    ),
    "vscode": ([], lambda h, p: h / ".config" / "Code" / "User" / "mcp.json", "servers", False),
    "vscode-project": (
        ["--project", "{project}"],
        lambda h, p: p / ".vscode" / "mcp.json",
        "servers",
        False,
    ),
    "codex": ([], lambda h, p: h / ".codex" / "config.toml", "mcp_servers", True),
    "mcp-json": (
        ["--path", "{home}/some/client.json"],
        lambda h, p: h / "some" / "client.json",
        "mcpServers",
        False,
    ),
}


def _read(path: Path, toml: bool) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    return tomllib.loads(text) if toml else json.loads(text)


@pytest.mark.slow
@pytest.mark.parametrize("existing", [False, True], ids=["new-file", "existing-file"])
@pytest.mark.parametrize("case", list(AGENTS))
def test_install_runs_and_uninstall_restores(tmp_path: Path, case: str, existing: bool) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    extra, where, table, toml = AGENTS[case]
    path = where(home, project)
    if existing:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(OTHER_TOML if toml else OTHER_JSON % table, encoding="utf-8")
    before = path.read_bytes() if existing else None
    agent = case.removesuffix("-project")
    args = [a.format(home=home, project=project) for a in extra]
    data_dir = tmp_path / "data"

    done = halls(home, "install", agent, *args, "--data-dir", str(data_dir), "--store", "work")
    assert done.returncode == 0, done.stderr
    assert str(path) in done.stdout and "journals: nothing by itself" in done.stdout

    config = _read(path, toml)
    entry = config[table]["halls"]
    assert Path(entry["command"]).is_absolute() and Path(entry["command"]).exists()
    assert entry["args"] == ["-m", "halls", "mcp", "--data-dir", str(data_dir), "--store", "work"]
    assert (entry.get("type") == "stdio") == (agent == "vscode")
    if existing:  # everything else is still there
        assert config[table]["other"] == {"command": "npx", "args": ["-y", "other-server"]}
        if toml:
            assert "# keep this comment" in path.read_text() and config["model"] == "o4-mini"
        else:
            assert config["note"] == "café ☕" and config["editor.fontSize"] == 13

    names = tool_names(entry, home, tmp_path / "mcp.log")
    assert {"recall", "remember"} <= names, (tmp_path / "mcp.log").read_text()

    undone = halls(home, "uninstall", agent, *args)
    assert undone.returncode == 0, undone.stderr
    if existing:
        assert path.read_bytes() == before
    else:
        assert not path.exists()
    if existing:
        assert [p.name for p in path.parent.iterdir()] == [path.name]
    else:  # and the directories install made are gone too
        assert not path.parent.exists() and home.exists() and project.exists()


def test_uninstall_keeps_other_edits_and_refuses_an_edited_entry(tmp_path: Path) -> None:
    """A server the user added after install stays; a hand-edited halls entry is not removed."""
    path = tmp_path / ".cursor" / "mcp.json"
    assert halls(tmp_path, "install", "cursor").returncode == 0
    config = json.loads(path.read_text())
    config["mcpServers"]["mine"] = {"command": "mine"}
    path.write_text(json.dumps(config))
    assert halls(tmp_path, "uninstall", "cursor").returncode == 0
    assert json.loads(path.read_text()) == {"mcpServers": {"mine": {"command": "mine"}}}

    url = "http://127.0.0.1:1"
    done = halls(tmp_path, "install", "cursor", "--server-url", url, "--token", "t0k")
    assert done.returncode == 0 and "HALLS_TOKEN" in done.stdout
    config = json.loads(path.read_text())
    assert config["mcpServers"]["halls"]["args"][-2:] == ["--server-url", url]
    assert config["mcpServers"]["halls"]["env"] == {"HALLS_TOKEN": "t0k"}
    config = json.loads(path.read_text())
    config["mcpServers"]["halls"]["args"].append("--extra")
    path.write_text(json.dumps(config))
    edited = path.read_bytes()
    refused = halls(tmp_path, "uninstall", "cursor")
    assert refused.returncode != 0 and "was edited since install" in refused.stderr
    assert "Traceback" not in refused.stderr and path.read_bytes() == edited


def test_install_refuses_bad_input_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text("model = \n")
    done = halls(tmp_path, "install", "codex")
    assert done.returncode != 0 and "config.toml is not valid TOML" in done.stderr
    assert path.read_text() == "model = \n" and sorted(os.listdir(path.parent)) == ["config.toml"]
    both = halls(tmp_path, "install", "cursor", "--server-url", "http://x", "--data-dir", "d")
    assert both.returncode == 2 and "either --server-url or --data-dir" in both.stderr
    nowhere = halls(tmp_path, "install", "vscode", "--project", str(tmp_path / "nope"))
    assert nowhere.returncode == 2 and "does not exist" in nowhere.stderr
    assert sorted(os.listdir(tmp_path)) == [".codex"]


@pytest.mark.slow
@pytest.mark.parametrize("scope", ["user", "project"])
def test_claude_code_gets_hooks_and_the_mcp_server(
    server: Any, store_name: str, tmp_path: Path, scope: str
) -> None:
    """Both files written, the MCP server has the tools the hooks name, and both undone."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    mcp_json = home / ".claude.json" if scope == "user" else project / ".mcp.json"
    settings = (home if scope == "user" else project) / ".claude" / "settings.json"
    mcp_json.write_text('{"numStartups": 3,\n "mcpServers": {"other": {"command": "x"}}}\n')
    before = mcp_json.read_bytes()
    scope_args = ["--project", str(project)] if scope == "project" else []

    done = halls(
        home, "install", "claude-code", *scope_args,
        "--server-url", server.url, "--store", store_name,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert str(mcp_json) in done.stdout and str(settings) in done.stdout
    assert "journals: no prompts" in done.stdout  # not a TTY, no flag: off

    config = json.loads(mcp_json.read_text())
    assert config["numStartups"] == 3 and config["mcpServers"]["other"] == {"command": "x"}
    entry = config["mcpServers"]["halls"]
    assert entry["type"] == "stdio" and Path(entry["command"]).is_absolute()
    assert entry["args"][-4:] == ["--server-url", server.url, "--store", store_name]
    hooks = json.loads(settings.read_text())["hooks"]
    prompt_hook = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert prompt_hook.endswith("--no-journal")

    names = tool_names(entry, home, tmp_path / "mcp.log")
    # The user-prompt hook tells the agent to call `recall`: the server it got has it.
    reminder = halls(
        home, "hook", "user-prompt", "--server-url", server.url, "--store", store_name,
        "--no-journal", stdin='{"prompt": "what editor do I use?"}',
    )  # fmt: skip
    assert "recall" in reminder.stdout and "recall" in names

    undone = halls(home, "uninstall", "claude-code", *scope_args)
    assert undone.returncode == 0, undone.stderr
    assert mcp_json.read_bytes() == before and not settings.exists()


def test_claude_code_prompt_journaling_is_an_explicit_choice(tmp_path: Path) -> None:
    done = halls(tmp_path, "install", "claude-code", "--journal-prompts")
    assert done.returncode == 0, done.stderr
    assert "journals: every prompt you type" in done.stdout
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert not settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].endswith(
        "--no-journal"
    )
    assert halls(tmp_path, "uninstall", "claude-code").returncode == 0
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == []
