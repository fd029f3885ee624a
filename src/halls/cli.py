"""The ``halls`` command line: a composition root, like the server.

Commands that touch memories call the same ``Memory`` service as the HTTP
API, on the local data directory. Errors are printed as one line, never as a
traceback, and exit with status 1 (2 for bad usage, as click does).
"""

from __future__ import annotations

import ipaddress
import json
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from halls.config import Settings, load_settings
from halls.errors import HallsError

F = TypeVar("F", bound=Callable[..., Any])


def _common(fn: F) -> F:
    fn = click.option("--config", type=click.Path(dir_okay=False, path_type=Path), help="YAML config file.")(fn)
    fn = click.option(
        "--data-dir", type=click.Path(file_okay=False, path_type=Path), help="Where stores live."
    )(fn)
    return fn


def _settings(config: Path | None, data_dir: Path | None, **overrides: Any) -> Settings:
    try:
        return load_settings(config, data_dir=data_dir, **overrides)
    except (ValueError, HallsError) as exc:
        raise click.ClickException(_one_line(exc)) from None


def _one_line(exc: Exception) -> str:
    text = getattr(exc, "message", None) or str(exc)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


@contextmanager
def _memory(settings: Settings) -> Iterator[Any]:
    from halls.service import Memory

    memory = Memory(settings)
    try:
        yield memory
    except HallsError as exc:
        raise click.ClickException(exc.message) from None
    finally:
        memory.close()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.group()
@click.version_option(package_name="halls")
def main() -> None:
    """halls: the Halls of Memory, a local-first memory server for LLM agents."""


@main.command()
@_common
@click.option("--host", help="Address to bind (default 127.0.0.1).")
@click.option("--port", type=int, help="Port to listen on (default 7420).")
def serve(config: Path | None, data_dir: Path | None, host: str | None, port: int | None) -> None:
    """Run the HTTP API (and everything mounted on it)."""
    import uvicorn

    from halls.http import create_app
    from halls.service import Memory

    server = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    settings = _settings(config, data_dir, server=server or None)
    cfg = settings.server
    if not _is_loopback(cfg.host) and cfg.bearer_token is None:
        raise click.ClickException(
            f"refusing to listen on {cfg.host} without a bearer token: set server.bearer_token "
            "(HALLS_SERVER__BEARER_TOKEN) or bind to 127.0.0.1"
        )
    memory = Memory(settings)
    mcp = None
    if settings.mcp.enabled:
        from halls.mcp import LocalBackend, build_server

        mcp = build_server(LocalBackend(memory), host=cfg.host, path=settings.mcp.path)
    click.echo(f"halls: serving on http://{cfg.host}:{cfg.port} (data in {settings.data_dir})", err=True)
    uvicorn.run(create_app(memory, mcp=mcp), host=cfg.host, port=cfg.port, log_level="info")


@main.command()
@_common
@click.argument("content")
@click.option("--store", help="Store name (default: the configured store).")
@click.option("--topic")
@click.option("--pinned", is_flag=True, help="Never ages out of short-term memory.")
@click.option("--occurred-at", help="When it happened (ISO-8601 or unix seconds).")
def remember(
    config: Path | None,
    data_dir: Path | None,
    content: str,
    store: str | None,
    topic: str | None,
    pinned: bool,
    occurred_at: str | None,
) -> None:
    """Remember CONTENT in short-term memory; prints the new id."""
    with _memory(_settings(config, data_dir)) as memory:
        entry = memory.remember(content, store=store, topic=topic, pinned=pinned, occurred_at=occurred_at)
        click.echo(entry.id)


@main.command()
@_common
@click.argument("query")
@click.option("--store", help="Store name (default: the configured store).")
@click.option("-n", "--n-results", default=5, show_default=True, type=int)
@click.option("--tier", "tiers", multiple=True, help="short, near or long; repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON.")
def recall(
    config: Path | None,
    data_dir: Path | None,
    query: str,
    store: str | None,
    n_results: int,
    tiers: tuple[str, ...],
    as_json: bool,
) -> None:
    """Search every tier for QUERY and print the ranked hits."""
    with _memory(_settings(config, data_dir)) as memory:
        hits = memory.search(query, store=store, n_results=n_results, tiers=tiers or None)
        if as_json:
            click.echo(json.dumps([h.model_dump(mode="json") for h in hits], indent=2))
            return
        if not hits:
            click.echo("no memories found", err=True)
        for hit in hits:
            click.echo(f"{hit.score:.3f}  {hit.tier:<5}  {hit.id}  {hit.content}")


