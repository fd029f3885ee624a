"""``halls install <agent>`` / ``halls uninstall <agent>``: MCP server and hooks, reversibly."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from halls.cli.agents import DEFAULT_SERVER_URL, install, uninstall
from halls.errors import HallsError
from halls.integrations import mcp_config

_project = click.option(
    "--project",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Configure this project directory instead of your user profile.",
)
_settings = click.option(
    "--settings",
    "settings_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Claude Code settings file for the hooks "
    "(default: ~/.claude/settings.json, or .claude/settings.json under --project).",
)
_path = click.option(
    "--path",
    "path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The MCP client's JSON config file.",
)
_key = click.option(
    "--key",
    default="mcpServers",
    show_default=True,
    help="The key holding the servers (VS Code: servers).",
)

NO_PROMPTS = (
    "journals: nothing by itself; the agent journals what it chooses to through the MCP tools"
)


def _server_options(local: bool) -> Callable[[Any], Any]:
    """--server-url/--token/--store (and --data-dir when the server may run locally)."""

    def wrap(f: Any) -> Any:
        f = click.option("--store", help="Store used when a tool call names none.")(f)
        # No envvar: a token exported in the shell must not land in a config file unasked.
        f = click.option(
            "--token",
            help="Bearer token for --server-url, written into the entry's env as HALLS_TOKEN "
            "(otherwise the agent's own HALLS_TOKEN is used).",
        )(f)
        if local:
            f = click.option(
                "--data-dir",
                type=click.Path(file_okay=False, path_type=Path),
                help="Data directory of the local store (default: halls' own).",
            )(f)
            return click.option(
                "--server-url",
                help="Proxy the tools to this running halls server "
                "(default: the MCP process opens the store itself).",
            )(f)
        return click.option(
            "--server-url", default=DEFAULT_SERVER_URL, show_default=True, help="halls server."
        )(f)

    return wrap


def _fail(exc: HallsError) -> click.ClickException:
    return click.ClickException(exc.message)


def _register(
    target: mcp_config.Target,
    server_url: str | None,
    token: str | None,
    store: str | None,
    data_dir: Path | None,
) -> None:
    if server_url and data_dir is not None:
        raise click.UsageError("use either --server-url or --data-dir, not both")
    command, args, env = mcp_config.server_command(server_url, token, store, data_dir)
    try:
        mcp_config.install(target, mcp_config.entry(target, command, args, env))
    except HallsError as exc:
        raise _fail(exc) from None
    click.echo(f"wrote {target.path}: {target.table}.{mcp_config.NAME} runs")
    click.echo(f"  {shlex.join([command, *args])}")
    if env:
        click.echo(f"  with HALLS_TOKEN in its env (stored in {target.path} in plain text)")


def _unregister(target: mcp_config.Target) -> None:
    try:
        click.echo(mcp_config.uninstall(target))
    except HallsError as exc:
        raise _fail(exc) from None


def _undo_hint(agent: str, **opts: Any) -> None:
    extra = "".join(f" --{k.replace('_', '-')} {shlex.quote(str(v))}" for k, v in opts.items() if v)
    click.echo(f"undo with: halls uninstall {agent}{extra}")


# -- Claude Code: hooks and the MCP server --


def _claude_settings(project: Path | None, settings_path: Path | None) -> Path:
    from halls.integrations import claude_code

    if settings_path:
        return settings_path
    if project:
        return project / ".claude" / "settings.json"
    return claude_code.default_settings_path()


@install.command("claude-code")
@_project
@_settings
@_server_options(local=False)
@click.option(
    "--prompt-tokens",
    default=0,
    show_default=True,
    type=click.IntRange(0, 2000),
    help="Add up to this many tokens of relevant memories to every prompt (0: off).",
)
@click.option(
    "--journal-prompts/--no-journal-prompts",
    default=None,
    help="Journal every prompt you type, so consolidation learns from the conversation "
    "(asked when run in a terminal; off otherwise).",
)
def install_claude_code(
    project: Path | None,
    settings_path: Path | None,
    server_url: str,
    token: str | None,
    store: str | None,
    prompt_tokens: int,
    journal_prompts: bool | None,
) -> None:
    """Register the halls MCP server and add SessionStart, UserPromptSubmit, Stop and
    PreCompact hooks (user scope, or --project DIR)."""
    from halls.integrations import claude_code

    if journal_prompts is None:
        journal_prompts = sys.stdin.isatty() and click.confirm(
            "Journal every prompt you type to halls (so consolidation learns from it)?",
            default=False,
        )
    target = mcp_config.claude_code(project)
    settings = _claude_settings(project, settings_path)
    _register(target, server_url, token, store, None)
    try:
        events = claude_code.install(settings, server_url, store, prompt_tokens, journal_prompts)
    except HallsError as exc:
        mcp_config.uninstall(target)  # all or nothing
        raise _fail(exc) from None
    click.echo(f"wrote {settings}: hooks {', '.join(events)}")
    if journal_prompts:
        click.echo("journals: every prompt you type (UserPromptSubmit), redacted as every write is")
    else:
        click.echo(
            "journals: no prompts (--journal-prompts turns it on); "
            "the agent journals what it chooses to through the MCP tools"
        )
    click.echo(f"the hooks and the MCP server need halls serving at {server_url}")
    _undo_hint("claude-code", project=project, settings=settings_path)


@uninstall.command("claude-code")
@_project
@_settings
def uninstall_claude_code(project: Path | None, settings_path: Path | None) -> None:
    """Remove the MCP server entry and exactly the hooks `halls install claude-code` added."""
    from halls.integrations import claude_code

    target = mcp_config.claude_code(project)
    settings = _claude_settings(project, settings_path)
    try:
        # The MCP entry first: it refuses, changing nothing, when the user edited it.
        click.echo(f"MCP server: {mcp_config.uninstall(target)}")
        click.echo(f"hooks: {claude_code.uninstall(settings)} ({settings})")
    except HallsError as exc:
        raise _fail(exc) from None


# -- MCP-only clients --

_AGENTS: dict[str, tuple[Callable[[Path | None], mcp_config.Target], str]] = {
    "cursor": (mcp_config.cursor, "Cursor (~/.cursor/mcp.json, or .cursor/mcp.json in --project)"),
    "vscode": (
        mcp_config.vscode,
        "VS Code / Copilot (the user profile's mcp.json, or .vscode/mcp.json in --project)",
    ),
    "codex": (
        mcp_config.codex,
        "Codex CLI (~/.codex/config.toml, or .codex/config.toml in --project)",
    ),
}


def _add_agent(name: str, where: Callable[[Path | None], mcp_config.Target], what: str) -> None:
    @install.command(name, help=f"Register the halls MCP server with {what}.")
    @_project
    @_server_options(local=True)
    def _install(
        project: Path | None,
        server_url: str | None,
        data_dir: Path | None,
        token: str | None,
        store: str | None,
    ) -> None:
        _register(where(project), server_url, token, store, data_dir)
        click.echo(NO_PROMPTS)
        _undo_hint(name, project=project)

    @uninstall.command(name, help=f"Remove the halls MCP server from {what}.")
    @_project
    def _uninstall(project: Path | None) -> None:
        _unregister(where(project))


for _name, (_where, _what) in _AGENTS.items():
    _add_agent(_name, _where, _what)


@install.command("mcp-json")
@_path
@_key
@_server_options(local=True)
def install_mcp_json(
    path: Path,
    key: str,
    server_url: str | None,
    data_dir: Path | None,
    token: str | None,
    store: str | None,
) -> None:
    """Register the halls MCP server in any MCP client's JSON config file."""
    _register(mcp_config.generic(path, key), server_url, token, store, data_dir)
    click.echo(NO_PROMPTS)
    _undo_hint("mcp-json", path=path, key=key if key != "mcpServers" else None)


@uninstall.command("mcp-json")
@_path
@_key
def uninstall_mcp_json(path: Path, key: str) -> None:
    """Remove the halls MCP server entry that `halls install mcp-json` wrote."""
    _unregister(mcp_config.generic(path, key))
