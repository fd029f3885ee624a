"""``halls install claude-code``: hooks in a Claude Code settings file, reversibly.

Install adds one hook group per event, each running ``python -m halls hook
EVENT``; that command line is the mark by which uninstall finds exactly what
install added, and nothing else. Before the first install, the file's exact
bytes (or its absence) are saved beside it in ``<settings>.halls-install``,
so that uninstall restores the file byte for byte when nothing else changed
in between, removes it when install created it, and otherwise removes only
the halls groups and keeps everyone else's edits.
"""

from __future__ import annotations

import base64
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from halls.errors import InvalidInput

MARK = " -m halls hook "
SIDECAR_SUFFIX = ".halls-install"

# event -> (hook subcommand, matcher or None). SessionStart skips "resume":
# a resumed conversation still holds the context it was given.
EVENTS: dict[str, tuple[str, str | None]] = {
    "SessionStart": ("session-start", "startup|clear|compact"),
    "UserPromptSubmit": ("user-prompt", None),
    "Stop": ("stop", None),
    "PreCompact": ("pre-compact", None),
}


def default_settings_path() -> Path:
    return Path.home() / ".claude" / "settings.json"


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR_SUFFIX)


def hook_command(
    event: str,
    server_url: str,
    store: str | None,
    python: str | None = None,
    prompt_tokens: int = 0,
    journal: bool = True,
) -> str:
    sub, _ = EVENTS[event]
    parts = [python or sys.executable, "-m", "halls", "hook", sub, "--server-url", server_url]
    if store:
        parts += ["--store", store]
    if prompt_tokens and sub == "user-prompt":
        parts += ["--prompt-tokens", str(prompt_tokens)]
    if not journal and sub == "user-prompt":
        parts += ["--no-journal"]
    return shlex.join(parts)


def _is_ours(group: Any) -> bool:
    if not isinstance(group, dict):
        return False
    hooks = group.get("hooks")
    return (
        isinstance(hooks, list)
        and len(hooks) > 0
        and all(isinstance(h, dict) and MARK in str(h.get("command", "")) for h in hooks)
    )


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (ValueError, UnicodeDecodeError):
        raise InvalidInput(f"{path.name} is not valid JSON; fix it first") from None
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise InvalidInput(f"{path.name} must hold a JSON object whose 'hooks' is an object")
    for event in EVENTS:
        if not isinstance(data.get("hooks", {}).get(event, []), list):
            raise InvalidInput(f"{path.name}: hooks.{event} must be a list")
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".halls-tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def _strip(data: dict[str, Any]) -> set[str]:
    """Remove every halls group in place; return the events that had one."""
    touched = set()
    hooks = data.get("hooks", {})
    for event in list(hooks):
        groups = hooks[event]
        if isinstance(groups, list) and any(_is_ours(g) for g in groups):
            hooks[event] = [g for g in groups if not _is_ours(g)]
            touched.add(event)
    return touched


def install(
    path: Path,
    server_url: str,
    store: str | None = None,
    prompt_tokens: int = 0,
    journal: bool = True,
) -> list[str]:
    """Add (or refresh) the halls hooks; return the events hooked."""
    data = _load(path)
    side = _sidecar(path)
    if not side.exists():
        original = path.read_bytes() if path.exists() else None
        state = {
            "existed": original is not None,
            "original": None if original is None else base64.b64encode(original).decode(),
        }
        side.parent.mkdir(parents=True, exist_ok=True)
        side.write_text(json.dumps(state) + "\n", encoding="utf-8")
    _strip(data)
    hooks = data.setdefault("hooks", {})
    for event, (_, matcher) in EVENTS.items():
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [
            {
                "type": "command",
                "command": hook_command(
                    event, server_url, store, prompt_tokens=prompt_tokens, journal=journal
                ),
                "timeout": 30,
            }
        ]
        hooks.setdefault(event, []).append(group)
    _write(path, data)
    return list(EVENTS)


def uninstall(path: Path) -> str:
    """Remove exactly the halls hooks; say what happened to the file."""
    side = _sidecar(path)
    state = json.loads(side.read_text(encoding="utf-8")) if side.exists() else None
    if not path.exists():
        side.unlink(missing_ok=True)
        return "nothing to remove: the settings file does not exist"
    data = _load(path)
    touched = _strip(data)
    original_bytes = (
        base64.b64decode(state["original"]) if state and state.get("original") else None
    )
    try:
        original = json.loads(original_bytes) if original_bytes is not None else {}
    except ValueError:
        original = {}
    # Drop only the containers that install created and that are now empty.
    hooks = data.get("hooks", {})
    for event in touched:
        if hooks.get(event) == [] and event not in original.get("hooks", {}):
            del hooks[event]
    if hooks == {} and "hooks" in data and "hooks" not in original:
        del data["hooks"]

    if state is not None and not state.get("existed") and data == {}:
        path.unlink()
        outcome = "removed the settings file that install created"
    elif original_bytes is not None and data == original:
        path.write_bytes(original_bytes)
        outcome = "restored the settings file exactly as it was"
    elif touched:
        _write(path, data)
        outcome = "removed the halls hooks; other settings kept"
    else:
        outcome = "no halls hooks found"
    side.unlink(missing_ok=True)
    return outcome
