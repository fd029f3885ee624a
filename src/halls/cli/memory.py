"""The everyday commands: remember, recall, stores, stats, reembed, doctor."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import click

from halls.cli._app import (
    _common,
    _halls_answers,
    _memory,
    _one_line,
    _remote,
    _server,
    _settings,
    _translated,
    main,
)
from halls.config import Settings
from halls.models import IMPORTANCE_LEVELS, RECALL_TIERS


class _Importance(click.ParamType):
    """A number from 0 to 1, or a level name (halls.importance): refused at the edge."""

    name = "importance"

    def convert(self, value: Any, param: Any, ctx: Any) -> float | str:
        if isinstance(value, float) or value in IMPORTANCE_LEVELS:
            return value
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not 0.0 <= number <= 1.0:  # NaN too
            self.fail(f"{value!r}: a number from 0 to 1, or {', '.join(IMPORTANCE_LEVELS)}")
        return number


@main.command()
@_common
@_server
@click.argument("content")
@click.option("--store", help="Store name (default: the configured store).")
@click.option("--topic")
@click.option("--pinned", is_flag=True, help="Never ages out of short-term memory.")
@click.option("--occurred-at", help="When it happened (ISO-8601 or unix seconds).")
@click.option(
    "--importance",
    type=_Importance(),
    help=f"How much it matters: 0 to 1, or {', '.join(IMPORTANCE_LEVELS)}. Default: unset.",
)
@click.option("--scope", help="The work scope it is for, e.g. web/fix-login (a write is a turn).")
def remember(
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    content: str,
    store: str | None,
    topic: str | None,
    pinned: bool,
    occurred_at: str | None,
    importance: float | str | None,
    scope: str | None,
) -> None:
    """Remember CONTENT in short-term memory; prints the new id."""
    settings = _settings(config, data_dir)
    remote = _remote(settings, data_dir, server_url, token)
    if remote is not None:
        body = {
            "content": content,
            "topic": topic,
            "pinned": pinned,
            "occurred_at": occurred_at,
            "importance": importance,
            "scope": scope,
        }
        with remote, _translated():
            click.echo(remote.call("POST", "/short", store, body)["id"])
        return
    with _memory(settings) as memory:
        entry = memory.remember(
            content,
            store=store,
            topic=topic,
            pinned=pinned,
            occurred_at=occurred_at,
            importance=importance,
            scope=scope,
        )
        click.echo(entry.id)


@main.command()
@_common
@_server
@click.argument("query")
@click.option(
    "--store",
    "stores",
    multiple=True,
    help="Store name (default: the configured store); repeat it to search several stores "
    "at once, their hits merged into one list.",
)
@click.option("-n", "--n-results", default=5, show_default=True, type=int)
@click.option(
    "--tier",
    "tiers",
    multiple=True,
    help=f"{', '.join(RECALL_TIERS)}; repeatable. Default: all but journal.",
)
@click.option(
    "--min-relevance",
    type=click.FloatRange(0.0, 1.0),
    help="Show hits only if the search's relevance (0 to 1) is at least this; 0 shows them "
    "all. Default: the service's (0.1).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON.")
def recall(
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    query: str,
    stores: tuple[str, ...],
    n_results: int,
    tiers: tuple[str, ...],
    min_relevance: float | None,
    as_json: bool,
) -> None:
    """Search every tier for QUERY; print the ranked hits, then the open loops due for it.

    Each line: score, relevance (the estimated probability that the search
    found a memory relevant to QUERY), tier, id, text; with several stores,
    the store's name before the text. Under a long-term fact, a "from" line
    per record it derives from (at most 3, those that match QUERY best):
    their relevance to QUERY, tier, id, text.
    """
    settings = _settings(config, data_dir)
    remote = _remote(settings, data_dir, server_url, token)
    # One --store is the usual ?store=; several are the body's `stores`.
    store = stores[0] if len(stores) == 1 else None
    several = list(stores) if len(stores) > 1 else None
    if remote is not None:
        body: dict[str, object] = {
            "query": query,
            "n_results": n_results,
            "tiers": list(tiers) or None,
        }
        if min_relevance is not None:  # else the server's default
            body["min_relevance"] = min_relevance
        if several:
            body["stores"] = several
        with remote, _translated():
            found = remote.call("POST", "/search", store, body)
    else:
        with _memory(settings) as memory:
            recalled = memory.recall(
                query,
                store=store,
                stores=several,
                n_results=n_results,
                tiers=tiers or None,
                **({} if min_relevance is None else {"min_relevance": min_relevance}),
            )
            found = recalled.model_dump(mode="json")
    hits, due = found["results"], found["due"]
    if as_json:
        click.echo(json.dumps(hits, indent=2))
        return
    if not hits:
        click.echo("no memories found (--min-relevance 0 shows the closest)", err=True)
    for hit in hits:
        where = f"[{hit.get('store')}]  " if several else ""
        click.echo(
            f"{hit['score']:.3f}  {_relevance(hit['relevance'])}  {hit['tier']:<5}  {hit['id']}  "
            f"{where}{hit['content']}"
        )
        for source in hit.get("sources", []):
            # A fact's evidence, under it: its relevance to QUERY, tier, id, text.
            click.echo(
                f"    from  {source['score']:.2f}  {source['tier']:<5}  {source['id']}  "
                f"{source['content']}"
            )
    for loop in due:
        where = f"[{loop.get('store')}]  " if several else ""
        click.echo(f"due    near   {loop['id']}  {where}{loop['intent']}  ({loop['reason']})")


def _relevance(value: float | None) -> str:
    # None: the store's embedder is not the one relevance was fitted for.
    return "  -  " if value is None else f"{value:.2f}"


def _list_stores(
    settings: Settings, data_dir: Path | None, url: str | None, token: str | None
) -> None:
    remote = _remote(settings, data_dir, url, token)
    if remote is not None:
        with remote, _translated():
            names = remote.call("GET", "/stores", None)["stores"]
    else:
        with _memory(settings) as memory:
            names = memory.stores()
    for name in names:
        click.echo(name)


@main.group(invoke_without_command=True)
@_common
@_server
@click.pass_context
def stores(
    ctx: click.Context,
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
) -> None:
    """List stores (or `stores create NAME`, `stores delete NAME --confirm`)."""
    ctx.obj = (_settings(config, data_dir), data_dir, server_url, token)
    if ctx.invoked_subcommand is None:
        _list_stores(*ctx.obj)


Target = tuple[Settings, Path | None, str | None, str | None]


def _sub_target(
    target: Target, config: Path | None, data_dir: Path | None, url: str | None, tok: str | None
) -> Target:
    # `halls stores create X --data-dir D` reads naturally; accept the options
    # after the subcommand too, where they win over those before it.
    settings, dir0, url0, tok0 = target
    if config or data_dir:
        settings = _settings(config, data_dir)
    return settings, data_dir or dir0, url or url0, tok or tok0


@stores.command("list")
@_common
@_server
@click.pass_obj
def stores_list(
    target: Target,
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
) -> None:
    """List the stores in the data directory."""
    _list_stores(*_sub_target(target, config, data_dir, server_url, token))


@stores.command("create")
@_common
@_server
@click.argument("name")
@click.pass_obj
def stores_create(
    target: Target,
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    name: str,
) -> None:
    """Create an empty store NAME."""
    settings, where, url, tok = _sub_target(target, config, data_dir, server_url, token)
    remote = _remote(settings, where, url, tok)
    if remote is not None:
        with remote, _translated():
            click.echo(remote.call("POST", "/stores", None, {"name": name})["name"])
        return
    with _memory(settings) as memory:
        click.echo(memory.create_store(name))


@stores.command("delete")
@_common
@_server
@click.argument("name")
@click.option("--confirm", is_flag=True, help="Required: the deletion cannot be undone.")
@click.pass_obj
def stores_delete(
    target: Target,
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    name: str,
    confirm: bool,
) -> None:
    """Delete store NAME and every file of it, for good."""
    if not confirm:
        raise click.ClickException(
            f"deleting a store cannot be undone: run again with --confirm to delete '{name}'"
        )
    settings, where, url, tok = _sub_target(target, config, data_dir, server_url, token)
    remote = _remote(settings, where, url, tok)
    if remote is not None:
        with remote, _translated():
            remote.call("DELETE", f"/stores/{quote(name, safe='')}", None)
    else:
        with _memory(settings) as memory, _translated():
            memory.delete_store(name)
    click.echo(f"deleted store '{name}'")


@main.command()
@_common
@_server
@click.option("--store", help="Store name (default: the configured store).")
def stats(
    config: Path | None,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    store: str | None,
) -> None:
    """Print counts per tier, size and embedder of a store, as JSON."""
    settings = _settings(config, data_dir)
    remote = _remote(settings, data_dir, server_url, token)
    if remote is not None:
        with remote, _translated():
            click.echo(json.dumps(remote.call("GET", "/stats", store), indent=2))
        return
    with _memory(settings) as memory:
        click.echo(json.dumps(memory.stats(store=store), indent=2))


@main.command()
@_common
@click.option("--store", help="Store name (default: the configured store).")
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Every store embedded by another embedder than the configured one "
    "(after an upgrade that changed the model).",
)
def reembed(config: Path | None, data_dir: Path | None, store: str | None, every: bool) -> None:
    """Re-embed a store with the configured embedder (after changing models)."""
    from rich.progress import MofNCompleteColumn, Progress, TimeRemainingColumn

    if every and store:
        raise click.UsageError("give --store or --all, not both")
    with _memory(_settings(config, data_dir)) as memory:
        if every:
            mine = memory.probe_embedder()
            names = [n for n in memory.stores() if memory.fingerprint_of(n) not in (None, mine)]
            if not names:
                click.echo(f"every store is embedded with {mine}: nothing to do")
                return
        else:
            names = [store or memory.settings.default_store]
        columns = (
            *Progress.get_default_columns()[:-1],
            MofNCompleteColumn(),
            TimeRemainingColumn(),
        )
        for name in names:
            total = memory.count_embedded(store=name)
            with Progress(*columns, transient=False) as progress:
                task = progress.add_task(f"re-embedding {name}", total=total)
                done = memory.reembed(
                    store=name, progress=lambda n, task=task: progress.advance(task, n)
                )
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

    from halls.service import Memory

    try:
        with Memory(settings) as trial:
            mine: str | None = trial.probe_embedder()
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

    with Memory(settings) as memory:
        for name in memory.stores():
            theirs = memory.fingerprint_of(name)
            good = theirs is None or mine is None or theirs == mine
            hint = "" if good else f" (run `halls reembed --store {name}` or `halls reembed --all`)"
            report(good, f"store '{name}': embedder {theirs or 'not set yet'}{hint}")

    host, port = settings.server.host, settings.server.port
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
            report(True, f"port {host}:{port} is free")
        except OSError:
            report(
                _halls_answers(host, port),
                f"port {host}:{port} is taken"
                + (" by a running halls" if _halls_answers(host, port) else " by another program"),
            )
    sys.exit(0 if ok else 1)
