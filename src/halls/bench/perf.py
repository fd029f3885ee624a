"""The performance benchmark: batched ingest rate and search latency over HTTP.

It drives halls as a user does: a live ``python -m halls serve`` (or a
server the caller names), memories written through ``POST /short/batch``
and questions asked through ``POST /search``, so every figure includes
HTTP, JSON, embedding and storage. Sizes are cumulative: ingest up to the
first size, measure searches, continue to the next size, measure again.
"""

from __future__ import annotations

import contextlib
import os
import platform
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from halls import __version__
from halls.bench.corpus import memories, questions
from halls.embed.local import cpuinfo_has_bfloat16
from halls.errors import HallsError, InvalidInput

DEFAULT_SIZES = (1_000, 10_000, 100_000)
# The first few searches after an ingest let the server's vector index catch
# up with the new rows; steady-state latency is what a user feels.
WARMUP_QUERIES = 5

Progress = Callable[[str, int, int], None]
"""progress(phase, done, total): phase is e.g. 'ingest 10,000' or 'search 10,000'."""


class BenchError(HallsError):
    """The benchmark could not run: the server failed or answered wrongly."""


_SIMD_FLAGS = {
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "avx_vnni",
    "amx_bf16",
    "amx_int8",
}


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = ""
    flags: list[str] = []
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and not cpu:
                cpu = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = sorted(set(line.split(":", 1)[1].split()) & _SIMD_FLAGS)
            if cpu and flags:
                break
    except OSError:
        cpu = platform.processor()
    ram = 0
    with contextlib.suppress(OSError):  # no /proc: RAM reported as 0 (unknown)
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram = int(line.split()[1]) * 1024
                break
    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu or "unknown",
        # The SIMD features the kernels (ONNX Runtime, NumKong, torch) choose by.
        "cpu_flags": flags,
        "ram_gib": round(ram / 2**30, 1) if ram else None,
        # What embedder.precision "auto" (the default, measured here) resolves to.
        "bfloat16_native": cpuinfo_has_bfloat16(Path("/proc/cpuinfo")),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "halls": __version__,
        "load_average": [round(x, 2) for x in os.getloadavg()]
        if hasattr(os, "getloadavg")
        else None,
    }


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def process_cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU time of a process (Linux), or None where unknown.

    CPU time is what the figures cost the server, which stays meaningful when
    other processes share the machine and stretch the wall-clock figures.
    """
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Server:
    url: str
    pid: int | None = None


@contextmanager
def live_server(
    startup_seconds: float = 180.0, settings: dict[str, str] | None = None
) -> Iterator[Server]:
    """Start ``python -m halls serve`` on a free port and a temporary data dir.

    ``HALLS_*`` variables are not passed on, so that the figures are those
    of the defaults whatever the caller's environment configures; a
    benchmark that needs a setting passes it in ``settings`` (``HALLS_*``
    names and values).
    """
    tmp = Path(tempfile.mkdtemp(prefix="halls-bench-"))
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    env.update(settings or {})
    log_path = tmp / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "halls",
                "serve",
                "--data-dir",
                str(tmp / "data"),
                "--port",
                str(port),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(proc, url, startup_seconds, log_path)
            yield Server(url, proc.pid)
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=30)
            shutil.rmtree(tmp, ignore_errors=True)


def _wait_healthy(proc: subprocess.Popen[bytes], url: str, seconds: float, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-5:]
            raise BenchError("the halls server exited while starting: " + " | ".join(tail))
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise BenchError(f"the halls server did not answer /healthz within {seconds:.0f} s")


def _check(response: httpx.Response, status: int, what: str) -> Any:
    if response.status_code != status:
        raise BenchError(f"{what}: HTTP {response.status_code}: {response.text[:200]}")
    return response.json()


def latency_summary(samples_ms: Sequence[float]) -> dict[str, float]:
    a = np.asarray(samples_ms, dtype=np.float64)
    return {
        "p50_ms": round(float(np.percentile(a, 50)), 2),
        "p95_ms": round(float(np.percentile(a, 95)), 2),
        "p99_ms": round(float(np.percentile(a, 99)), 2),
        "mean_ms": round(float(a.mean()), 2),
        "max_ms": round(float(a.max()), 2),
    }


def run(
    server: Server,
    *,
    sizes: Sequence[int] = DEFAULT_SIZES,
    queries: int = 200,
    batch: int = 500,
    n_results: int = 5,
    store: str | None = None,
    seed: int = 7,
    token: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the benchmark against ``server``; return the figures."""
    if not sizes or any(s <= 0 for s in sizes) or list(sizes) != sorted(set(sizes)):
        raise InvalidInput("sizes must be positive and strictly increasing")
    if not 1 <= batch <= 1000:
        raise InvalidInput("batch must be between 1 and 1000 (the API's batch limit)")
    if queries < 1:
        raise InvalidInput("queries must be at least 1")
    store = store or f"bench-{uuid.uuid4().hex[:8]}"
    rng = random.Random(seed)
    asked = questions(random.Random(seed + 1), queries + WARMUP_QUERIES)
    report = progress or (lambda phase, done, total: None)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    stages: list[dict[str, Any]] = []
    started = machine()
    cpu = partial(process_cpu_seconds, server.pid)
    with httpx.Client(base_url=server.url, headers=headers, timeout=300) as client:
        have = 0
        for size in sizes:
            phase = f"ingest {size:,}"
            todo = size - have
            report(phase, 0, todo)
            cpu0 = cpu()
            t0 = time.perf_counter()
            while have < size:
                n = min(batch, size - have)
                body = {"items": [{"content": c} for c in memories(rng, n)]}
                got = _check(
                    client.post("/short/batch", params={"store": store}, json=body),
                    201,
                    "POST /short/batch",
                )
                if len(got["ids"]) != n:
                    raise BenchError(f"POST /short/batch returned {len(got['ids'])} ids for {n}")
                have += n
                report(phase, have - (size - todo), todo)
            ingest_s = time.perf_counter() - t0
            ingest_cpu = _per_item_ms(cpu0, cpu(), todo)
            stats = _check(client.get("/stats", params={"store": store}), 200, "GET /stats")
            stored = stats["counts"]["short"]
            if stored != size:
                raise BenchError(f"the store holds {stored} short-term memories, expected {size}")

            phase = f"search {size:,}"
            report(phase, 0, queries)
            warm: list[float] = []
            timings: list[float] = []
            cpu0 = None
            for i, q in enumerate(asked):
                if i == WARMUP_QUERIES:
                    cpu0 = cpu()
                t = time.perf_counter()
                hits = _check(
                    client.post(
                        "/search",
                        params={"store": store},
                        # Every hit, whatever its relevance: the synthetic
                        # questions are timed, not judged, and "found nothing"
                        # below means a broken index.
                        json={"query": q, "n_results": n_results, "min_relevance": 0},
                    ),
                    200,
                    "POST /search",
                )
                ms = (time.perf_counter() - t) * 1000
                if not hits["results"]:
                    raise BenchError(f"POST /search found nothing for {q!r}")
                if i < WARMUP_QUERIES:
                    warm.append(ms)
                    continue
                timings.append(ms)
                report(phase, len(timings), queries)
            search_cpu = _per_item_ms(cpu0, cpu(), queries)
            stages.append(
                {
                    "size": size,
                    "stored": stored,
                    "ingest": {
                        "count": todo,
                        "seconds": round(ingest_s, 3),
                        "per_second": round(todo / ingest_s, 1),
                        "server_cpu_ms_per_memory": ingest_cpu,
                    },
                    "search": {
                        "queries": queries,
                        "first_ms": round(warm[0], 2),
                        **latency_summary(timings),
                        "server_cpu_ms_per_search": search_cpu,
                    },
                    "store_bytes": stats["size_bytes"],
                }
            )
    ended = machine()
    return {
        "benchmark": "perf",
        "config": {
            "sizes": list(sizes),
            "queries": queries,
            "warmup_queries": WARMUP_QUERIES,
            "batch": batch,
            "n_results": n_results,
            "seed": seed,
            "store": store,
        },
        "machine": {**started, "load_average_after": ended["load_average"]},
        "stages": stages,
    }


def _per_item_ms(before: float | None, after: float | None, count: int) -> float | None:
    if before is None or after is None:
        return None
    return round((after - before) * 1000 / count, 2)


def table_rows(result: dict[str, Any]) -> list[tuple[str, ...]]:
    """One printable row per size, in the order of ``TABLE_HEADERS``."""

    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}"

    return [
        (
            f"{s['size']:,}",
            f"{s['ingest']['per_second']:,.0f}",
            ms(s["ingest"]["server_cpu_ms_per_memory"]),
            ms(s["search"]["p50_ms"]),
            ms(s["search"]["p95_ms"]),
            ms(s["search"]["p99_ms"]),
            ms(s["search"]["mean_ms"]),
            ms(s["search"]["server_cpu_ms_per_search"]),
        )
        for s in result["stages"]
    ]


TABLE_HEADERS = (
    "memories",
    "ingest/s",
    "cpu ms/mem",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "mean ms",
    "cpu ms/query",
)
