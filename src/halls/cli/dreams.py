"""The consolidator from the shell: run, review, revert; and the operator's purge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from halls.cli._app import _common, _halls_answers, _memory, _settings, main
from halls.config import Settings

# -- the consolidator: run it, review runs, revert one; and the operator's purge --


def _print_run(run: Any, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(run.model_dump(mode="json"), indent=2))
        return
    counts = ", ".join(f"{k} {v}" for k, v in run.counts.items() if v) or "nothing to do"
    label = "planned (dry run, nothing changed)" if run.dry_run else run.status
    click.echo(f"{run.id}  {run.engine}  {label}: {counts}")
    for a in run.actions:
        click.echo(f"  {a.kind:<9} {a.target_id}  {a.reason}")
    for note in run.notes:
        click.echo(f"  note: {note}")


@main.group("consolidate", invoke_without_command=True)
@_common
@click.option("--store", help="Store name (default: the configured store).")
@click.option("--dry-run", is_flag=True, help="Show the plan; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the run record as JSON.")
@click.pass_context
def consolidate_cmd(
    ctx: click.Context,
    config: Path | None,
    data_dir: Path | None,
    store: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Run the consolidator on a store now (or `runs`, `revert RUN_ID`)."""
    ctx.obj = _settings(config, data_dir)
    if ctx.invoked_subcommand is None:
        with _memory(ctx.obj) as memory:
            _print_run(memory.consolidate(store=store, dry_run=dry_run), as_json)


@consolidate_cmd.command("runs")
@click.option("--store", help="Store name (default: the configured store).")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000))
@click.pass_obj
def consolidate_runs(settings: Settings, store: str | None, limit: int) -> None:
    """List a store's consolidation runs, newest first."""
    with _memory(settings) as memory:
        for run in memory.list_runs(store=store, limit=limit):
            counts = ", ".join(f"{k} {v}" for k, v in run.counts.items() if v) or "-"
            click.echo(
                f"{run.id}  {run.started_at.isoformat()}  {run.engine:<9} {run.status:<8} {counts}"
            )


@consolidate_cmd.command("revert")
@click.argument("run_id")
@click.option("--store", help="Store name (default: the configured store).")
@click.pass_obj
def consolidate_revert(settings: Settings, run_id: str, store: str | None) -> None:
    """Undo run RUN_ID (all but its purges, which are irreversible)."""
    with _memory(settings) as memory:
        _print_run(memory.revert_run(run_id, store=store), False)


@main.command()
@_common
@click.option("--id", "fact_id", required=True, help="The long-term fact to purge (l_...).")
@click.option("--store", required=True, help="The store that holds it.")
@click.option("--confirm", is_flag=True, help="Required: the purge cannot be undone.")
def purge(
    config: Path | None, data_dir: Path | None, fact_id: str, store: str, confirm: bool
) -> None:
    """Purge one fact for real (the operator's emergency door; stop the server first).

    Deletes the fact, its vectors, full-text rows, edges and the short-term and
    journal entries it came from, then vacuums so the bytes leave the files.
    """
    settings = _settings(config, data_dir)
    if not confirm:
        raise click.ClickException(
            "a purge cannot be undone: run again with --confirm to purge " + fact_id
        )
    host, port = settings.server.host, settings.server.port
    if _halls_answers(host, port):
        raise click.ClickException(
            f"halls is running on {host}:{port}: stop it first, or flag the fact "
            "(POST /long/{id}/forget) and let the consolidator purge it"
        )
    with _memory(settings) as memory:
        run = memory.purge_fact(fact_id, store=store)
        click.echo(f"purged {fact_id} from '{store}' (recorded as run {run.id})")
