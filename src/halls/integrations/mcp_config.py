"""``halls install <agent>``: the halls MCP server in an agent's config file, reversibly.

Every agent keeps its MCP servers in a table of a JSON or TOML file
(``mcpServers``, ``servers``, ``mcp_servers``); install puts one entry,
``halls``, in that table and leaves the rest of the file alone. Before the
first install the file's exact bytes (or its absence) are saved beside it in
``<file>.halls-mcp``, together with the entry written. Uninstall then:

- refuses when the ``halls`` entry is no longer the one install wrote (the
  user edited it: removing it would lose their edit);
- otherwise removes the entry, and the table if install created it;
- restores the original bytes when nothing else changed, deletes the file
  when install created it and nothing else is in it, and otherwise rewrites
  it with everyone else's edits kept.
"""

from __future__ import annotations

import base64
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from halls.config import agent_env_dir
from halls.errors import InvalidInput

NAME = "halls"
SIDECAR_SUFFIX = ".halls-mcp"


@dataclass(frozen=True)
class Target:
    """One agent config file: where the ``halls`` entry goes, and its shape."""

    path: Path
    table: str  # the key holding the servers: mcpServers, servers, mcp_servers
    toml: bool = False
    stdio_type: bool = False  # the entry carries "type": "stdio" (Claude Code, VS Code)


def server_command(
    server_url: str | None, token: str | None, store: str | None, data_dir: Path | None
) -> tuple[str, list[str], dict[str, str]]:
    """The command line that runs ``halls mcp``, by absolute path.

    The interpreter running this install, not ``halls`` on PATH: after
    ``make run`` or a venv install the script is not on the agent's PATH.
    """
    args = ["-m", "halls", "mcp"]
    if server_url:
        args += ["--server-url", server_url]
    elif data_dir is not None:
        args += ["--data-dir", str(data_dir.expanduser().resolve())]
    if store:
        args += ["--store", store]
    env = {"HALLS_TOKEN": token} if token else {}
    return sys.executable, args, env


def entry(target: Target, command: str, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "stdio"} if target.stdio_type else {}
    out.update({"command": command, "args": list(args)})
    if env:
        out["env"] = dict(env)
    return out


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR_SUFFIX)


def _parse(target: Target, raw: bytes | None) -> Any:
    """The file as a mutable document (tomlkit keeps TOML comments and layout)."""
    name = target.path.name
    try:
        if raw is None:
            return tomlkit.document() if target.toml else {}
        text = raw.decode("utf-8")
        data: Any = tomlkit.parse(text) if target.toml else json.loads(text)
    except (ValueError, UnicodeDecodeError, TOMLKitError):
        kind = "TOML" if target.toml else "JSON"
        raise InvalidInput(f"{name} is not valid {kind}; fix it first") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{name} must hold an object at the top level")
    if not isinstance(data.get(target.table, {}), dict):
        raise InvalidInput(f"{name}: '{target.table}' must be an object")
    return data


def _plain(data: Any) -> Any:
    return data.unwrap() if hasattr(data, "unwrap") else data


def _write(target: Target, data: Any) -> None:
    path = target.path
    path.parent.mkdir(parents=True, exist_ok=True)
    text = tomlkit.dumps(data) if target.toml else json.dumps(data, indent=2) + "\n"
    tmp = path.with_name(path.name + ".halls-tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def install(target: Target, new_entry: dict[str, Any]) -> None:
    """Add (or refresh) the ``halls`` entry; other servers and keys are kept."""
    path = target.path
    raw = path.read_bytes() if path.exists() else None
    data = _parse(target, raw)
    side = _sidecar(path)
    state: dict[str, Any] = (
        json.loads(side.read_text(encoding="utf-8"))
        if side.exists()
        else {
            "existed": raw is not None,
            "original": _b64(raw),
            # Directories install creates (.cursor, .vscode, ...), deepest first.
            "made_dirs": [str(d) for d in path.parents if not d.exists()],
        }
    )
    if target.table not in data:
        data[target.table] = tomlkit.table(is_super_table=True) if target.toml else {}
    data[target.table][NAME] = new_entry
    state["entry"] = new_entry
    side.parent.mkdir(parents=True, exist_ok=True)
    side.write_text(json.dumps(state) + "\n", encoding="utf-8")
    _write(target, data)


def uninstall(target: Target) -> str:
    """Remove the ``halls`` entry install wrote; say what happened to the file."""
    path, side = target.path, _sidecar(target.path)
    if not side.exists():
        return f"nothing to undo: halls install did not write {path}"
    state = json.loads(side.read_text(encoding="utf-8"))
    if not path.exists():
        side.unlink()
        return f"nothing to undo: {path} no longer exists"
    data = _parse(target, path.read_bytes())
    table = data.get(target.table, {})
    current = table.get(NAME)
    if current is not None and _plain(current) != state["entry"]:
        raise InvalidInput(
            f"the '{NAME}' entry in {path} was edited since install; remove it by hand, "
            f"or run the same halls install again to take it over, then uninstall"
        )
    original_bytes = base64.b64decode(state["original"]) if state.get("original") else None
    original = _plain(_parse(target, original_bytes))
    if current is not None:
        del table[NAME]
        if len(table) == 0 and target.table not in original:
            del data[target.table]
    plain = _plain(data)
    if not state.get("existed") and plain == {}:
        path.unlink()
        outcome = f"removed {path}, which install had created"
    elif original_bytes is not None and plain == original:
        path.write_bytes(original_bytes)
        outcome = f"restored {path} exactly as it was"
    elif current is not None:
        _write(target, data)
        outcome = f"removed '{target.table}.{NAME}' from {path}; other edits kept"
    else:
        outcome = f"no '{NAME}' entry left in {path}; file left as it is"
    side.unlink()
    for made in state.get("made_dirs", []):
        try:
            Path(made).rmdir()  # only if empty: the user may have put files there since
        except OSError:
            break
    return outcome


def _b64(raw: bytes | None) -> str | None:
    return None if raw is None else base64.b64encode(raw).decode()


# -- where each agent keeps its MCP servers --


def claude_code(project: Path | None) -> Target:
    # User scope: ~/.claude.json; project scope: .mcp.json at the project root.
    path = project / ".mcp.json" if project else Path.home() / ".claude.json"
    return Target(path, "mcpServers", stdio_type=True)


def cursor(project: Path | None) -> Target:
    return Target((project or Path.home()) / ".cursor" / "mcp.json", "mcpServers")


def vscode(project: Path | None) -> Target:
    if project:
        return Target(project / ".vscode" / "mcp.json", "servers", stdio_type=True)
    return Target(_vscode_user_dir() / "mcp.json", "servers", stdio_type=True)


def _vscode_user_dir() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "Code" / "User"
    if sys.platform == "win32":
        return agent_env_dir("APPDATA", Path.home()) / "Code" / "User"
    return agent_env_dir("XDG_CONFIG_HOME", Path.home() / ".config") / "Code" / "User"


def codex(project: Path | None) -> Target:
    # Codex reads CODEX_HOME (default ~/.codex); a trusted project's .codex/config.toml too.
    home = agent_env_dir("CODEX_HOME", Path.home() / ".codex")
    path = project / ".codex" / "config.toml" if project else home / "config.toml"
    return Target(path, "mcp_servers", toml=True)


def generic(path: Path, table: str) -> Target:
    return Target(path, table)
