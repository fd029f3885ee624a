"""The first search after a restart: how long a fresh process takes to answer it.

Builds (once) a SQLite store of ``--rows`` memories in ``--dir``: texts from
the benchmark corpus, vectors the real embeddings of a pool of them with a
little noise (unit length; what a restart costs depends on the rows, not on
which vectors they hold), opened once through ``Memory`` so that the
one-time passes of a store's first open are done. Then, ``--runs`` times,
alternates two fresh processes, each opening ``Memory`` over the store,
loading the embedder, and timing its first and second ``Memory.search``:

- ``rebuild``: the index snapshots beside the store removed first, so the
  in-memory indexes are read from every row (what every restart did before
  the snapshots; ``--before SRC`` runs that process on another source tree
  instead, e.g. an export of the commit before);
- ``snapshot``: the snapshots a process of this tree wrote at close are read
  (one unmeasured run first writes them).

Prints one JSON object per run and a summary (median per mode).

    python scripts/restart_search.py --rows 100000 --runs 3 --dir /tmp/restart
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

NAME = "big"
QUESTIONS = ["where does Priya teach salsa", "what did Elena recommend reading", "the standup"]


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def build(folder: Path, rows: int, pool: int) -> None:
    from halls import Memory, Settings
    from halls.bench.corpus import memories
    from halls.config import EmbedderSettings
    from halls.embed import build_embedder
    from halls.models import ShortEntry, new_id, to_datetime
    from halls.store.sqlite import SQLiteStore

    path = folder / f"{NAME}.sqlite3"
    if path.exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    embedder = build_embedder(EmbedderSettings())
    texts = memories(random.Random(1), rows)
    base = embedder.embed(texts[:pool])
    rng = np.random.default_rng(1)
    store = SQLiteStore(path, NAME)
    now = to_datetime(time.time())
    for start in range(0, rows, 2000):
        chunk = texts[start : start + 2000]
        vectors = base[np.arange(start, start + len(chunk)) % pool]
        vectors = vectors + rng.normal(0, 0.02, vectors.shape).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        entries = [
            ShortEntry(id=new_id("short"), content=t, created_at=now, occurred_at=now)
            for t in chunk
        ]
        store.add_short(entries, vectors.astype(np.float32))
    store.close()
    # The one-time passes of a store's first open (fingerprint, name graph).
    with Memory(Settings(data_dir=folder), embedder=embedder) as m:
        m.search("warm up", store=NAME)


def measure(folder: Path) -> dict[str, Any]:
    from halls import Memory, Settings
    from halls.config import EmbedderSettings
    from halls.embed import build_embedder

    embedder = build_embedder(EmbedderSettings())
    embedder.embed(["load the model first"])
    settings = Settings(data_dir=folder, consolidator={"mode": "external"})
    started = time.perf_counter()
    with Memory(settings, embedder=embedder) as m:
        opened = time.perf_counter()
        m.search(QUESTIONS[0], store=NAME)
        first = time.perf_counter()
        m.search(QUESTIONS[1], store=NAME)
        second = time.perf_counter()
        rss = _rss_mb()
    closed = time.perf_counter()
    return {
        "open_ms": round((opened - started) * 1000, 1),
        "first_search_ms": round((first - opened) * 1000, 1),
        "second_search_ms": round((second - first) * 1000, 1),
        "close_ms": round((closed - second) * 1000, 1),
        "rss_mb": round(rss),
    }


def _run(folder: Path, mode: str, before: str | None) -> dict[str, Any]:
    # The rebuild runs find no snapshot; the next snapshot run finds the one
    # the last snapshot run left (the rebuild runs' are removed after them).
    files = [Path(f"{folder / NAME}.sqlite3{suffix}") for suffix in ("-vectors", "-text")]
    kept = [f.with_name(f.name + ".kept") for f in files]
    if mode == "rebuild":
        for f, k in zip(files, kept, strict=True):
            if f.exists():
                f.replace(k)
    env = dict(os.environ)
    if mode == "rebuild" and before:
        env["PYTHONPATH"] = before
    try:
        out = subprocess.run(
            [sys.executable, __file__, "--measure", "--dir", str(folder)],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
    finally:
        if mode == "rebuild":
            for f, k in zip(files, kept, strict=True):
                f.unlink(missing_ok=True)
                if k.exists():
                    k.replace(f)
    figures: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return {"mode": mode, **figures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--pool", type=int, default=2_000, help="texts really embedded")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", help="PYTHONPATH of the rebuild runs (another src tree)")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.dir)))
        return
    started = time.perf_counter()
    build(args.dir, args.rows, args.pool)
    print(json.dumps({"built_s": round(time.perf_counter() - started, 1)}), flush=True)
    _run(args.dir, "snapshot", None)  # writes the snapshots if none is there yet
    runs = []
    for _ in range(args.runs):
        for mode in ("rebuild", "snapshot"):
            runs.append(_run(args.dir, mode, args.before))
            print(json.dumps(runs[-1]), flush=True)
    summary = {
        mode: {
            key: statistics.median(r[key] for r in runs if r["mode"] == mode)
            for key in ("first_search_ms", "second_search_ms", "close_ms", "rss_mb")
        }
        for mode in ("rebuild", "snapshot")
    }
    print(json.dumps({"rows": args.rows, "median": summary}))


if __name__ == "__main__":
    main()
