"""Bearer auth: off by default, on every endpoint but /healthz when a token is set.

The endpoint list is read from the server's own OpenAPI document, so a route
added later is covered without editing this file.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from halls.models import new_id
from http_helpers import assert_error, counts, created

TOKEN = "correct-horse-battery-staple-42"
REPO = Path(__file__).resolve().parent.parent
ID_KIND = {"short": "short", "near": "near", "long": "long"}


def endpoints(client) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """(method, path) of every API route, from the live OpenAPI document."""
    r = client.get("/openapi.json")
    assert r.status_code == 200, r.text
    found = [
        (method.upper(), path)
        for path, ops in r.json()["paths"].items()
        for method in ops
        if method in ("get", "post", "put", "patch", "delete")
    ]
    assert len(found) >= 18, found
    return found


def concrete(path: str) -> str:
    """Fill {id} with a well-formed id of the path's tier."""
    tier = path.strip("/").split("/")[0]
    return path.replace("{id}", new_id(ID_KIND.get(tier, "short")))


def call(client, method: str, path: str, store: str, **kw: Any):  # type: ignore[no-untyped-def]
    return client.request(method, concrete(path), params={"store": store}, **kw)


def test_without_a_token_every_endpoint_is_open(server, store_name) -> None:
    """With no token configured, no endpoint answers 401, with or without a header."""
    c = server.client(token=None)
    created(c, "/short", store_name, {"content": "open server"})
    stranger = server.client(token="some-token-nobody-set")
    for method, path in endpoints(c):
        for client in (c, stranger):
            r = call(client, method, path, store_name, json={})
            assert r.status_code != 401, (method, path, r.text)
    assert c.get("/docs").status_code == 200


@pytest.fixture
def locked(server_factory):  # type: ignore[no-untyped-def]
    """A server that requires the bearer token."""
    return server_factory(env={"HALLS_SERVER__BEARER_TOKEN": TOKEN})


def test_token_required_on_every_endpoint_but_healthz(locked, store_name) -> None:
    """With a token set, a missing, wrong or malformed token is 401 everywhere but /healthz."""
    good = locked.client()
    created(good, "/short", store_name, {"content": "guarded memory"})
    before = counts(good, store_name)
    paths = endpoints(good)
    assert ("GET", "/healthz") in paths
    bad_clients = {
        "missing": locked.client(token=None),
        "wrong": locked.client(token=TOKEN + "x"),
        "prefix": locked.client(token=TOKEN[:-1]),
    }
    raw = locked.client(token=None)
    variants = {
        "no scheme": {"Authorization": TOKEN},
        "basic": {"Authorization": f"Basic {TOKEN}"},
        "empty": {"Authorization": "Bearer"},
        "lowercase": {"Authorization": f"bearer {TOKEN.upper()}"},
    }
    # Mounted beside the documented routes: the OpenAPI document itself, the
    # docs page and MCP (streamable HTTP) are guarded too.
    extra = [("GET", "/openapi.json"), ("GET", "/docs"), ("POST", "/mcp"), ("GET", "/mcp")]
    for method, path in paths + extra:
        if path == "/healthz":
            continue
        body = {"content": "sneaky", "query": "guarded", "items": [{"content": "sneaky"}]}
        for why, client in bad_clients.items():
            r = call(client, method, path, store_name, json=body)
            assert_error(r, 401, "unauthorized")
            assert r.headers.get("www-authenticate") == "Bearer", (why, method, path)
        for why, headers in variants.items():
            r = call(raw, method, path, store_name, json=body, headers=headers)
            assert r.status_code == 401, (why, method, path)
            assert_error(r, 401, "unauthorized")
    assert counts(good, store_name) == before, "no refused request wrote anything"

    for client in (*bad_clients.values(), good):
        r = client.get("/healthz")
        assert r.status_code == 200 and r.json() == {"status": "ok"}
    # The viewer page holds no data (its API calls carry the token), so it is open.
    assert bad_clients["missing"].get("/viewer").status_code == 200


def test_right_token_works(locked, store_name) -> None:
    """With the right token the API works as usual: write, read, search, stats, stores."""
    c = locked.client()
    entry = created(c, "/short", store_name, {"content": "the token lets me in"})
    p = {"store": store_name}
    assert c.get(f"/short/{entry['id']}", params=p).json() == entry
    hits = c.post("/search", params=p, json={"query": "token lets me in"}).json()["results"]
    assert hits[0]["id"] == entry["id"]
    assert counts(c, store_name)["short"] == 1
    assert store_name in c.get("/stores").json()["stores"]
    assert c.get("/openapi.json").status_code == 200
    for method, path in endpoints(c):
        r = call(c, method, path, store_name, json={})
        assert r.status_code != 401, (method, path, r.text)


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_cli(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    return subprocess.run(
        [sys.executable, "-m", "halls", *args, "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=60, env=full, cwd=REPO,
    )  # fmt: skip


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "::"])
def test_serve_refuses_a_public_bind_without_a_token(tmp_path, host) -> None:
    """`halls serve --host <non-loopback>` without a token exits non-zero with one clear line."""
    port = str(unused_port())
    r = run_cli(["serve", "--host", host, "--port", port], tmp_path)
    assert r.returncode != 0
    out = r.stdout + r.stderr
    assert "bearer token" in out and "HALLS_SERVER__BEARER_TOKEN" in out, out
    assert "Traceback" not in out
    assert not (tmp_path / "data").exists() or not list((tmp_path / "data").iterdir())
