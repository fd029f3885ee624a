"""Coding-agent integration: MCP over stdio, Claude Code hooks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import click

from halls.cli._app import _common, _one_line, _settings, main

# -- MCP and agent integrations --

DEFAULT_SERVER_URL = "http://127.0.0.1:7420"


@main.command("mcp")
@_common
@click.option(
    "--server-url",
    help="Proxy every tool to this running halls server, so one process owns the store.",
)
@click.option(
    "--token", envvar="HALLS_TOKEN", help="Bearer token for --server-url (env HALLS_TOKEN)."
)
@click.option("--store", help="Store used when a tool call names none.")
@click.option(
    "--tools",
    type=click.Choice(["agent", "all"]),
    help="Which tools to serve (default: the mcp.tools setting, itself 'agent').",
)
def mcp_command(
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    store: str | None,
    tools: Literal["agent", "all"] | None,
) -> None:
    """Serve MCP over stdio (Claude Code, VS Code, Cursor, ...)."""
    from halls.mcp import LocalBackend, RemoteBackend, build_server

    if server_url:
        if data_dir is not None:
            raise click.UsageError("use either --server-url or --data-dir, not both")
        profile = tools or _settings(config, None).mcp.tools
        remote = RemoteBackend(server_url, token)
        try:
            build_server(remote, default_store=store, tools=profile).run("stdio")
        finally:
            remote.close()
        return
    from halls.service import Memory

    settings = _settings(config, data_dir)
    memory = Memory(settings)
    try:
        server = build_server(
            LocalBackend(memory), default_store=store, tools=tools or settings.mcp.tools
        )
        server.run("stdio")
    finally:
        memory.close()


@main.group()
def install() -> None:
    """Connect a coding agent to halls."""


@main.group()
def uninstall() -> None:
    """Undo `halls install`."""


@main.command("hook")
@click.argument("event", type=click.Choice(["session-start", "user-prompt", "stop", "pre-compact"]))
@click.option("--server-url", default=DEFAULT_SERVER_URL, show_default=True)
@click.option("--token", envvar="HALLS_TOKEN", help="Bearer token (env HALLS_TOKEN).")
@click.option("--store", help="Store to use (default: the server's).")
@click.option("--budget-tokens", default=400, show_default=True, type=click.IntRange(50, 8000))
@click.option(
    "--prompt-tokens",
    default=0,
    show_default=True,
    type=click.IntRange(0, 2000),
    help="user-prompt: add the memories most relevant to the prompt within this many tokens "
    "(0: only remind the agent to recall).",
)
@click.option(
    "--journal/--no-journal",
    default=True,
    show_default=True,
    help="user-prompt: append the prompt to the journal, for consolidation.",
)
@click.option(
    "--format",
    "notation",
    type=click.Choice(["terse", "verbose"]),
    default="terse",
    show_default=True,
    help="session-start: the context block's notation.",
)
def hook(
    event: str,
    server_url: str,
    token: str | None,
    store: str | None,
    budget_tokens: int,
    prompt_tokens: int,
    journal: bool,
    notation: str,
) -> None:
    """Run one Claude Code hook (reads the hook's JSON on stdin)."""
    from halls.integrations import hooks
    from halls.mcp import RemoteBackend

    data = hooks.read_input(sys.stdin.read() if not sys.stdin.isatty() else "")
    remote = RemoteBackend(server_url, token, timeout=10)
    try:
        out = hooks.run(
            event, data, remote, store, budget_tokens, prompt_tokens, journal, format=notation
        )
    except Exception as exc:  # a failing hook must never block the agent's session
        click.echo(f"halls hook {event}: {_one_line(exc)}", err=True)
        return
    finally:
        remote.close()
    if out:
        click.echo(out)
