"""Work scopes: ``halls scopes list`` and ``halls scopes done NAME`` (``halls.scopes``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from halls.cli._app import _common, _memory, _remote, _server, _settings, _translated, main
from halls.models import SCOPE_STATUSES


@main.group()
def scopes() -> None:
    """Work scopes: each write is a turn; scopes open and close by the turns that name them."""


@scopes.command("list")
@_common
@_server
@click.option("--store", help="Store name (default: the configured store).")
@click.option("--status", type=click.Choice(SCOPE_STATUSES), help="Only open or closed ones.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 1000))
@click.option("--json", "as_json", is_flag=True, help="Print the scopes as JSON.")
def scopes_list(
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    store: str | None,
    status: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """List the scopes, the last written for first: name, status (why closed), turns idle."""
    settings = _settings(config, data_dir)
    remote = _remote(settings, data_dir, server_url, token)
    found: dict[str, Any]
    if remote is not None:
        with remote, _translated():
            found = remote.call("GET", "/scopes", store, status=status, limit=limit)
    else:
        with _memory(settings) as memory:
            listed = memory.list_scopes(store=store, status=status, limit=limit)
            found = listed.model_dump(mode="json")
    if as_json:
        click.echo(json.dumps(found, indent=2))
        return
    for s in found["scopes"]:
        state = s["status"] if s["closed_because"] is None else f"closed ({s['closed_because']})"
        idle = found["turn"] - s["last_turn"]
        click.echo(f"{s['name']}\t{state}\t{s['turns']} turns\t{idle} idle")


@scopes.command("done")
@_common
@_server
@click.argument("name")
@click.option("--store", help="Store name (default: the configured store).")
def scopes_done(
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    name: str,
    store: str | None,
) -> None:
    """Mark scope NAME done: it closes, and its memories leave the session-start context."""
    settings = _settings(config, data_dir)
    remote = _remote(settings, data_dir, server_url, token)
    if remote is not None:
        with remote, _translated():
            closed = remote.call("POST", "/scopes/close", store, {"name": name})
    else:
        with _memory(settings) as memory:
            closed = memory.close_scope(name, store=store).model_dump(mode="json")
    click.echo(f"{closed['name']}\tclosed ({closed['closed_because']})")
