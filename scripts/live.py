"""A real ``halls serve`` subprocess on loopback, for the crash and load scripts.

Imported by ``crash_test.py`` and ``load_test.py`` (this directory is on
``sys.path`` when they run). ``HALLS_*`` variables of the caller are not
passed on, so that the figures are those of the defaults plus what a script
sets; consolidation is ``external`` so that only the scripts start runs.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

STORE = "s"
NAMES = ["Chad", "Amara", "Tomasz", "Ines", "Kwame", "Yuki", "Lena", "Ravi", "Odile", "Bruno"]
THINGS = [
    ("absolute paths", "config files"),
    ("tabs", "Makefiles"),
    ("dark roast coffee", "early meetings"),
    ("a paper notebook", "planning sprints"),
    ("short commit messages", "small fixes"),
    ("the night train", "trips to Vienna"),
    ("metric units", "recipes"),
    ("green tea", "afternoons"),
    ("pytest fixtures", "database tests"),
    ("a standing desk", "long calls"),
]
FORMS = [
    "{n} prefers {t} for {w}",
    "{n} likes to use {t} when it comes to {w}",
    "For {w}, {n} wants {t}",
]
DAY = 86_400.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """One ``halls serve`` process on a data dir; ``kill()`` is a SIGKILL."""

    def __init__(self, data_dir: Path, env: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        full = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
        full["HALLS_CONSOLIDATOR__MODE"] = "external"
        full.update(env or {})
        data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = data_dir.parent / f"server-{self.port}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - the process owns it
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "halls", "serve", "--data-dir", str(data_dir),
             "--port", str(self.port)],
            stdout=self._log, stderr=subprocess.STDOUT, env=full,
        )  # fmt: skip

    def wait_ready(self, timeout: float = 180.0) -> float:
        """Seconds until /healthz answers; raises if the process exits or is too slow."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"halls serve exited ({self.proc.returncode}):\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return time.monotonic() - t0
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"halls serve did not start in {timeout:.0f} s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs, nothing is flushed, as in a crash."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._log.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self._log.close()


def start(data_dir: Path, env: dict[str, str] | None = None) -> Server:
    server = Server(data_dir, env)
    server.wait_ready()
    return server


def client(server: Server, timeout: float = 120.0) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=timeout, params={"store": STORE})


def list_all(c: httpx.Client, path: str) -> list[dict[str, Any]]:
    """Every record of a list endpoint, page by page."""
    out: list[dict[str, Any]] = []
    while True:
        r = c.get(path, params={"store": STORE, "limit": 1000, "offset": len(out)})
        r.raise_for_status()
        page = r.json()
        out += page
        if len(page) < 1000:
            return out


def integrity(data_dir: Path, key: str | None = None) -> str:
    """``PRAGMA integrity_check`` of the store file, the server stopped."""
    path = data_dir / f"{STORE}.sqlite3"
    if key is None:
        import sqlite3

        db = sqlite3.connect(path)
    else:
        from sqlcipher3 import dbapi2

        db = dbapi2.connect(str(path))
        db.execute("PRAGMA key = '{}'".format(key.replace("'", "''")))
    try:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        db.close()


def chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def entries(count: int, now: float) -> list[dict[str, Any]]:
    """Paraphrase triples over three days: each triple is a fact a run promotes."""
    out = []
    for g in range(count // len(FORMS)):
        name = f"{NAMES[g % len(NAMES)]} {g}"
        thing, when = THINGS[(g // len(NAMES)) % len(THINGS)]
        for d, form in enumerate(FORMS):
            text = form.format(n=name, t=thing, w=when)
            out.append({"content": text, "occurred_at": now - (3 - d) * DAY})
    return out
