"""Shared fixtures: the real embedding model, real SQLite files, live servers.

Nothing here is a fake: ``memory`` is the real service on a temporary data
directory, and ``server`` / ``server_factory`` start ``python -m halls serve``
as a subprocess and talk to it over HTTP.
"""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

import pg_server
from halls import Memory, Settings
from halls.config import EmbedderSettings, StorageSettings
from halls.embed import Embedder, build_embedder
from halls.store import Store, open_backend

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The default embedder (packaged int8 all-MiniLM-L6-v2 on ONNX), loaded once."""
    return build_embedder(EmbedderSettings())


# Fixtures that load the torch backend: a test that uses one needs halls[torch].
TORCH_FIXTURES = frozenset({"torch_embedder", "float32_embedder", "bfloat16_embedder"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``torch`` every test that loads the torch backend through a fixture.

    ``make test-python`` runs the suite on another Python without the torch
    extra (``-m "not torch"``); the tests that import torch themselves carry
    the mark in their module.
    """
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        params = getattr(getattr(item, "callspec", None), "params", {})
        if used & TORCH_FIXTURES or TORCH_FIXTURES & set(map(str, params.values())):
            item.add_marker(pytest.mark.torch)


@pytest.fixture(scope="session")
def torch_embedder() -> Embedder:
    """The torch backend (halls[torch]) with the same packaged weights, loaded once."""
    from halls.embed.local import LocalEmbedder

    return LocalEmbedder()


@pytest.fixture
def memory(tmp_path: Path, embedder: Embedder) -> Iterator[Memory]:
    """The real service on a fresh data directory."""
    with Memory(Settings(data_dir=tmp_path / "data"), embedder=embedder) as m:
        yield m


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LiveServer:
    """A ``halls serve`` subprocess on a free loopback port."""

    data_dir: Path
    port: int
    proc: subprocess.Popen[bytes]
    log_path: Path
    log_file: object = None
    token: str | None = None
    clients: list[httpx.Client] = field(default_factory=list)
    storage: StorageSettings = field(default_factory=StorageSettings)
    # HTTPS (server.tls_certfile set): clients trust that certificate alone.
    tls: ssl.SSLContext | None = None

    @contextmanager
    def store(self, name: str) -> Iterator[Store]:
        """A handle on one of the server's stores, opened beside it (as the CLI would)."""
        backend = open_backend(self.storage, self.data_dir)
        handle = backend.open(name, True)
        try:
            yield handle
        finally:
            handle.close()
            backend.close()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def client(self, token: str | None = "default") -> httpx.Client:
        """An HTTP client; by default it sends the server's token, if any."""
        tok = self.token if token == "default" else token
        headers = {"Authorization": f"Bearer {tok}"} if tok else {}
        c = httpx.Client(base_url=self.url, headers=headers, timeout=60, verify=self.tls or True)
        self.clients.append(c)
        return c

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: no shutdown hooks, no flush, like a crash."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)
        if self.log_file is not None:
            self.log_file.close()  # type: ignore[attr-defined]
            self.log_file = None

    def stop(self) -> None:
        for c in self.clients:
            c.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.log_file is not None:
            self.log_file.close()  # type: ignore[attr-defined]


def start_server(
    data_dir: Path,
    env: dict[str, str] | None = None,
    args: list[str] | None = None,
    tls: ssl.SSLContext | None = None,
) -> LiveServer:
    port = free_port()
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    full_env.update(env or {})
    log_path = data_dir.parent / f"server-{port}.log"
    data_dir.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "wb")  # noqa: SIM115 - the subprocess owns it until exit
    proc = subprocess.Popen(
        [sys.executable, "-m", "halls", "serve", "--data-dir", str(data_dir), "--port", str(port)]
        + (args or []),
        stdout=log,
        stderr=subprocess.STDOUT,
        env=full_env,
        cwd=REPO,
    )
    server = LiveServer(
        data_dir=data_dir,
        port=port,
        proc=proc,
        log_path=log_path,
        log_file=log,
        token=full_env.get("HALLS_SERVER__BEARER_TOKEN"),
        storage=StorageSettings(
            backend=full_env.get("HALLS_STORAGE__BACKEND", "sqlite"),  # type: ignore[arg-type]
            dsn=full_env.get("HALLS_STORAGE__DSN"),
        ),
    )
    certfile = full_env.get("HALLS_SERVER__TLS_CERTFILE")
    if certfile:
        server.tls = tls or ssl.create_default_context(cafile=certfile)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            server.stop()
            raise RuntimeError(f"halls serve exited early:\n{server.log()}")
        try:
            probe = httpx.get(f"{server.url}/healthz", timeout=1, verify=server.tls or True)
            if probe.status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.05)  # a start takes ~1 s: a coarser poll would add to every one
    server.stop()
    raise RuntimeError(f"halls serve did not start in time:\n{server.log()}")