@main.group(invoke_without_command=True)
@_common
@click.pass_context
def stores(ctx: click.Context, config: Path | None, data_dir: Path | None) -> None:
    """List stores (or create one with `stores create NAME`)."""
    ctx.obj = _settings(config, data_dir)
    if ctx.invoked_subcommand is None:
        with _memory(ctx.obj) as memory:
            for name in memory.stores():
                click.echo(name)


def _sub_settings(settings: Settings, config: Path | None, data_dir: Path | None) -> Settings:
    # `halls stores create X --data-dir D` reads naturally; accept the options
    # after the subcommand too, where they win over those before it.
    return _settings(config, data_dir) if config or data_dir else settings


@stores.command("list")
@_common
@click.pass_obj
def stores_list(settings: Settings, config: Path | None, data_dir: Path | None) -> None:
    """List the stores in the data directory."""
    with _memory(_sub_settings(settings, config, data_dir)) as memory:
        for name in memory.stores():
            click.echo(name)


@stores.command("create")
@_common
@click.argument("name")
@click.pass_obj
def stores_create(
    settings: Settings, config: Path | None, data_dir: Path | None, name: str
) -> None:
    """Create an empty store NAME."""
    with _memory(_sub_settings(settings, config, data_dir)) as memory:
        click.echo(memory.create_store(name))


@main.command()
@_common
@click.option("--store", help="Store name (default: the configured store).")
def stats(config: Path | None, data_dir: Path | None, store: str | None) -> None:
    """Print counts per tier, size and embedder of a store, as JSON."""
    with _memory(_settings(config, data_dir)) as memory:
        click.echo(json.dumps(memory.stats(store=store), indent=2))


