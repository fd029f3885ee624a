"""`halls bench NAME`: benchmarks that drive a live halls as a user would."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from halls.cli._app import main
from halls.errors import HallsError
from halls.models import RETRIEVERS

# -- benchmarks: `halls bench NAME`; each benchmark is one subcommand of this group --


@main.group()
def bench() -> None:
    """Benchmarks that drive a live halls server over HTTP."""


@contextmanager
def _progress() -> Iterator[tuple[Any, Callable[[str, int, int], None]]]:
    """A rich progress display on stderr, and a (phase, done, total) callback for it."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    columns = (
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True)) as bar:
        tasks: dict[str, Any] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total)
            bar.update(tasks[phase], completed=done)

        yield bar, progress


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
    "--sizes",
    default="1k,10k,100k",
    show_default=True,
    callback=_sizes,
    help="Cumulative store sizes to measure at, comma-separated.",
)
@click.option(
    "--queries",
    default=200,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Timed searches per size.",
)
@click.option(
    "--batch",
    default=500,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="Memories per POST /short/batch.",
)
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
    from rich.table import Table

    from halls.bench import perf

    try:
        with _progress() as (bar, progress):
            if url is None:
                bar.console.print("starting a halls server on a temporary data directory...")
            with perf.live_server() if url is None else nullcontext(perf.Server(url)) as target:
                result = perf.run(
                    target,
                    sizes=sizes,
                    queries=queries,
                    batch=batch,
                    seed=seed,
                    token=token,
                    progress=progress,
                )
    except HallsError as exc:
        raise click.ClickException(exc.message) from None
    table = Table(
        title=f"halls bench perf ({result['machine']['cpus']} CPUs, "
        f"{result['machine']['cpu_model']}; {' '.join(result['machine']['cpu_flags'])})"
    )
    for header in perf.TABLE_HEADERS:
        table.add_column(header, justify="right")
    for row in perf.table_rows(result):
        table.add_row(*row)
    # Piped output would be cut to 80 columns; the table needs a little more.
    Console(width=None if sys.stdout.isatty() else 110).print(table)
    if out is not None:
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        click.echo(f"wrote {out}", err=True)


@bench.command("locomo")
@click.option(
    "--data",
    "data",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="LoCoMo JSON, e.g. ../shared/bench/locomo_dev.json.",
)
@click.option(
    "--retriever",
    default="full",
    show_default=True,
    type=click.Choice(RETRIEVERS),
    help="Which of /search's retrievers to measure.",
)
@click.option("--limit-conversations", type=click.IntRange(1), help="Use the first N only.")
@click.option("--limit-questions", type=click.IntRange(1), help="Ask at most N per conversation.")
@click.option(
    "--foreign",
    is_flag=True,
    help="Also ask each store the other conversations' questions and general-knowledge ones, "
    "and report the share that gets no hit.",
)
@click.option(
    "--min-relevance",
    type=click.FloatRange(0.0, 1.0),
    help="The threshold the thresholded figures are at. Default: the service's (0.1).",
)
@click.option(
    "--no-reinforce",
    "no_reinforce",
    is_flag=True,
    help='Ask every question with "reinforce": false (the old protocol); by default each '
    "is asked as an agent asks it, reinforcement as the server is configured.",
)
@click.option(
    "--consolidate",
    is_flag=True,
    help="Run consolidation (the server's defaults) on each store after its turns are in; "
    "also score the answers with each fact hit's sources ranked right after it.",
)
@click.option("--url", help="Measure this running server (new stores); default: start one.")
@click.option("--token", help="Bearer token for --url.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write JSON here.")
def bench_locomo(
    data: Path,
    retriever: str,
    limit_conversations: int | None,
    limit_questions: int | None,
    foreign: bool,
    min_relevance: float | None,
    no_reinforce: bool,
    consolidate: bool,
    url: str | None,
    token: str | None,
    out: Path | None,
) -> None:
    """Recall@k and nDCG on LoCoMo, through a live server's HTTP API.

    Each conversation's questions are asked one after another of its own
    store, as an agent asks them: reinforcement is on as the server has it
    (--no-reinforce: off). Scored on every hit, and (the last row) on the hits whose relevance
    clears --min-relevance: what the server returns at that threshold.
    With --consolidate, a second table scores the same answers with each
    fact hit's sources ranked right after it.
    """
    from contextlib import nullcontext

    from rich.console import Console
    from rich.table import Table

    from halls.bench import locomo, perf
    from halls.service import DEFAULT_MIN_RELEVANCE

    if min_relevance is None:
        min_relevance = DEFAULT_MIN_RELEVANCE
    try:
        conversations = locomo.load(data)[:limit_conversations]
        with _progress() as (bar, progress):
            if url is None:
                bar.console.print("starting a halls server on a temporary data directory...")
            with perf.live_server() if url is None else nullcontext(perf.Server(url)) as server:
                result = locomo.run(
                    server.url,
                    conversations,
                    retriever=retriever,
                    limit_questions=limit_questions,
                    token=token,
                    progress=progress,
                    foreign=foreign,
                    min_relevance=min_relevance,
                    reinforce=not no_reinforce,
                    consolidate=consolidate,
                )
    except HallsError as exc:
        raise click.ClickException(exc.message) from None
    lat, ingest = result["search_latency"], result["ingest"]
    table = Table(
        title=f"halls bench locomo --retriever {retriever}"
        f"{'' if result['reinforce'] else ' --no-reinforce'}: {result['questions']} "
        f"questions, {result['turns']} turns"
    )
    table.add_column("category")
    for header in ("n", *locomo.TABLE_METRICS):
        table.add_column(header, justify="right")
    for row in locomo.table_rows(result):
        table.add_row(*row)
    Console().print(table)
    if consolidate:
        merged = Table(
            title=f"with each fact's sources right after it "
            f"({result['consolidate']['promoted']} facts promoted)"
        )
        merged.add_column("category")
        for header in ("n", *locomo.TABLE_METRICS):
            merged.add_column(header, justify="right")
        for row in locomo.table_rows(result, "scores_with_sources"):
            merged.add_row(*row)
        Console().print(merged)
    skipped = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in result["skipped"].items())
    click.echo(f"skipped: {skipped}")
    click.echo(
        f"ingest: {ingest['turns_per_second']} turns/s; search over HTTP: "
        f"p50 {lat.get('p50_ms')} ms, p95 {lat.get('p95_ms')} ms"
    )
    if foreign:
        f = result["foreign"]
        click.echo(
            f"no hit at relevance >= {min_relevance:g}: "
            f"other conversations' questions {f['foreign']['no_hit']:.1%} of {f['foreign']['n']}, "
            f"general knowledge {f['general']['no_hit']:.1%} of {f['general']['n']}, "
            f"both {f['overall']['no_hit']:.1%}"
        )
    if out is not None:
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        click.echo(f"wrote {out}", err=True)


