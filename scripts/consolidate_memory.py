"""Whether a process's memory returns to its level after consolidation runs.

    python scripts/consolidate_memory.py [--entries 3000] [--runs 2] [--idle 5]

Fills one store per run with ``--entries`` entries of the consolidation
bench's corpus (``halls.bench.consolidate``; each store its own seed), then
consolidates them one after the other in this process, printing the
resident memory before and after each run (after a garbage collection).
The first run loads the models a run needs and keeps them; what a later
run adds is what a run leaves behind. With ``--idle S`` the models are let
go S seconds after the last run (``consolidator.models_idle_seconds``), and
the memory after that is printed too.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path

from halls.bench.consolidate import DAY, corpus, rss_bytes
from halls.config import ConsolidatorSettings, Settings
from halls.service import Memory


class Clock:
    t = 1_780_000_000.0

    def __call__(self) -> float:
        return self.t


def mb() -> float:
    rss = rss_bytes()
    if rss is None:
        raise SystemExit("the resident set is read from /proc: Linux only")
    return round(rss / 2**20, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--idle", type=float, default=None, help="models_idle_seconds")
    args = parser.parse_args()
    clock = Clock()
    t0 = clock.t
    settings = ConsolidatorSettings(mode="external", models_idle_seconds=args.idle)
    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory(Settings(data_dir=Path(tmp), consolidator=settings), clock=clock) as memory,
    ):
        stores = [f"s{n}" for n in range(args.runs)]
        for n, store in enumerate(stores):
            items = corpus(args.entries, 7 + n, t0)
            for start in range(0, len(items), 1000):
                memory.remember_many(items[start : start + 1000], store=store)
        clock.t = t0 + 12 * DAY  # past the TTL of the oldest, as the bench
        for store in stores:
            gc.collect()
            before, started = mb(), time.perf_counter()
            run = memory.consolidate(store=store)
            gc.collect()
            counts = ", ".join(f"{k} {v}" for k, v in run.counts.items() if v)
            print(
                f"{store}: {before} MB before, {mb()} MB after "
                f"({time.perf_counter() - started:.1f} s; {counts})",
                flush=True,
            )
        if args.idle is not None:
            time.sleep(args.idle + 2)
            gc.collect()
            print(f"{args.idle:g} s after the last run: {mb()} MB", flush=True)


if __name__ == "__main__":
    main()