@main.command()
@_common
@click.option("--store", help="Store name (default: the configured store).")
def reembed(config: Path | None, data_dir: Path | None, store: str | None) -> None:
    """Re-embed a store with the configured embedder (after changing models)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with _memory(_settings(config, data_dir)) as memory:
        name = store or memory.settings.default_store
        total = memory.count_embedded(store=name)
        columns = (*Progress.get_default_columns()[:-1], MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, transient=False) as progress:
            task = progress.add_task(f"re-embedding {name}", total=total)
            done = memory.reembed(store=name, progress=lambda n: progress.advance(task, n))
        click.echo(f"re-embedded {done} records of '{name}' with {memory.fingerprint_of(name)}")


@main.command()
@_common
def doctor(config: Path | None, data_dir: Path | None) -> None:
    """Check the installation: model, data directory, stores, port."""
    settings = _settings(config, data_dir)
    ok = True

    def report(good: bool, what: str) -> None:
        nonlocal ok
        ok = ok and good
        click.echo(f"{'ok ' if good else 'FAIL'}  {what}")

    from halls.embed import build_embedder, fingerprint

    try:
        embedder = build_embedder(settings.embedder)
        mine = fingerprint(embedder)
        embedder.embed(["doctor"])
        report(True, f"embedder loads and embeds: {mine}")
    except Exception as exc:  # any failure here is what doctor exists to report
        mine = None
        report(False, f"embedder: {_one_line(exc)}")

    probe = settings.data_dir / ".doctor-probe"
    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        probe.write_text("ok")
        probe.unlink()
        report(True, f"data directory is writable: {settings.data_dir}")
    except OSError as exc:
        report(False, f"data directory {settings.data_dir}: {exc.strerror}")

    from halls.service import Memory

    with Memory(settings) as memory:
        for name in memory.stores():
            theirs = memory.fingerprint_of(name)
            good = theirs is None or mine is None or theirs == mine
            hint = "" if good else f" (run `halls reembed --store {name}`)"
            report(good, f"store '{name}': embedder {theirs or 'not set yet'}{hint}")

    host, port = settings.server.host, settings.server.port
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
            report(True, f"port {host}:{port} is free")
        except OSError:
            report(_halls_answers(host, port), f"port {host}:{port} is taken" + (
                " by a running halls" if _halls_answers(host, port) else " by another program"
            ))
    sys.exit(0 if ok else 1)


def _halls_answers(host: str, port: int) -> bool:
    import httpx

    try:
        return httpx.get(f"http://{host}:{port}/healthz", timeout=2).json() == {"status": "ok"}
    except (httpx.HTTPError, ValueError):
        return False


# -- benchmarks: `halls bench NAME`; each benchmark is one subcommand of this group --


@main.group()
def bench() -> None:
    """Benchmarks that drive a live halls server over HTTP."""


def _sizes(_ctx: click.Context, _param: click.Parameter, value: str) -> list[int]:
    out = []
    for part in value.split(","):
        text = part.strip().lower().replace("_", "")
        scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
        digits = text[:-1] if scale > 1 else text
        if not digits.isdigit() or int(digits) * scale <= 0:
            raise click.BadParameter(f"'{part.strip()}' is not a positive count like 1000 or 10k")
        out.append(int(digits) * scale)
    if out != sorted(set(out)):
        raise click.BadParameter("sizes must be strictly increasing, e.g. 1k,10k,100k")
    return out


@bench.command("perf")
@click.option(
    "--sizes", default="1k,10k,100k", show_default=True, callback=_sizes,
    help="Cumulative store sizes to measure at, comma-separated.",
)
@click.option("--queries", default=200, show_default=True, type=click.IntRange(1, 100_000),
              help="Timed searches per size.")
@click.option("--batch", default=500, show_default=True, type=click.IntRange(1, 1000),
              help="Memories per POST /short/batch.")
@click.option("--seed", default=7, show_default=True, type=int, help="Seed of the text generator.")
@click.option("--url", help="Benchmark this running server (in a new store); default: start one.")
@click.option("--token", help="Bearer token for --url.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write JSON here.")
def bench_perf(
    sizes: list[int],
    queries: int,
    batch: int,
    seed: int,
    url: str | None,
    token: str | None,
    out: Path | None,
) -> None:
    """Batched ingest rate and search latency over HTTP, at growing store sizes."""
    from contextlib import nullcontext

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
    from rich.table import Table

    from halls.bench import perf

    console = Console(stderr=True)
    columns = ("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    try:
        with Progress(*columns, console=console, transient=False) as bar:
            tasks: dict[str, Any] = {}

            def progress(phase: str, done: int, total: int) -> None:
                if phase not in tasks:
                    tasks[phase] = bar.add_task(phase, total=total)
                bar.update(tasks[phase], completed=done)

            if url is None:
                bar.console.print("starting a halls server on a temporary data directory...")
            with perf.live_server() if url is None else nullcontext(perf.Server(url)) as target:
                result = perf.run(
                    target, sizes=sizes, queries=queries, batch=batch, seed=seed,
                    token=token, progress=progress,
                )
    except HallsError as exc:
        raise click.ClickException(exc.message) from None
    table = Table(title=f"halls bench perf ({result['machine']['cpus']} CPUs, "
                        f"{result['machine']['cpu_model']})")
    for header in perf.TABLE_HEADERS:
        table.add_column(header, justify="right")
    for row in perf.table_rows(result):
        table.add_row(*row)
    # Piped output would be cut to 80 columns; the table needs a little more.
    Console(width=None if sys.stdout.isatty() else 110).print(table)
    if out is not None:
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        click.echo(f"wrote {out}", err=True)


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
def mcp_command(
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    store: str | None,
) -> None:
    """Serve MCP over stdio (Claude Code, VS Code, Cursor, ...)."""
    from halls.mcp import LocalBackend, RemoteBackend, build_server

    if server_url:
        if data_dir is not None:
            raise click.UsageError("use either --server-url or --data-dir, not both")
        remote = RemoteBackend(server_url, token)
        try:
            build_server(remote, default_store=store).run("stdio")
        finally:
            remote.close()
        return
    from halls.service import Memory

    memory = Memory(_settings(config, data_dir))
    try:
        build_server(LocalBackend(memory), default_store=store).run("stdio")
    finally:
        memory.close()


@main.group()
def install() -> None:
    """Connect a coding agent to halls."""


@main.group()
def uninstall() -> None:
    """Undo `halls install`."""


_settings_option = click.option(
    "--settings",
    "path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Claude Code settings file (default: ~/.claude/settings.json).",
)


@install.command("claude-code")
@_settings_option
@click.option("--server-url", default=DEFAULT_SERVER_URL, show_default=True, help="halls server.")
@click.option("--store", help="Store the hooks read and write (default: the server's).")
def install_claude_code(path: Path | None, server_url: str, store: str | None) -> None:
    """Add SessionStart, UserPromptSubmit, Stop and PreCompact hooks."""
    from halls.integrations import claude_code

    target = path or claude_code.default_settings_path()
    try:
        events = claude_code.install(target, server_url, store)
    except HallsError as exc:
        raise click.ClickException(exc.message) from None
    click.echo(f"installed halls hooks ({', '.join(events)}) in {target}")
    click.echo("undo with: halls uninstall claude-code" + (f" --settings {target}" if path else ""))


@uninstall.command("claude-code")
@_settings_option
def uninstall_claude_code(path: Path | None) -> None:
    """Remove exactly the hooks `halls install claude-code` added."""
    from halls.integrations import claude_code

    target = path or claude_code.default_settings_path()
    try:
        click.echo(f"{claude_code.uninstall(target)} ({target})")
    except HallsError as exc:
        raise click.ClickException(exc.message) from None


@main.command("hook")
@click.argument("event", type=click.Choice(["session-start", "user-prompt", "stop", "pre-compact"]))
@click.option("--server-url", default=DEFAULT_SERVER_URL, show_default=True)
@click.option("--token", envvar="HALLS_TOKEN", help="Bearer token (env HALLS_TOKEN).")
@click.option("--store", help="Store to use (default: the server's).")
@click.option("--budget-tokens", default=400, show_default=True, type=click.IntRange(50, 8000))
def hook(
    event: str, server_url: str, token: str | None, store: str | None, budget_tokens: int
) -> None:
    """Run one Claude Code hook (reads the hook's JSON on stdin)."""
    from halls.integrations import hooks
    from halls.mcp import RemoteBackend

    data = hooks.read_input(sys.stdin.read() if not sys.stdin.isatty() else "")
    remote = RemoteBackend(server_url, token, timeout=10)
    try:
        out = hooks.run(event, data, remote, store, budget_tokens)
    except Exception as exc:  # a failing hook must never block the agent's session
        click.echo(f"halls hook {event}: {_one_line(exc)}", err=True)
        return
    finally:
        remote.close()
    if out:
        click.echo(out)


@bench.command("locomo")
@click.option("--data", "data", required=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="LoCoMo JSON, e.g. ../shared/bench/locomo_dev.json.")
@click.option("--retriever", default="full", show_default=True,
              type=click.Choice(["full", "fused", "bm25", "dense"]),
              help="Which of /search's retrievers to measure.")
@click.option("--limit-conversations", type=click.IntRange(1), help="Use the first N only.")
@click.option("--limit-questions", type=click.IntRange(1), help="Ask at most N per conversation.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write JSON here.")
def bench_locomo(
    data: Path,
    retriever: str,
    limit_conversations: int | None,
    limit_questions: int | None,
    out: Path | None,
) -> None:
    """Recall@k and nDCG on LoCoMo, through a live server's HTTP API."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
    from rich.table import Table

    from halls.bench import locomo, perf

    console = Console(stderr=True)
    columns = ("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    try:
        conversations = locomo.load(data)[:limit_conversations]
        with Progress(*columns, console=console) as bar:
            tasks: dict[str, Any] = {}

            def progress(phase: str, done: int, total: int) -> None:
                if phase not in tasks:
                    tasks[phase] = bar.add_task(phase, total=total)
                bar.update(tasks[phase], completed=done)

            bar.console.print("starting a halls server on a temporary data directory...")
            with perf.live_server() as server:
                result = locomo.run(server.url, conversations, retriever=retriever,
                                    limit_questions=limit_questions, progress=progress)
    except HallsError as exc:
        raise click.ClickException(exc.message) from None
    lat, ingest = result["search_latency"], result["ingest"]
    table = Table(title=f"halls bench locomo --retriever {retriever}: {result['questions']} "
                        f"questions, {result['turns']} turns")
    table.add_column("category")
    for header in ("n", *locomo.TABLE_METRICS):
        table.add_column(header, justify="right")
    for row in locomo.table_rows(result):
        table.add_row(*row)
    Console().print(table)
    skipped = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in result["skipped"].items())
    click.echo(f"skipped: {skipped}")
    click.echo(f"ingest: {ingest['turns_per_second']} turns/s; search over HTTP: "
               f"p50 {lat.get('p50_ms')} ms, p95 {lat.get('p95_ms')} ms")
    if out is not None:
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        click.echo(f"wrote {out}", err=True)




@bench.command("consolidate")
@click.option("--entries", default=10_000, show_default=True, type=click.IntRange(100, 1_000_000),
              help="Short-term entries in the store before the run.")
@click.option("--seed", default=7, show_default=True, type=int, help="Seed of the text generator.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write JSON here.")
def bench_consolidate(entries: int, seed: int, out: Path | None) -> None:
    """Time one heuristic consolidation run over a store of N short-term entries."""
    from halls.bench import consolidate as bench_mod

    result = bench_mod.run(entries, seed, progress=lambda m: click.echo(m, err=True))
    click.echo(f"heuristic run over {result['entries']} entries: {result['run_seconds']} s "
               f"({result['entries_per_second']} entries/s); ingest took "
               f"{result['ingest_seconds']} s")
    click.echo("actions: " + ", ".join(f"{k} {v}" for k, v in result["actions"].items()))
    if out is not None:
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        click.echo(f"wrote {out}", err=True)


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
            click.echo(f"{run.id}  {run.started_at.isoformat()}  {run.engine:<9} "
                       f"{run.status:<8} {counts}")


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


if __name__ == "__main__":  # pragma: no cover
    main()
