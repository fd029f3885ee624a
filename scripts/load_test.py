"""Load: concurrent clients mixing writes, searches and consolidation runs.

Starts a real ``halls serve`` on 127.0.0.1, seeds ``--seed-entries``
short-term entries (paraphrases over three days, so runs have work), then:

1. **idle**: one client, one request at a time: ``--idle`` writes and as
   many searches, for the latency of an unloaded server;
2. **load**: ``--clients`` clients (coroutines, one keep-alive HTTP
   connection each) for ``--seconds``: each picks a write (POST /short,
   40 %), a read of one of its own writes (GET /short/{id}, ``--reads``,
   10 %) or else a search (POST /search), back to back; beside them one
   more client starts a consolidation run every ``--run-every`` seconds
   (0: none), each after the last one ends.

Any answer but the expected 2xx, or a transport error, is an error. After
the load every acknowledged write is read back (lost writes), the server is
stopped and the file passes ``PRAGMA integrity_check``. Prints p50/p95 per
operation, idle and under load, and with ``--json`` one JSON object. Exits 1
on any error or lost write. Every loop is bounded by ``--seconds``.

    python scripts/load_test.py                       # 50 clients, 60 s
    python scripts/load_test.py --clients 10 --seconds 10
    python scripts/load_test.py --seed-entries 10000 --seconds 30 --run-every 0 --reads 0
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from live import NAMES, STORE, THINGS, chunks, client, entries, integrity, list_all, start

QUERIES = [
    "what does Chad prefer for config files?",
    "who likes the night train to Vienna",
    "which tea in the afternoon",
    "standing desk for long calls",
    "how are commit messages written for small fixes",
    "load note about the harbour crane",
]
FORMS = ["what does {n} want for {w}?", "who uses {t}", "{n} and {t}", "notes on {w} from {n}"]


def query(rng: random.Random) -> str:
    """A query seldom asked twice: no cache of the server's may stand in for a search."""
    thing, when = rng.choice(THINGS)
    form = rng.choice(FORMS)
    return form.format(n=f"{rng.choice(NAMES)} {rng.randrange(1000)}", t=thing, w=when)


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def summary(times: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    return {
        op: {"n": len(v), "p50_ms": round(pct(v, 0.5), 1), "p95_ms": round(pct(v, 0.95), 1)}
        for op, v in times.items()
    }


class Connection:
    """One keep-alive HTTP/1.1 connection spoken by hand over asyncio streams.

    A load generator on the server's own cores must cost little per request:
    50 httpx clients on threads took about as much CPU as the server they
    measured (2026-11-30), which capped the figure at the client's speed.
    """

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        data = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        )
        self.writer.write(head.encode() + data)
        try:
            raw = await self.reader.readuntil(b"\r\n\r\n")
            lines = raw.decode("latin-1").split("\r\n")
            status = int(lines[0].split()[1])
            length, close = 0, False
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.lower() == "content-length":
                    length = int(value)
                elif name.lower() == "connection" and value.strip().lower() == "close":
                    close = True
            payload = await self.reader.readexactly(length) if length else b""
        except (asyncio.IncompleteReadError, ConnectionError):
            self.close()
            raise
        if close:
            self.close()
        return status, payload

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


class Client:
    """One client: requests back to back on its own connection until ``until``."""

    def __init__(self, url: str, n: int, until: float, seed: int, reads: float) -> None:
        parts = httpx.URL(url)
        self.host, self.port = parts.host, parts.port or 80
        self.n, self.until, self.reads = n, until, reads
        self.rng = random.Random(seed)
        self.times: dict[str, list[float]] = {"write": [], "search": [], "read": []}
        self.written: dict[str, str] = {}
        self.errors: list[str] = []

    async def run(self) -> None:
        conn = Connection(self.host, self.port)
        while time.monotonic() < self.until:
            op, method, path, body = self._pick()
            t = time.perf_counter()
            try:
                status, payload = await conn.request(method, f"{path}?store={STORE}", body)
            except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                self.errors.append(f"{op}: {type(exc).__name__}: {exc}")
                continue
            self.times[op].append(time.perf_counter() - t)
            if status not in (200, 201):
                self.errors.append(f"{op}: {status} {payload[:200]!r}")
            elif op == "write":
                self.written[json.loads(payload)["id"]] = body["content"]
        conn.close()

    def _pick(self) -> tuple[str, str, str, Any]:
        """The next request: a write (40 %), a read of an own write (``reads``), else a search."""
        roll = self.rng.random()
        if roll < 0.4 or (roll >= 1 - self.reads and not self.written):
            k = len(self.times["write"])
            text = f"load note {self.n}-{k}: the harbour crane {self.rng.randrange(999)}"
            return "write", "POST", "/short", {"content": text}
        if roll < 1 - self.reads:
            body = {"query": query(self.rng), "n_results": 5, "reinforce": False}
            return "search", "POST", "/search", body
        return "read", "GET", f"/short/{self.rng.choice(list(self.written))}", None


async def clients_run(clients: list[Client]) -> None:
    await asyncio.gather(*(c.run() for c in clients))


