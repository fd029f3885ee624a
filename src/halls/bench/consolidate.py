"""``halls bench consolidate``: how long a heuristic run takes over N short-term entries.

A temporary store is filled with N entries spread over ten days: about a
third restate a few hundred recurring facts (three paraphrase templates,
different days), the rest are one-off remarks; a few dozen facts already
exist. The clock is set past the TTL of the oldest entries, so one run
clusters, promotes, confirms, supersedes and ages out at realistic volume.
Only the run is timed (ingest and embedding are reported apart).
"""

from __future__ import annotations

import random
import tempfile
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
            started = time.perf_counter()
            record = memory.consolidate(store="bench")
            seconds = time.perf_counter() - started
            size = memory.stats(store="bench")["size_bytes"]
    return {
        "entries": n,
        "seed": seed,
        "ingest_seconds": round(ingest, 1),
        "run_seconds": round(seconds, 2),
        "entries_per_second": round(n / seconds),
        "actions": {k: v for k, v in record.counts.items() if v},
        "store_bytes": size,
    }
