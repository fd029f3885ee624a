"""Data ownership on the command line: export, import, backup.

These work on the data directory itself (like ``reembed``), beside a running
server if there is one: SQLite lets two processes share a store, and an
export or a backup reads without holding the server's writer.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from halls.cli._app import _common, _memory, _server, _settings, main
from halls.cli.notes import import_notes
from halls.models import ON_CONFLICT

_PASSPHRASE_HELP = (
    "Passphrase (default: env HALLS_PASSPHRASE, else a prompt; a command line is "
    "visible to other users)."
)


@contextmanager
def _bar(label: str) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar fed by ``progress(done, total)`` callbacks."""
    from rich.progress import MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = (*Progress.get_default_columns()[:-1], MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield update


def _replacing(out: Path, overwrite: bool) -> None:
    if out.exists() and not overwrite:
        raise click.ClickException(f"{out} already exists; use --overwrite to replace it")


@main.command("export")
@_common
@click.option("--store", help="Store name (default: the configured store).")
@click.option(
    "--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
    help="Archive file to write.",
)  # fmt: skip
@click.option("--encrypt", is_flag=True, help="Encrypt the archive (AES-256-GCM, scrypt).")
@click.option("--passphrase", envvar="HALLS_PASSPHRASE", help=_PASSPHRASE_HELP)
@click.option("--overwrite", is_flag=True, help="Replace FILE if it exists.")
def export_cmd(
    config: Path | None,
    data_dir: Path | None,
    store: str | None,
    out: Path,
    encrypt: bool,
    passphrase: str | None,
    overwrite: bool,
) -> None:
    """Write a whole store (every tier, with history, runs, flags, briefs) to one archive."""
    _replacing(out, overwrite)
    if encrypt and not passphrase:
        passphrase = click.prompt(
            "Passphrase for the archive", hide_input=True, confirmation_prompt=True
        )
    with _memory(_settings(config, data_dir)) as memory:
        name = store or memory.settings.default_store
        out.parent.mkdir(parents=True, exist_ok=True)
        # Written beside the target and renamed: never a half archive under its name.
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
        try:
            with os.fdopen(fd, "wb") as f, _bar(f"exporting {name}") as bar:
                counts = memory.export_store(
                    f, store=name, passphrase=passphrase if encrypt else None, progress=bar
                )
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, out)
        finally:
            Path(tmp).unlink(missing_ok=True)
    total = sum(counts.values())
    how = "encrypted " if encrypt else ""
    click.echo(f"exported {total} records of '{name}' to {how}{out}: {json.dumps(counts)}")


@main.command("import")
@_common
@_server
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--store", help="Store name (default: the configured store).")
@click.option(
    "--in", "source",
    type=click.Path(exists=True, dir_okay=False, path_type=Path), help="Archive file to read.",
)  # fmt: skip
@click.option(
    "--on-conflict", type=click.Choice(ON_CONFLICT), default="keep-existing", show_default=True,
    help="For a record whose id the store already holds.",
)  # fmt: skip
@click.option("--overwrite", is_flag=True, help="Import into a store that already holds records.")
@click.option(
    "--dry-run", is_flag=True, help="Count (and show) what would be written; write nothing."
)
@click.option("--reembed", is_flag=True, help="Embed again with the configured embedder.")
@click.option("--passphrase", envvar="HALLS_PASSPHRASE", help=_PASSPHRASE_HELP)
@click.option("--pinned", is_flag=True, help="Files: the memories never age out.")
def import_cmd(
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    paths: tuple[Path, ...],
    store: str | None,
    source: Path | None,
    on_conflict: str,
    overwrite: bool,
    dry_run: bool,
    reembed: bool,
    passphrase: str | None,
    pinned: bool,
) -> None:
    """Import agent memory files (PATHS), or a halls archive (--in).

    PATHS are Markdown files (CLAUDE.md, AGENTS.md, MEMORY.md, notes), agent
    rules files (.cursorrules) or directories of them: each list item or
    paragraph becomes a short-term memory; importing again writes only new
    or changed items. An archive that is damaged or altered (or a wrong
    passphrase) imports nothing.
    """
    if paths and source is not None:
        raise click.UsageError("give files to import or --in ARCHIVE, not both")
    if paths:
        archive_only = {"--on-conflict": on_conflict != "keep-existing", "--overwrite": overwrite,
                        "--reembed": reembed}  # fmt: skip
        used = [flag for flag, given in archive_only.items() if given]
        if used:
            raise click.UsageError(f"{used[0]} is for archives (--in), not files")
        settings = _settings(config, data_dir)
        import_notes(settings, data_dir, server_url, token, list(paths), store, dry_run, pinned)
        return
    if source is None:
        raise click.UsageError("give files to import (CLAUDE.md, notes/) or --in ARCHIVE")
    if server_url or pinned:
        raise click.UsageError(
            f"{'--server-url' if server_url else '--pinned'} is for files, not archives (--in)"
        )
    from halls.service import archive_encrypted  # loads the store: only when used

    if not passphrase and archive_encrypted(source):
        passphrase = click.prompt("Passphrase of the archive", hide_input=True)
    with _memory(_settings(config, data_dir)) as memory:
        name = store or memory.settings.default_store
        with _bar(f"importing into {name}") as bar:
            report = memory.import_store(
                source,
                store=name,
                passphrase=passphrase,
                on_conflict=on_conflict,
                overwrite=overwrite,
                dry_run=dry_run,
                reembed=reembed,
                progress=bar,
            )
    click.echo(json.dumps(report.as_dict(), indent=2))
    added = sum(report.added.values())
    verb = "would add" if dry_run else "added"
    click.echo(
        f"{verb} {added} records to '{name}', replaced {sum(report.replaced.values())}, "
        f"kept {sum(report.kept.values())} already there"
    )


@main.command()
@_common
@click.option("--store", help="Store name (default: the configured store).")
@click.option(
    "--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the copy.",
)  # fmt: skip
@click.option("--overwrite", is_flag=True, help="Replace FILE if it exists.")
def backup(
    config: Path | None, data_dir: Path | None, store: str | None, out: Path, overwrite: bool
) -> None:
    """A consistent copy of a store's database file, taken while the server serves."""
    _replacing(out, overwrite)
    with _memory(_settings(config, data_dir)) as memory:
        name = store or memory.settings.default_store
        size = memory.backup_store(out, store=name, overwrite=overwrite)
    click.echo(f"backed up '{name}' to {out} ({size} bytes)")
