"""The consolidator from the shell: run, review, revert; and the operator's purge."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import click

from halls.cli._app import _common, _memory, _remote, _server, _settings, _translated, main
from halls.config import Settings

# -- the consolidator: run it, review runs, revert one; and the operator's purge --


def _print_run(run: Any, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(run.model_dump(mode="json"), indent=2))
        return
    counts = ", ".join(f"{k} {v}" for k, v in run.counts.items() if v) or "nothing to do"
    label = "planned (dry run, no memory changed)" if run.dry_run else run.status
    click.echo(f"{run.id}  {run.engine}  {label}: {counts}")
    for a in run.actions:
        review = f"  [{a.review}]" if a.review else ""
        click.echo(f"  {a.id or '-':>3}. {a.kind:<9} {a.target_id}  {a.reason}{review}")
    for note in run.notes:
        click.echo(f"  note: {note}")


Show = Callable[[str, int, int], None]
POLL_SECONDS = 0.25  # how often a run on a server is asked how far it is
LINE_SECONDS = 1.0  # without a terminal: a line per stage, and at most one a second


@contextmanager
def _progress() -> Iterator[Show]:
    """A ``(stage, done, total)`` reporter shown on stderr: a rich progress bar on a
    terminal, else plain lines (a log, a pipe)."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        last: list[Any] = ["", 0.0]  # the stage of the last line, and when

        def line(stage: str, done: int, total: int) -> None:
            now = time.monotonic()
            if stage != last[0] or now - last[1] >= LINE_SECONDS:
                last[:] = [stage, now]
                print(f"consolidating: {stage} {done}/{total}", file=sys.stderr, flush=True)

        yield line
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    columns = (
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("starting", total=None)

        def show(stage: str, done: int, total: int) -> None:
            bar.update(task, description=stage, completed=done, total=total or None)

        yield show


def _run_on_server(remote: Any, store: str | None, dry_run: bool, show: Show) -> Any:
    """A run as a job of the server (``POST /consolidate/run`` with wait false), its
    progress polled; the run record when done."""
    from halls.client import error_from_wire
    from halls.models import Run

    job = remote.call("POST", "/consolidate/run", store, {"dry_run": dry_run, "wait": False})
    while job["status"] in ("queued", "running"):
        if job["stage"]:
            show(job["stage"], job["done"], job["total"])
        # Quickly until the run's first report, then at the pace of a display.
        time.sleep(POLL_SECONDS if job["stage"] else POLL_SECONDS / 5)
        job = remote.call("GET", f"/consolidate/jobs/{quote(job['id'], safe='')}", store)
    if job["status"] == "failed":
        error = job.get("error") or {}
        raise error_from_wire(str(error.get("code")), str(error.get("message")))
    return Run.model_validate(job["run"])


@main.group("consolidate", invoke_without_command=True)
@_common
@_server
@click.option("--store", help="Store name (default: the configured store).")
@click.option("--dry-run", is_flag=True, help="Show the plan; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the run record as JSON.")
@click.pass_context
def consolidate_cmd(
    ctx: click.Context,
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    store: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Run the consolidator on a store now (or `runs`, `review`, `apply`, `revert RUN_ID`).

    The run's progress (its stage, items done of the stage's total) shows on
    stderr: a progress bar on a terminal, else a line per stage and at most
    one a second. When a server answers (`--server-url`, else the configured
    one) the run is its job; else it runs here, on the data directory.
    """
    ctx.obj = _settings(config, data_dir)
    if ctx.invoked_subcommand is not None:
        if server_url:
            # (A token may come from the environment: HALLS_TOKEN is not a usage error.)
            raise click.UsageError("--server-url applies to a run, not to a subcommand")
        return
    remote = _remote(ctx.obj, data_dir, server_url, token)
    if remote is not None:
        with remote, _translated(), _progress() as show:
            run = _run_on_server(remote, store, dry_run, show)
    else:
        with _memory(ctx.obj) as memory, _progress() as show:
            run = memory.consolidate(store=store, dry_run=dry_run, progress=show)
    _print_run(run, as_json)


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
    """Undo run RUN_ID (all but its purges), unless a later run built on it."""
    with _memory(settings) as memory:
        _print_run(memory.revert_run(run_id, store=store), False)


@consolidate_cmd.command("review")
@click.argument("run_id")
@click.option("--approve", multiple=True, type=click.IntRange(1), help="An action's number.")
@click.option("--reject", multiple=True, type=click.IntRange(1), help="An action's number.")
@click.option("--store", help="Store name (default: the configured store).")
@click.pass_obj
def consolidate_review(
    settings: Settings,
    run_id: str,
    approve: tuple[int, ...],
    reject: tuple[int, ...],
    store: str | None,
) -> None:
    """Show a run's actions; of a dry run's plan, approve or reject some (by number)."""
    with _memory(settings) as memory:
        if approve or reject:
            run = memory.review_run(run_id, approve=list(approve), reject=list(reject), store=store)
        else:
            run = memory.get_run(run_id, store=store)
        _print_run(run, False)


@consolidate_cmd.command("apply")
@click.argument("run_id")
@click.option("--store", help="Store name (default: the configured store).")
@click.pass_obj
def consolidate_apply(settings: Settings, run_id: str, store: str | None) -> None:
    """Apply the approved actions of plan RUN_ID as one run (the others are dropped)."""
    with _memory(settings) as memory:
        _print_run(memory.apply_run(run_id, store=store), False)


@main.command()
@_common
@_server
@click.option("--id", "record_id", required=True, help="The fact (l_...) or journal event (j_...).")
@click.option("--store", required=True, help="The store that holds it.")
@click.option("--confirm", is_flag=True, help="Required: the purge cannot be undone.")
def purge(
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    record_id: str,
    store: str,
    confirm: bool,
) -> None:
    """Purge one fact or journal event for real, now (the server may be running).

    A fact goes with its vectors, full-text rows, edges and the short-term
    and journal entries it came from; then the store is vacuumed so the
    bytes leave the files. When a server answers, it does the purge
    (`DELETE /long/{id}` or `/journal/{id}`, an admin token); else it is done here.
    """
    settings = _settings(config, data_dir)
    if not confirm:
        raise click.ClickException(
            "a purge cannot be undone: run again with --confirm to purge " + record_id
        )
    kind = "journal" if record_id.startswith("j_") else "long"
    remote = _remote(settings, data_dir, server_url, token)
    if remote is not None:
        with remote, _translated():
            remote.call("DELETE", f"/{kind}/{quote(record_id, safe='')}", store)
        click.echo(f"purged {record_id} from '{store}'")
        return
    with _memory(settings) as memory, _translated():
        if kind == "journal":
            memory.delete_journal(record_id, store=store)
            click.echo(f"purged {record_id} from '{store}'")
        else:
            run = memory.purge_fact(record_id, store=store)
            click.echo(f"purged {record_id} from '{store}' (recorded as run {run.id})")


@main.command("forget-about")
@_common
@_server
@click.option("--subject", help="Text to look for in every record, any case.")
@click.option("--query", help="Words that must all appear in a record.")
@click.option("--store", help="Store name (default: the configured store).")
@click.option("--confirm", is_flag=True, help="Purge what is listed (without it: a dry run).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def forget_about(
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    subject: str | None,
    query: str | None,
    store: str | None,
    confirm: bool,
    as_json: bool,
) -> None:
    """List everything a store holds about a subject; with --confirm, purge it all.

    Every tier is searched, the journal included. The purge is for real: the
    records leave the files, and the subject is replaced by [purged] in briefs,
    flag reasons and run records.
    """
    settings = _settings(config, data_dir)
    # Unset fields are left out: an explicit null is not a subject (422).
    body: dict[str, Any] = {
        k: v for k, v in {"subject": subject, "query": query}.items() if v is not None
    }
    body["dry_run"] = not confirm
    remote = _remote(settings, data_dir, server_url, token)
    if remote is not None:
        with remote, _translated():
            result = remote.call("POST", "/forget-about", store, body)
    else:
        with _memory(settings) as memory, _translated():
            found = memory.forget_about(
                store=store, subject=subject, query=query, dry_run=not confirm
            )
            result = found.model_dump(mode="json")
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    for item in result["found"]:
        click.echo(f"{item['id']}  {item['tier']:<7}  {_one_line_text(item['text'])}")
    n = len(result["found"])
    if result["dry_run"]:
        click.echo(f"{n} record(s) found; nothing changed (run again with --confirm to purge)")
    else:
        click.echo(f"purged {n} record(s) from '{result['store']}'")


def _one_line_text(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