@pytest.fixture(scope="session")
def sqlite_live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One live server (SQLite) for the session; tests keep apart by using their own store.

    It serves every MCP tool (``mcp.tools: all``), so that the MCP tests cover them all.
    """
    live = start_server(tmp_path_factory.mktemp("live") / "data", env={"HALLS_MCP__TOOLS": "all"})
    yield live
    live.stop()


@pytest.fixture(scope="session")
def server(sqlite_live_server: LiveServer) -> LiveServer:
    """The session's live server (SQLite; see ``api_server`` for both backends)."""
    return sqlite_live_server


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[object]:
    """Start extra servers (own config) that are stopped after the test."""
    started: list[LiveServer] = []

    def make(
        env: dict[str, str] | None = None,
        data_dir: Path | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> LiveServer:
        live = start_server(data_dir or tmp_path / f"data{len(started)}", env=env, tls=tls)
        started.append(live)
        return live

    yield make
    for live in started:
        live.stop()


@pytest.fixture
def store_name() -> str:
    """A store name no other test uses."""
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def postgres() -> Iterator[pg_server.PgServer]:
    """One real PostgreSQL (with pgvector) for the session, on loopback (tests/pg_server.py)."""
    try:
        live = pg_server.start()
    except (ImportError, OSError, subprocess.CalledProcessError) as err:
        if os.environ.get("CI"):
            raise  # CI must run the PostgreSQL suite
        pytest.skip(f"PostgreSQL could not start here: {type(err).__name__}: {err}")
    yield live
    live.stop()


@pytest.fixture(scope="session")
def pg_dsn(postgres: pg_server.PgServer) -> str:
    """A database of the session's server; tests keep apart by their store names."""
    return postgres.create_database("halls")


def pg_env(dsn: str, **extra: str) -> dict[str, str]:
    """The environment of a server on PostgreSQL (the consolidator only on request)."""
    return {
        "HALLS_STORAGE__BACKEND": "postgres",
        "HALLS_STORAGE__DSN": dsn,
        "HALLS_CONSOLIDATOR__MODE": "external",
        **extra,
    }


@pytest.fixture(scope="session")
def pg_live_server(pg_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One live server on the session's PostgreSQL."""
    live = start_server(tmp_path_factory.mktemp("live-pg") / "data", env=pg_env(pg_dsn))
    yield live
    live.stop()


@pytest.fixture
def storage(request: pytest.FixtureRequest) -> StorageSettings:
    """SQLite, or PostgreSQL where a test asks for it (``indirect`` parametrization:
    ``@pytest.mark.parametrize("storage", BOTH, indirect=True)``). On PostgreSQL
    each test gets a database of its own, so tests may reuse store names."""
    if getattr(request, "param", "sqlite") == "postgres":
        server = request.getfixturevalue("postgres")
        return StorageSettings(
            backend="postgres", dsn=server.create_database(f"t{uuid.uuid4().hex[:16]}")
        )
    return StorageSettings()


BOTH = ["sqlite", "postgres"]


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def api_server(request: pytest.FixtureRequest) -> LiveServer:
    """The session's live server of each backend: a module whose ``server`` is this
    runs its HTTP API tests on both."""
    name = "sqlite_live_server" if request.param == "sqlite" else "pg_live_server"
    return request.getfixturevalue(name)  # type: ignore[no-any-return]
