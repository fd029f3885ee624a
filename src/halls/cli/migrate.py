"""``halls migrate``: copy stores between backends (SQLite <-> PostgreSQL)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from halls.cli._app import _common, _settings, main
from halls.config import Settings, StorageSettings
from halls.errors import HallsError


def _place(spec: str, settings: Settings) -> Any:
    """``sqlite:DIR`` or ``postgres:DSN`` as a ``Place``."""
    from halls.service import Place

    kind, _, where = spec.partition(":")
    if kind == "sqlite" and where:
        # The configured key opens encrypted SQLite stores (and encrypts new ones).
        storage = StorageSettings(
            backend="sqlite",
            sqlite=settings.storage.sqlite,
            encryption_key=settings.storage.encryption_key,
        )
        return Place(storage, Path(where).expanduser())
    if kind == "postgres" and where:
        storage = StorageSettings(backend="postgres", dsn=where, postgres=settings.storage.postgres)
        return Place(storage, settings.data_dir)
    raise click.BadParameter(f"{spec!r}: use sqlite:DIR or postgres:postgresql://...")


@main.command()
@_common
@click.option("--from", "source", required=True, help="sqlite:DIR or postgres:DSN to copy from.")
@click.option("--to", "target", required=True, help="sqlite:DIR or postgres:DSN to copy to.")
@click.option("--store", "stores", multiple=True, help="Only this store (repeatable).")
@click.option("--dry-run", is_flag=True, help="Count what would be copied; write nothing.")
def migrate(
    config: Path | None,
    data_dir: Path | None,
    source: str,
    target: str,
    stores: tuple[str, ...],
    dry_run: bool,
) -> None:
    """Copy stores from one backend to another, e.g. --from sqlite:~/.local/share/halls
    --to postgres:postgresql://halls@db/halls.

    Every tier with its vectors (in write order) and recalls, edges, the
    journal, briefs, forget flags, run records and the embedder fingerprint. Only what the
    target lacks is copied, so a second run copies nothing. Stop the servers
    writing to the source first.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from halls.service import migrate_stores

    settings = _settings(config, data_dir)
    src, dst = _place(source, settings), _place(target, settings)
    bar = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), transient=True
    )
    tasks: dict[str, Any] = {}

    def progress(store: str, done: int, total: int) -> None:
        if store not in tasks:
            tasks[store] = bar.add_task(store, total=total)
        bar.update(tasks[store], completed=done, total=total)

    try:
        with bar:
            copied = migrate_stores(src, dst, list(stores) or None, dry_run, progress)
    except HallsError as exc:
        raise click.ClickException(exc.message) from None
    verb = "would copy" if dry_run else "copied"
    for name, c in copied.items():
        parts = ", ".join(f"{k} {n}" for k, n in c.counts.items() if n) or "nothing"
        click.echo(f"{name}: {verb} {parts}")
    if not copied:
        click.echo("no stores to copy")
