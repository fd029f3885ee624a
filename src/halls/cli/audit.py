"""The audit log from the shell: verify its hash chain, list its entries."""

from __future__ import annotations

import json
from pathlib import Path

import click

from halls.cli._app import _common, _settings, main


def _log(config: Path | None, data_dir: Path | None):
    # The log is a file of the data directory: reading it needs no model, no
    # store and no server, so it works beside a running one.
    from halls.service import AuditLog

    return AuditLog(_settings(config, data_dir).data_dir)


@main.group()
def audit() -> None:
    """The audit log of a data directory: `verify` its chain, `list` entries."""


@audit.command("verify")
@_common
def audit_verify(config: Path | None, data_dir: Path | None) -> None:
    """Print OK, or the first entry whose hash does not follow (exit status 1)."""
    checked, broken = _log(config, data_dir).verify()
    if broken is not None:
        raise click.ClickException(
            f"the audit log is broken at entry {broken} ({checked} entries before it are intact)"
        )
    click.echo(f"OK: {checked} entries, hash chain intact")


@audit.command("list")
@_common
@click.option("--store", help="Only this store's entries.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 1000))
def audit_list(config: Path | None, data_dir: Path | None, store: str | None, limit: int) -> None:
    """Print entries newest first, one JSON object a line."""
    for entry in _log(config, data_dir).page(store, limit, 0):
        click.echo(json.dumps(entry))
