"""`halls install/uninstall claude-code` on a temporary HOME, and the hooks they install."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from halls.integrations.claude_code import EVENTS

REPO = Path(__file__).resolve().parent.parent

# Hand-written, odd formatting on purpose: a rewrite would not be byte-identical.
EXISTING = """{
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}]
    },
    "note": "caf\\u00e9 ☕"
}
"""


def halls(home: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> Any:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    full_env.update({"HOME": str(home), **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "halls", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=full_env,
        cwd=REPO,
        timeout=120,
    )


def test_install_then_uninstall_restores_existing_file_byte_for_byte(tmp_path: Path) -> None:
    """Existing settings keep their hooks through install; uninstall restores the exact bytes."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(EXISTING, encoding="utf-8")
    before = settings.read_bytes()

    for _ in range(2):  # installing twice adds the hooks once
        done = halls(tmp_path, "install", "claude-code", "--server-url", "http://127.0.0.1:7777")
        assert done.returncode == 0, done.stderr
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["note"] == "café ☕"
    assert data["permissions"] == {"allow": ["Bash(git status)"]}
    assert data["hooks"]["PreToolUse"] == [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}
    ]
    assert data["hooks"]["Stop"][0] == {"hooks": [{"type": "command", "command": "say done"}]}
    for event, (sub, _) in EVENTS.items():
        ours = [g for g in data["hooks"][event] if "halls" in json.dumps(g)]
        assert len(ours) == 1, event
        argv = shlex.split(ours[0]["hooks"][0]["command"])
        # Not a TTY and no --journal-prompts: prompts are not journaled.
        off = ["--no-journal"] if sub == "user-prompt" else []
        assert argv[1:] == [
            "-m",
            "halls",
            "hook",
            sub,
            "--server-url",
            "http://127.0.0.1:7777",
            *off,
        ]
    assert data["hooks"]["SessionStart"][0]["matcher"] == "startup|clear|compact"

    gone = halls(tmp_path, "uninstall", "claude-code")
    assert gone.returncode == 0, gone.stderr
    assert "restored" in gone.stdout
    assert settings.read_bytes() == before
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


def test_install_creates_and_uninstall_removes_a_missing_file(tmp_path: Path) -> None:
    """With no settings file before, install creates one and uninstall removes it again."""
    target = tmp_path / "proj" / ".claude" / "settings.local.json"
    done = halls(tmp_path, "install", "claude-code", "--settings", str(target), "--store", "proj")
    assert done.returncode == 0, done.stderr
    data = json.loads(target.read_text())
    assert set(data) == {"hooks"} and set(data["hooks"]) == set(EVENTS)
    assert "--store proj" in data["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert not (tmp_path / ".claude").exists()  # --settings: HOME untouched

    gone = halls(tmp_path, "uninstall", "claude-code", "--settings", str(target))
    assert gone.returncode == 0, gone.stderr
    assert not target.exists() and list(target.parent.iterdir()) == []


def test_install_options_reach_only_the_prompt_hook(tmp_path: Path) -> None:
    """--prompt-tokens and --no-journal-prompts reach the UserPromptSubmit command alone."""
    target = tmp_path / "settings.json"
    args = ("--settings", str(target), "--prompt-tokens", "80", "--no-journal-prompts")
    done = halls(tmp_path, "install", "claude-code", *args)
    assert done.returncode == 0, done.stderr
    hooks = json.loads(target.read_text())["hooks"]
    prompt = shlex.split(hooks["UserPromptSubmit"][0]["hooks"][0]["command"])
    assert prompt[-3:] == ["--prompt-tokens", "80", "--no-journal"]
    for event in ("SessionStart", "Stop", "PreCompact"):
        command = hooks[event][0]["hooks"][0]["command"]
        assert "--prompt-tokens" not in command and "--no-journal" not in command
    assert halls(tmp_path, "install", "claude-code", "--prompt-tokens", "-1").returncode == 2


def test_uninstall_keeps_edits_made_after_install(tmp_path: Path) -> None:
    """Settings changed after install keep those changes; only the halls groups go."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(EXISTING, encoding="utf-8")
    assert halls(tmp_path, "install", "claude-code").returncode == 0
    data = json.loads(settings.read_text())
    data["theme"] = "dark"
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "notify-send hi"}]})
    settings.write_text(json.dumps(data), encoding="utf-8")

    assert halls(tmp_path, "uninstall", "claude-code").returncode == 0
    after = json.loads(settings.read_text())
    expected = json.loads(EXISTING)
    expected["theme"] = "dark"
    expected["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "notify-send hi"}]})
    assert after == expected
    again = halls(tmp_path, "uninstall", "claude-code")
    assert again.returncode == 0 and "no halls hooks" in again.stdout
    assert json.loads(settings.read_text()) == expected


def test_install_refuses_a_broken_settings_file(tmp_path: Path) -> None:
    """Invalid JSON: a one-line error, exit 1, and the file and its folder are left alone."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'{"hooks": [1,}')
    done = halls(tmp_path, "install", "claude-code")
    assert done.returncode == 1
    assert done.stderr.strip() == "Error: settings.json is not valid JSON; fix it first"
    assert settings.read_bytes() == b'{"hooks": [1,}'
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


def _transcript(path: Path, tools: list[str]) -> str:
    lines = [
        {"type": "user", "message": {"role": "user", "content": "Set up the CI pipeline"}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"t{i}", "name": name, "input": {}}
                    for i, name in enumerate(tools)
                ]
                or [{"type": "text", "text": "Sure."}],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t0", "content": "ok"}],
            },
        },
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return str(path)