@bench.command("consolidate")
@click.option(
    "--entries",
    default=10_000,
    show_default=True,
    type=click.IntRange(100, 1_000_000),
    help="Short-term entries in the store before the run.",
)
@click.option("--seed", default=7, show_default=True, type=int, help="Seed of the text generator.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write JSON here.")
def bench_consolidate(entries: int, seed: int, out: Path | None) -> None:
    """Time one heuristic consolidation run over a store of N short-term entries."""
    from halls.bench import consolidate as bench_mod

    result = bench_mod.run(entries, seed, progress=lambda m: click.echo(m, err=True))
    click.echo(
        f"heuristic run over {result['entries']} entries: {result['run_seconds']} s "
        f"({result['entries_per_second']} entries/s); ingest took "
        f"{result['ingest_seconds']} s"
    )
    click.echo("actions: " + ", ".join(f"{k} {v}" for k, v in result["actions"].items()))
    click.echo(
        f"first progress after {result['first_progress_seconds']} s; longest wait between "
        f"two: {result['longest_gap_seconds']} s ({result['longest_gap_between']})"
    )
    rss = result["rss_mb"]
    if rss is not None:
        click.echo(
            f"resident memory: {rss['before']} MB before, {rss['peak']} MB at the peak, "
            f"{rss['after']} MB after"
        )
    if out is not None:
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        click.echo(f"wrote {out}", err=True)


@bench.command("context")
@click.option("--show", is_flag=True, help="Also print both blocks.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write JSON here.")
def bench_context(show: bool, out: Path | None) -> None:
    """Tokens of the verbose and terse session blocks for the same facts, and the hot set."""
    from halls.bench import context as bench_mod

    figures = bench_mod.run(progress=lambda m: click.echo(m, err=True))
    click.echo(bench_mod.report(figures))
    if show:
        click.echo(f"\n{figures['verbose_text']}\n\n{figures['terse_text']}")
    if out is not None:
        out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        click.echo(f"wrote {out}", err=True)