class Consolidator(threading.Thread):
    """Starts a run every ``every`` seconds (after the last one ends) until ``until``."""

    def __init__(self, url: str, every: float, until: float) -> None:
        super().__init__(daemon=True)
        self.url, self.every, self.until = url, every, until
        self.runs: list[dict[str, Any]] = []
        self.errors: list[str] = []

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=600, params={"store": STORE}) as c:
            while time.monotonic() < self.until:
                t = time.perf_counter()
                try:
                    r = c.post("/consolidate/run")
                except httpx.HTTPError as exc:
                    self.errors.append(f"run: {type(exc).__name__}: {exc}")
                    return
                took = time.perf_counter() - t
                if r.status_code != 201:
                    self.errors.append(f"run: {r.status_code} {r.text[:200]}")
                else:
                    counts = {k: v for k, v in r.json()["counts"].items() if v}
                    self.runs.append({"seconds": round(took, 2), "counts": counts})
                rest = self.every - took
                if rest > 0:
                    time.sleep(min(rest, max(0.0, self.until - time.monotonic())))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--seed-entries", type=int, default=3000)
    p.add_argument("--idle", type=int, default=100, help="writes and searches measured idle")
    p.add_argument(
        "--run-every", type=float, default=15.0, help="seconds between run starts (0: no runs)"
    )
    p.add_argument("--reads", type=float, default=0.1, help="share of reads of an own write")
    p.add_argument("--key", help="run on an encrypted store (storage.encryption_key)")
    p.add_argument("--request-slots", type=int, help="server.request_slots (default: its own)")
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = p.parse_args()
    env = {"HALLS_STORAGE__ENCRYPTION_KEY": args.key} if args.key else {}
    if args.request_slots is not None:
        env["HALLS_SERVER__REQUEST_SLOTS"] = str(args.request_slots)
    root = Path(tempfile.mkdtemp(prefix="halls-load-"))
    data = root / "data"
    server = start(data, env)
    problems: list[str] = []
    try:
        with client(server, timeout=600) as c:
            for batch in chunks(entries(args.seed_entries, time.time()), 250):
                c.post("/short/batch", json={"items": batch}).raise_for_status()
            idle: dict[str, list[float]] = {"write": [], "search": []}
            for i in range(args.idle):
                t = time.perf_counter()
                c.post("/short", json={"content": f"idle note {i}: the harbour crane"})
                idle["write"].append(time.perf_counter() - t)
                body = {"query": QUERIES[i % len(QUERIES)], "n_results": 5, "reinforce": False}
                t = time.perf_counter()
                c.post("/search", json=body).raise_for_status()
                idle["search"].append(time.perf_counter() - t)
        print(f"idle (1 client): {json.dumps(summary(idle))}", flush=True)

        until = time.monotonic() + args.seconds
        clients = [Client(server.url, n, until, n, args.reads) for n in range(args.clients)]
        runner = Consolidator(server.url, args.run_every, until)
        t0 = time.monotonic()
        if args.run_every > 0:
            runner.start()
        asyncio.run(asyncio.wait_for(clients_run(clients), args.seconds + 600))
        if args.run_every > 0:
            runner.join(timeout=600)
        if runner.is_alive():
            problems.append("the consolidation client did not finish in time")
        wall = time.monotonic() - t0
        loaded: dict[str, list[float]] = {"write": [], "search": [], "read": []}
        for cl in clients:
            for op, v in cl.times.items():
                loaded[op] += v
        errors = [e for cl in clients for e in cl.errors] + runner.errors
        written = {i: t for cl in clients for i, t in cl.written.items()}
        with client(server, timeout=600) as c:
            stored = {e["id"]: e["content"] for e in list_all(c, "/short")}
        lost = [i for i, t in written.items() if stored.get(i) != t]
        requests = sum(len(v) for v in loaded.values())
        print(
            f"load ({args.clients} clients, {wall:.0f} s): {requests} requests "
            f"({requests / wall:.0f}/s), {len(errors)} errors, {len(written)} writes, "
            f"{len(lost)} lost; runs: {runner.runs}",
            flush=True,
        )
        print(f"load latency: {json.dumps(summary(loaded))}", flush=True)
        if args.run_every > 0 and not runner.runs:
            problems.append("no consolidation run completed during the load")
        problems += errors[:20] + [f"lost write {i}" for i in lost[:20]]
    finally:
        server.stop()
    check = integrity(data, args.key)
    if check != "ok":
        problems.append(f"integrity_check: {check}")
    shutil.rmtree(root, ignore_errors=True)
    if args.json:
        result = {
            "clients": args.clients,
            "seconds": round(wall, 1),
            "requests": requests,
            "errors": len(errors),
            "writes": len(written),
            "lost": len(lost),
            "runs": runner.runs,
            "idle": summary(idle),
            "load": summary(loaded),
            "integrity": check,
            "problems": problems,
        }
        print(json.dumps(result))
    print("PASS" if not problems else f"FAIL: {problems[:5]}", file=sys.stderr)
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
