"""``halls bench consolidate``: how long a heuristic run takes over N short-term entries.

A temporary store is filled with N entries spread over ten days: about a
third restate a few hundred recurring facts (three paraphrase templates,
different days), the rest are one-off remarks; a few dozen facts already
exist. The clock is set past the TTL of the oldest entries, so one run
clusters, promotes, confirms, supersedes and ages out at realistic volume.
Only the run is timed (ingest and embedding are reported apart), with the
time from its start to its first progress report, the longest wait between
two reports, and the process's resident memory before the run, at its peak
(sampled every 20 ms) and after it (Linux's ``/proc``; elsewhere left out).
"""

from __future__ import annotations

import gc
import os
import random
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from halls.config import ConsolidatorSettings, Settings
from halls.models import NewShort

DAY = 86400.0
PEOPLE = [
    "Chad",
    "Dana",
    "Ravi",
    "Mei",
    "Olu",
    "Sven",
    "Ana",
    "Kofi",
    "Lena",
    "Tom",
    "Ines",
    "Yuki",
    "Omar",
    "Zoe",
    "Pia",
    "Ivan",
    "Nora",
    "Eli",
    "Sara",
    "Max",
]
THINGS = [
    "absolute paths",
    "tabs",
    "dark mode",
    "Vim",
    "Emacs",
    "Rust",
    "Go",
    "Python",
    "short meetings",
    "async standups",
    "green tea",
    "espresso",
    "mechanical keyboards",
    "Linux",
    "zsh",
    "fish shell",
    "Postgres",
    "SQLite",
    "typed code",
    "small commits",
    "morning runs",
    "jazz",
    "audiobooks",
    "paper notes",
    "two monitors",
]
TEMPLATES = ["{p} prefers {t}", "{p} likes {t} a lot", "When possible, {p} goes for {t}"]
REMARKS = [
    "{p} mentioned the {t} thread in passing",
    "Saw {p} reading about {t} on {d}",
    "{p} asked whether {t} was on the agenda for {d}",
    "Random note about {t} from {p}, {d}",
    "{p} had a question on {t} at {h}:00",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "the weekend"]


def corpus(n: int, seed: int, t0: float) -> list[NewShort]:
    rng = random.Random(seed)
    items: list[NewShort] = []
    recurring = [(p, t) for p in PEOPLE for t in THINGS]
    rng.shuffle(recurring)
    for p, t in recurring[: n // 9]:
        for k, template in enumerate(TEMPLATES):
            day = rng.randrange(10)
            items.append(
                NewShort(content=template.format(p=p, t=t), occurred_at=t0 + day * DAY + k * 3600)
            )
    while len(items) < n:
        p, t = rng.choice(PEOPLE), rng.choice(THINGS)
        text = rng.choice(REMARKS).format(p=p, t=t, d=rng.choice(DAYS), h=rng.randrange(7, 20))
        items.append(
            NewShort(content=f"{text} (#{len(items)})", occurred_at=t0 + rng.random() * 10 * DAY)
        )
    return items[:n]


def run(n: int = 10_000, seed: int = 7, progress: Callable[[str], None] = print) -> dict[str, Any]:
    from halls.service import Memory

    class Clock:
        t = 1_780_000_000.0

        def __call__(self) -> float:
            return self.t

    clock = Clock()
    t0 = clock.t
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), consolidator=ConsolidatorSettings(mode="external"))
        with Memory(settings, clock=clock) as memory:
            items = corpus(n, seed, t0)
            started = time.perf_counter()
            for start in range(0, len(items), 1000):
                # Entries are written as the days pass, so their TTLs differ.
                clock.t = t0 + (start / len(items)) * 10 * DAY
                memory.remember_many(items[start : start + 1000], store="bench")
                progress(f"ingested {min(start + 1000, len(items))}/{len(items)}")
            ingest = time.perf_counter() - started
            clock.t = t0 + 12 * DAY
            progress("consolidating...")
            gc.collect()
            watch = _Watch(progress)
            with _Peak() as peak:
                record = memory.consolidate(store="bench", progress=watch)
            seconds = time.perf_counter() - watch.started
            gc.collect()
            after = rss_bytes()
            size = memory.stats(store="bench")["size_bytes"]
    return {
        "entries": n,
        "seed": seed,
        "ingest_seconds": round(ingest, 1),
        "run_seconds": round(seconds, 2),
        "entries_per_second": round(n / seconds),
        "actions": {k: v for k, v in record.counts.items() if v},
        "store_bytes": size,
        "first_progress_seconds": watch.first,
        "longest_gap_seconds": round(watch.gap, 2),
        "longest_gap_between": watch.gap_stages,
        "rss_mb": _mb({"before": peak.before, "peak": peak.peak, "after": after}),
    }


def rss_bytes() -> int | None:
    """This process's resident memory, or None where /proc does not say (not Linux)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _mb(values: dict[str, int | None]) -> dict[str, float] | None:
    if any(v is None for v in values.values()):
        return None
    return {k: round(v / 2**20, 1) for k, v in values.items() if v is not None}


class _Watch:
    """The run's progress reporter: when the first report came, the longest wait
    between two, and a line per stage for the console."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.started = self.last = time.perf_counter()
        self.first: float | None = None
        self.gap, self.gap_stages = 0.0, ""
        self.stage = self.at = ""

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if self.first is None:
            self.first = round(now - self.started, 3)
        if now - self.last > self.gap:
            self.gap, self.gap_stages = now - self.last, f"{self.at} and {stage} {done}/{total}"
        self.at = f"{stage} {done}/{total}"
        self.last = now
        if stage != self.stage:
            self.stage = stage
            self.say(f"  {now - self.started:6.1f} s  {stage} ({total})")


class _Peak:
    """The resident memory before a block and its peak within it (a sampling thread)."""

    def __init__(self) -> None:
        self.before = self.peak = rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            now = rss_bytes()
            if now is not None and self.peak is not None:
                self.peak = max(self.peak, now)

    def __enter__(self) -> _Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
