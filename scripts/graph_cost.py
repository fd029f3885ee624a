"""The CPU cost of the association graph, in process, on one large store.

``halls bench perf`` measures a live server's wall-clock search, which on a
shared machine moves with the neighbours' load. This builds one store of
``--size`` memories from the ``halls bench perf`` corpus (texts from
``halls.bench.corpus``; hashed vectors, so that 100k memories build in
minutes, and each memory's ``mentions`` edges, as a write makes them),
then times ``Memory.search`` (the default ``full`` retriever, real query
embeddings computed once and cached) with the graph off
(``graph_weight: 0``) and on (the defaults), in alternating blocks, so that
both see the same machine. Per search it reports the process's CPU time
(``time.process_time``: every thread) and the wall-clock p50 and p95.

It also reports what the graph adds to a write: the names' extraction per
memory, and the storage's write of a batch of 500 with and without its edges.

    python scripts/graph_cost.py --size 100000 --queries 200 --rounds 3
"""

from __future__ import annotations

import argparse
import hashlib
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
from halls.embed import build_embedder, fingerprint
from halls.models import ShortEntry, new_id
from halls.recall.entities import mentions
from halls.store import open_backend

DIM = 384
DAY = 86400.0


class Cached:
    """The real embedder's vectors for the queries, computed once."""

    def __init__(self, inner: Any, texts: list[str]) -> None:
        self.inner = inner
        self.known = dict(zip(texts, inner.embed(texts), strict=True))
        self.dim = inner.dim
        self.name = inner.name

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack(
            [self.known[t] if t in self.known else self.inner.embed([t])[0] for t in texts]
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def hashed(text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def build(root: Path, texts: list[str], fingerprint: str) -> dict[str, float]:
    """The store, written through ``Store.add_short`` with each memory's edges."""
    settings = Settings(data_dir=root, consolidator={"mode": "external"})
    store = open_backend(settings.storage, root).open("default", True)
    store.set_meta("embedder", fingerprint)
    start = time.time() - len(texts) * 60.0
    out: dict[str, float] = {"extract_cpu_ms": 0.0, "write_cpu_ms": 0.0, "batches": 0}
    for i in range(0, len(texts), 500):
        chunk = texts[i : i + 500]
        rows = [
            ShortEntry(
                id=new_id("short"),
                content=t,
                created_at=start + (i + n) * 60.0,
                occurred_at=start + (i + n) * 60.0,
            )
            for n, t in enumerate(chunk)
        ]
        vectors = np.stack([hashed(t) for t in chunk])
        t0 = time.process_time()
        edges = [e for r in rows for e in mentions(r.id, r.content, r.created_at.timestamp())]
        t1 = time.process_time()
        store.add_short(rows, vectors, edges)
        t2 = time.process_time()
        out["extract_cpu_ms"] += (t1 - t0) * 1000
        out["write_cpu_ms"] += (t2 - t1) * 1000
        out["batches"] += 1
        out["edges"] = out.get("edges", 0) + len(edges)
    store.close()
    return out


def write_cost(root: Path, texts: list[str]) -> dict[str, float]:
    """CPU per row of a 500-row add_short, without and with its edges (fresh store)."""
    settings = Settings(data_dir=root, consolidator={"mode": "external"})
    store = open_backend(settings.storage, root).open("w", True)
    out: dict[str, list[float]] = {"plain": [], "edges": []}
    now = time.time()
    for n in range(0, min(len(texts), 20_000), 500):
        chunk = texts[n : n + 500]
        rows = [
            ShortEntry(id=new_id("short"), content=t, created_at=now, occurred_at=now)
            for t in chunk
        ]
        vectors = np.stack([hashed(t) for t in chunk])
        mode = "edges" if (n // 500) % 2 else "plain"
        edges = [e for r in rows for e in mentions(r.id, r.content, now)] if mode == "edges" else []
        t = time.process_time()
        store.add_short(rows, vectors, edges)
        out[mode].append((time.process_time() - t) * 1000 / len(rows))
    store.close()
    return {f"write_cpu_ms_per_row_{k}": round(statistics.median(v), 4) for k, v in out.items()}


def searches(m: Memory, qs: list[str]) -> tuple[float, list[float]]:
    walls = []
    t = time.process_time()
    for q in qs:
        w = time.perf_counter()
        m.search(q, reinforce=False)
        walls.append((time.perf_counter() - w) * 1000)
    return (time.process_time() - t) * 1000 / len(qs), walls


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()
    rng = random.Random(args.seed)
    texts, qs = memories(rng, args.size), questions(rng, args.queries)
    emb = Cached(build_embedder(EmbedderSettings()), qs)
    root = Path(tempfile.mkdtemp(prefix="halls-graph-"))
    try:
        built = build(root / "data", texts, fingerprint(emb))  # type: ignore[arg-type]
        print(json.dumps({"built": built}))
        cost = write_cost(root / "w", texts)
        print(json.dumps(cost))
        modes = {"off": {"graph_weight": 0.0}, "on": {}}
        cpu: dict[str, list[float]] = {"off": [], "on": []}
        wall: dict[str, list[float]] = {"off": [], "on": []}
        opened = {
            k: Memory(
                Settings(data_dir=root / "data", recall=v, consolidator={"mode": "external"}),
                embedder=emb,  # type: ignore[arg-type]
            )
            for k, v in modes.items()
        }
        try:
            for m in opened.values():
                for q in qs[:5]:
                    m.search(q, reinforce=False)
            for r in range(args.rounds):
                for k in ("off", "on") if r % 2 == 0 else ("on", "off"):
                    c, w = searches(opened[k], qs)
                    cpu[k].append(c)
                    wall[k] += w
                    print(k, round(c, 3), round(pct(w, 0.5), 2), round(pct(w, 0.95), 2))
        finally:
            for m in opened.values():
                m.close()
        print(
            json.dumps(
                {
                    "size": args.size,
                    "queries": args.queries,
                    "rounds": args.rounds,
                    "extract_cpu_ms_per_memory": round(built["extract_cpu_ms"] / args.size, 4),
                    **cost,
                    **{
                        k: {
                            "search_cpu_ms": round(statistics.median(cpu[k]), 3),
                            "wall_p50_ms": round(pct(wall[k], 0.5), 2),
                            "wall_p95_ms": round(pct(wall[k], 0.95), 2),
                        }
                        for k in modes
                    },
                }
            )
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