def test_hooks_run_against_a_live_server(server: Any, store_name: str, tmp_path: Path) -> None:
    """session-start prints context, user-prompt reminds, stop nudges once, pre-compact briefs."""
    with server.client() as http:
        made = http.post(
            "/near",
            params={"store": store_name},
            json={"intent": "Ask whether the offsite is booked", "trigger_type": "session"},
        )
        assert made.status_code == 201
    common = ("--server-url", server.url, "--store", store_name)

    start = halls(tmp_path, "hook", "session-start", *common, stdin='{"source": "startup"}')
    # In the terse notation, the hook's default: the article is left out.
    assert start.returncode == 0 and "Ask whether offsite is booked [n_" in start.stdout

    said = {"prompt": "I use Neovim, reach me at ana@example.org", "session_id": "sess-1"}
    prompt = halls(tmp_path, "hook", "user-prompt", *common, stdin=json.dumps(said))
    assert prompt.returncode == 0 and "recall" in prompt.stdout
    quiet = halls(
        tmp_path, "hook", "user-prompt", *common, "--no-journal", stdin='{"prompt": "not kept"}'
    )
    assert quiet.returncode == 0 and "recall" in quiet.stdout
    with server.client() as http:
        journal = http.get("/journal", params={"store": store_name}).json()
    # The prompt is journaled (as the user's, in its session), its e-mail address redacted;
    # with --no-journal nothing is.
    assert [(e["role"], e["session_id"]) for e in journal] == [("user", "sess-1")]
    assert "Neovim" in journal[0]["content"] and "ana@example.org" not in journal[0]["content"]

    worked = _transcript(tmp_path / "a.jsonl", ["Bash", "Edit"])
    stop = halls(
        tmp_path,
        "hook",
        "stop",
        *common,
        stdin=json.dumps({"transcript_path": worked, "stop_hook_active": False}),
    )
    assert json.loads(stop.stdout)["decision"] == "block"
    for quiet in (
        {"transcript_path": worked, "stop_hook_active": True},
        {"transcript_path": _transcript(tmp_path / "b.jsonl", ["mcp__halls__remember"])},
        {"transcript_path": _transcript(tmp_path / "c.jsonl", [])},
    ):
        out = halls(tmp_path, "hook", "stop", *common, stdin=json.dumps(quiet))
        assert out.returncode == 0 and out.stdout == ""

    compact = halls(
        tmp_path,
        "hook",
        "pre-compact",
        *common,
        stdin=json.dumps({"transcript_path": worked, "trigger": "auto", "cwd": "/home/u/acme-web"}),
    )
    assert compact.returncode == 0, compact.stderr
    with server.client() as http:
        assert http.get("/stats", params={"store": store_name}).json()["counts"]["briefs"] == 1


def test_hook_survives_a_dead_server(tmp_path: Path) -> None:
    """A hook whose server is down says so on stderr and exits 0: the session goes on."""
    from conftest import free_port

    out = halls(
        tmp_path,
        "hook",
        "session-start",
        "--server-url",
        f"http://127.0.0.1:{free_port()}",
        stdin="{}",
    )
    assert out.returncode == 0 and out.stdout == ""
    assert "cannot reach the halls server" in out.stderr
