"""halls behind a real nginx, configured with the `location` block of docs/deployment.md.

Clients connect from their own loopback addresses (127.0.0.5, 127.0.0.6:
Linux routes all of 127/8 to the loopback interface), nginx connects to
halls from 127.0.0.1, the one trusted proxy.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import free_port
from mcp_scenario import over_http

DOC = (Path(__file__).resolve().parent.parent / "docs" / "deployment.md").read_text()
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

# Two processes and a dozen requests, but Debian's nginx must be installed:
# `make test-all` installs it (as it does chromium), `make test` needs none.
pytestmark = pytest.mark.slow


def documented_location() -> str:
    """The `location / { ... }` block of the nginx example in docs/deployment.md."""
    block = re.search(r"```nginx\n(.*?)```", DOC, re.S)
    assert block, "docs/deployment.md has no nginx example"
    location = re.search(r"\n( *location / \{\n.*?\n *\})\n", block.group(1), re.S)
    assert location, "the nginx example has no `location /` block"
    return location.group(1)


def _nginx(directory: Path, scratch: Path, port: int, upstream: int) -> subprocess.Popen[bytes]:
    location = documented_location()
    assert "127.0.0.1:7420" in location
    location = location.replace("127.0.0.1:7420", f"127.0.0.1:{upstream}")
    temp = "\n".join(
        f"    {kind}_temp_path {scratch / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf = directory / "nginx.conf"
    conf.write_text(
        f"daemon off;\nworker_processes 1;\npid {directory / 'nginx.pid'};\n"
        f"error_log {directory / 'error.log'} warn;\n"
        "events { worker_connections 64; }\n"
        f"http {{\n    access_log off;\n{temp}\n"
        f"  server {{\n    listen 127.0.0.1:{port};\n{location}\n  }}\n}}\n"
    )
    # -e: before it reads the config nginx opens its default error log,
    # which a user without write access to /var/log/nginx cannot.
    return subprocess.Popen(
        [NGINX, "-p", str(directory), "-e", str(directory / "error.log"), "-c", str(conf)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )


@pytest.fixture
def proxied(request, server_factory, tmp_path: Path) -> Iterator[tuple[object, str]]:
    """A rate-limited halls trusting 127.0.0.1, and the URL of an nginx in front of it.

    One token a minute (nothing refills during a test); the burst is the
    test's parameter, else 2.
    """
    assert Path(NGINX).exists(), "this test needs Debian's nginx (make test-all installs it)"
    live = server_factory(
        env={
            "HALLS_SERVER__TRUSTED_PROXIES": '["127.0.0.1"]',
            "HALLS_SERVER__RATE_LIMIT_PER_MINUTE": "1",
            "HALLS_SERVER__RATE_LIMIT_BURST": str(getattr(request, "param", 2)),
            "HALLS_SERVER__ACCESS_LOG": "true",
        }
    )
    directory = tmp_path / "nginx"
    directory.mkdir()
    # Where nginx buffers a large body: its workers run as nobody when the
    # test runs as root, and cannot enter pytest's tmp_path (mode 0700).
    scratch = Path(tempfile.mkdtemp(prefix="halls-nginx-"))
    scratch.chmod(0o755)
    port = free_port()
    proc = _nginx(directory, scratch, port, live.port)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            errors = directory / "error.log"
            if proc.poll() is not None or time.monotonic() > deadline:
                log = errors.read_text() if errors.exists() else ""
                raise RuntimeError(f"nginx did not start:\n{log}")
            time.sleep(0.05)
        yield live, url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(scratch)


def _from(address: str, url: str) -> httpx.Client:
    """A client whose connections leave from ``address``."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=url, transport=transport, timeout=60)


def test_each_client_behind_nginx_has_its_own_limit(proxied) -> None:
    """Through nginx, each client address has its own bucket; one it writes into
    X-Forwarded-For itself changes nothing, through nginx or straight to halls."""
    live, url = proxied
    with _from("127.0.0.5", url) as a, _from("127.0.0.6", url) as b:
        assert [a.get("/stores").status_code for _ in range(3)] == [200, 200, 429]
        spoofed = {"X-Forwarded-For": "198.51.100.77"}
        assert a.get("/stores", headers=spoofed).status_code == 429
        assert [b.get("/stores").status_code for _ in range(3)] == [200, 200, 429]
    with _from("127.0.0.5", live.url) as direct:
        assert direct.get("/stores", headers=spoofed).status_code == 429
    lines = [line for line in live.log().splitlines() if '"GET /stores HTTP/1.0"' in line]
    assert {line.split()[1].rsplit(":", 1)[0] for line in lines} == {"127.0.0.5", "127.0.0.6"}
    assert "198.51.100.77" not in live.log()


@pytest.mark.parametrize("proxied", [100], indirect=True)
def test_bodies_and_mcp_pass_through_nginx(proxied, store_name: str) -> None:
    """A 2 MB body (over nginx's default 1 MB) and an MCP session work through the proxy;
    /mcp refuses a Host that is not loopback, as docs/deployment.md warns."""
    live, url = proxied
    with httpx.Client(base_url=url, timeout=60) as c:
        assert c.post("/stores", json={"name": store_name}).status_code == 201
        big = [{"content": f"entry {i} " + "x" * 20_000} for i in range(100)]
        r = c.post("/short/batch", params={"store": store_name}, json={"items": big})
        assert r.status_code == 201, r.text[:300]

    async def tools(session) -> list[str]:
        return [t.name for t in (await session.list_tools()).tools]

    assert "remember" in asyncio.run(over_http(f"{url}/mcp", tools))
    wrong_host = httpx.post(
        f"{live.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Accept": "application/json, text/event-stream", "Host": "memory.example.com"},
    )
    assert wrong_host.status_code == 421
