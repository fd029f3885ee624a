"""The CPU cost of encryption at rest, in process, plain vs encrypted, same corpus.

``halls bench perf`` measures a live server's wall-clock ingest and search,
which on a shared machine moves with the neighbours' load. This measures
the process's own CPU time (``time.process_time``, every thread) for the
same work on a plain and on an encrypted store, alternated ``--rounds``
times so that both see the same machine:

- ingest: ``--size`` memories through ``Memory.remember_many`` in batches of
  500 (embedding included, as a client's write pays it), then the same
  rows again without the embedder (``Store.add_short`` with the vectors
  already computed: the storage's own share, where encryption lands);
- search: ``--queries`` ``Memory.search`` calls (the default ``full``
  retriever), after five warm-ups;
- open: a new handle on the store (the key derivation, once per store).

    python scripts/encryption_cost.py --size 10000 --queries 200
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from halls import Memory, Settings
from halls.bench.corpus import memories, questions
from halls.config import EmbedderSettings
from halls.embed import build_embedder
from halls.models import NewShort, ShortEntry, new_id
from halls.store import open_backend

KEY = "a benchmark passphrase"


def cpu(fn: Any) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def one(root: Path, key: str | None, texts: list[str], qs: list[str], emb: Any) -> dict[str, float]:
    storage = {"encryption_key": key} if key else {}
    settings = Settings(data_dir=root / "data", storage=storage, consolidator={"mode": "external"})
    out: dict[str, float] = {}
    with Memory(settings, embedder=emb) as m:
        batches = [texts[i : i + 500] for i in range(0, len(texts), 500)]
        out["ingest_cpu_ms_per_memory"] = (
            cpu(lambda: [m.remember_many([NewShort(content=t) for t in b]) for b in batches])
            * 1000
            / len(texts)
        )
        for q in qs[:5]:
            m.search(q, reinforce=False)
        out["search_cpu_ms"] = (
            cpu(lambda: [m.search(q, reinforce=False) for q in qs]) * 1000 / len(qs)
        )
    # The storage's own share: the same rows, vectors already computed.
    vectors = emb.embed(texts[:2000])
    now = time.time()
    rows = [
        ShortEntry(id=new_id("short"), content=t, created_at=now, occurred_at=now)
        for t in texts[:2000]
    ]
    backend = open_backend(settings.storage, root / "raw")
    opened: list[Any] = []
    out["open_ms"] = cpu(lambda: opened.append(backend.open("raw", True))) * 1000
    store = opened[0]
    out["store_write_cpu_ms_per_row"] = (
        cpu(
            lambda: [
                store.add_short(rows[i : i + 500], np.asarray(vectors[i : i + 500]))
                for i in range(0, len(rows), 500)
            ]
        )
        * 1000
        / len(rows)
    )
    store.close()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=10_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()
    rng = random.Random(args.seed)
    texts, qs = memories(rng, args.size), questions(rng, args.queries)
    emb = build_embedder(EmbedderSettings())
    emb.embed(["warm up"])
    results: dict[str, list[dict[str, float]]] = {"plain": [], "encrypted": []}
    for r in range(args.rounds):
        for mode in ("plain", "encrypted") if r % 2 == 0 else ("encrypted", "plain"):
            root = Path(tempfile.mkdtemp(prefix="halls-enc-"))
            try:
                results[mode].append(
                    one(root, KEY if mode == "encrypted" else None, texts, qs, emb)
                )
            finally:
                shutil.rmtree(root, ignore_errors=True)
            print(mode, json.dumps({k: round(v, 3) for k, v in results[mode][-1].items()}))
    median = {
        mode: {k: round(statistics.median(x[k] for x in rs), 3) for k in rs[0]}
        for mode, rs in results.items()
    }
    print(json.dumps({"size": args.size, "queries": args.queries, "median": median}))


if __name__ == "__main__":
    main()
