"""Search latency of one store against two stores in one call (``stores``).

Fills two fresh stores in a temporary data directory with ``--memories``
synthetic memories each (``halls.bench.corpus``, seeded), then times
``Memory.search`` in process for ``--queries`` questions: once on one store,
once on both (``stores=["a", "b"]``), alternating so that both see the same
machine load. Prints one JSON object: median and p95 in ms, and the CPU.

    python scripts/shared_stores_latency.py --memories 2000 --queries 200
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from halls.bench import corpus
from halls.bench.perf import machine
from halls.config import Settings
from halls.models import NewShort
from halls.service import Memory


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


def run(memories: int, queries: int, data_dir: Path) -> dict[str, object]:
    rng = random.Random(7)
    with Memory(Settings(data_dir=data_dir)) as memory:
        for store in ("a", "b"):
            texts = corpus.memories(rng, memories)
            for i in range(0, len(texts), 200):
                batch = [NewShort(content=t) for t in texts[i : i + 200]]
                memory.remember_many(batch, store=store)
        asked = corpus.questions(rng, queries)
        for q in asked[:10]:  # warm up: the model, the indexes, the page cache
            memory.search(q, stores=["a", "b"], reinforce=False)
        one: list[float] = []
        two: list[float] = []
        for q in asked:
            t = time.perf_counter()
            memory.search(q, store="a", reinforce=False, min_relevance=0)
            one.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            memory.search(q, stores=["a", "b"], reinforce=False, min_relevance=0)
            two.append((time.perf_counter() - t) * 1000)
    return {
        "memories_per_store": memories,
        "queries": queries,
        "one_store": _ms(one),
        "two_stores": _ms(two),
        "machine": machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="halls-shared-") as tmp:
        print(json.dumps(run(args.memories, args.queries, Path(tmp)), indent=2))


if __name__ == "__main__":
    main()