@bench.command("dreams")
@click.option(
    "--engine",
    default="heuristic",
    show_default=True,
    type=click.Choice(["heuristic", "llm"]),
    help="The consolidator engine of the server this starts.",
)
@click.option("--model-url", help="llm engine: the OpenAI-compatible endpoint's base URL.")
@click.option("--model", help="llm engine: the model name to ask for.")
@click.option(
    "--scenarios",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Another scenario file of the same shape; default: the team's suite.",
)
@click.option("--kind", "kinds", multiple=True, help="Only scenarios of this kind (repeatable).")
@click.option(
    "--locomo",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Instead of the scenarios: what runs promote from these LoCoMo conversations "
    "(JSON with 'observation' fields, e.g. ../shared/bench/locomo_dev.json).",
)
@click.option(
    "--limit-conversations", type=click.IntRange(1), help="--locomo: use the first N only."
)
@click.option("--url", help="Score this running server instead (new stores; its own engine).")
@click.option("--token", help="Bearer token for --url.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write JSON here.")
def bench_dreams(
    engine: str,
    model_url: str | None,
    model: str | None,
    scenarios: Path | None,
    kinds: tuple[str, ...],
    locomo: Path | None,
    limit_conversations: int | None,
    url: str | None,
    token: str | None,
    out: Path | None,
) -> None:
    """Pass rate of consolidation on labelled scenarios, per kind, and the failures.

    With --locomo FILE: what consolidation promotes from LoCoMo conversations,
    scored by the turns their observations cite and, with the torch extra, by
    content: a fact is good when it says what an observation says (cosine >= 0.80,
    sentence-transformers all-MiniLM-L6-v2, float32).
    """
    from contextlib import nullcontext

    from rich.console import Console
    from rich.table import Table

    from halls.bench import content, dreams, dreams_locomo, perf

    if engine == "llm" and url is None and not model_url:
        raise click.UsageError("--engine llm needs --model-url")
    if locomo is not None and (scenarios is not None or kinds):
        raise click.UsageError("--locomo scores conversations; --scenarios and --kind do not apply")
    env = {"HALLS_CONSOLIDATOR__MODE": "external", "HALLS_CONSOLIDATOR__ENGINE": engine}
    if model_url:
        env["HALLS_CONSOLIDATOR__MODEL_URL"] = model_url
    if model:
        env["HALLS_CONSOLIDATOR__MODEL"] = model
    console = Console(width=None if sys.stdout.isatty() else 110)
    try:
        encoder = None
        if locomo is not None:
            conversations = dreams_locomo.load(locomo)[:limit_conversations]
            try:
                encoder = content.load_encoder()
            except content.MissingExtra as exc:
                click.echo(f"note: {exc}", err=True)
        else:
            suite = dreams.load(scenarios)
            unknown = set(kinds) - set(dreams.KINDS)
            if unknown:
                raise click.BadParameter(
                    f"unknown kind(s) {', '.join(sorted(unknown))}; "
                    f"one of {', '.join(dreams.KINDS)}",
                    param_hint="--kind",
                )
            suite = [s for s in suite if not kinds or s.kind in kinds]
        with _progress() as (bar, progress):
            if url is None:
                bar.console.print("starting a halls server on a temporary data directory...")
            started = perf.live_server(settings=env) if url is None else None
            with started or nullcontext(perf.Server(url or "")) as target:
                if locomo is not None:
                    result = dreams_locomo.run(
                        target.url, conversations, token=token, progress=progress, encoder=encoder
                    )
                else:
                    result = dreams.run(target.url, suite, token=token, progress=progress)
    except HallsError as exc:
        raise click.ClickException(exc.message) from None
    if locomo is not None:
        table = Table(title=f"halls bench dreams --locomo: {result['turns']} turns", pad_edge=False)
        for header in dreams_locomo.TABLE_HEADERS:
            table.add_column(header, justify="right")
        for row in dreams_locomo.table_rows(result):
            table.add_row(*row)
        console.print(table)
        click.echo(dreams_locomo.content_line(result))
        click.echo(f"consolidation runs took {result['run_seconds']} s in all")
    else:
        for failure in result["failures"]:
            console.print(f"[bold red]FAIL[/] {failure['id']} ({failure['kind']})")
            for problem in failure["problems"]:
                console.print(f"    {problem}", markup=False)
            for fact in failure["facts"]:
                console.print(f"    active: {fact}", markup=False)
            for action in failure["actions"]:
                console.print(f"    run: {action}", markup=False)
        table = Table(
            title=f"halls bench dreams --engine {result['engine']}: {result['passed']}/"
            f"{result['scenarios']} passed ({result['pass_rate']:.1%}) in {result['seconds']} s"
        )
        for header in ("kind", "n", "passed", "pass rate"):
            table.add_column(header, justify="left" if header == "kind" else "right")
        for kind, row in result["kinds"].items():
            table.add_row(kind, str(row["n"]), str(row["passed"]), f"{row['pass_rate']:.1%}")
        console.print(table)
        planted = result["planted"]
        console.print(
            f"planted facts: {planted['active']['as_expected']} of {planted['active']['n']} "
            f"active as expected, {planted['inactive']['as_expected']} of "
            f"{planted['inactive']['n']} changed or ended ones inactive, "
            f"{planted['unexpected_facts']} unexpected facts, "
            f"{planted['wrong_retirements']} held facts wrongly superseded or retracted, "
            f"{planted['retractions_as_evidence']} retractions counted as evidence",
            markup=False,
        )
    if out is not None:
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        click.echo(f"wrote {out}", err=True)


@bench.command("dreams-locomo", hidden=True)
@click.option("--data", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--limit-conversations", type=click.IntRange(1))
@click.option("--url")
@click.option("--token")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path))
@click.pass_context
def bench_dreams_locomo(ctx: click.Context, data: Path, **rest: Any) -> None:
    """The old name of ``halls bench dreams --locomo FILE``."""
    ctx.invoke(bench_dreams, locomo=data, **rest)
