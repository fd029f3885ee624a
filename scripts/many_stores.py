"""Many stores on one server, under a small file-descriptor limit.

Starts `halls serve` with `ulimit -n` set to ``--nofile`` (default 1024,
the common default) and ``storage.max_open_stores`` to ``--max-open``,
then writes one memory to each of ``--stores`` stores and searches it,
then searches the first ``--again`` stores once more (reopening them).
Samples the server's open file descriptors and RSS as it goes, and prints
one JSON object of figures. Exit status 1 if any request failed or a bound
was passed (``--max-fds``, default 90% of ``--nofile``; ``--max-rss-mb``).

    python scripts/many_stores.py --stores 2000 --again 100
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run(
    stores: int, again: int, max_open: int, nofile: int, data_dir: Path, sample_every: int = 25
) -> dict[str, Any]:
    """Drive a fresh server through the scenario; the figures, errors included."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    env["HALLS_STORAGE__MAX_OPEN_STORES"] = str(max_open)
    env["HALLS_CONSOLIDATOR__MODE"] = "external"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    log = open(data_dir.parent / "many-stores-server.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "halls", "serve", "--data-dir", str(data_dir), "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        preexec_fn=limit,  # noqa: PLW1509 - only sets the limit, before exec
    )
    url = f"http://127.0.0.1:{port}"
    errors: dict[str, int] = {}
    max_fds = max_rss = 0.0
    started = time.monotonic()
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("the server did not start")
            time.sleep(0.2)
        base_fds = _fds(proc.pid)

        def sample() -> None:
            nonlocal max_fds, max_rss
            max_fds = max(max_fds, _fds(proc.pid))
            max_rss = max(max_rss, _rss_mb(proc.pid))

        def check(r: httpx.Response) -> None:
            if r.status_code >= 300:
                errors[str(r.status_code)] = errors.get(str(r.status_code), 0) + 1
            if r.status_code == 503 and "retry-after" not in r.headers:
                errors["503_without_retry_after"] = errors.get("503_without_retry_after", 0) + 1

        with httpx.Client(base_url=url, timeout=120) as c:
            for i in range(stores):
                p = {"store": f"many-{i:05d}"}
                check(c.post("/short", params=p, json={"content": f"store {i} keeps note {i}"}))
                r = c.post("/search", params=p, json={"query": f"note {i}"})
                check(r)
                if r.status_code == 200 and not r.json()["results"]:
                    errors["empty_search"] = errors.get("empty_search", 0) + 1
                if i % sample_every == 0:
                    sample()
            for i in range(again):
                r = c.post("/search", params={"store": f"many-{i:05d}"}, json={"query": "note"})
                check(r)
                if i % sample_every == 0:
                    sample()
            sample()
            names = c.get("/stores").json()["stores"]
            listed = sum(1 for n in names if n.startswith("many-"))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.close()
    return {
        "stores": stores,
        "again": again,
        "max_open_stores": max_open,
        "nofile": nofile,
        "requests": 2 * stores + again,
        "errors": errors,
        "stores_listed": listed,
        "fds_at_start": base_fds,
        "max_fds": int(max_fds),
        "max_rss_mb": round(max_rss, 1),
        "seconds": round(time.monotonic() - started, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stores", type=int, default=2000)
    ap.add_argument("--again", type=int, default=100)
    ap.add_argument("--max-open", type=int, default=64)
    ap.add_argument("--nofile", type=int, default=1024)
    ap.add_argument("--max-fds", type=int, help="Default: 90%% of --nofile.")
    ap.add_argument("--max-rss-mb", type=float, default=1024.0)
    ap.add_argument("--data-dir", type=Path, help="Default: a temporary directory.")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data_dir or Path(tmp) / "data"
        data.mkdir(parents=True, exist_ok=True)
        figures = run(args.stores, args.again, args.max_open, args.nofile, data)
    max_fds = args.max_fds or int(args.nofile * 0.9)
    figures["bounds"] = {"max_fds": max_fds, "max_rss_mb": args.max_rss_mb}
    print(json.dumps(figures, indent=2))
    ok = (
        not figures["errors"]
        and figures["max_fds"] <= max_fds
        and figures["max_rss_mb"] <= args.max_rss_mb
        and figures["stores_listed"] == args.stores
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
