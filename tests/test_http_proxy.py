"""Network deployment: whose address the rate limiter counts, and HTTPS served directly.

Live ``halls serve`` subprocesses over real sockets. Every request comes
from 127.0.0.1; ``X-Forwarded-For`` says otherwise, and is believed only
from a peer listed in ``server.trusted_proxies``.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives import serialization

from halls.client import trusting_only
from test_cli_errors import error_line, run
from tls_certs import public_chain, self_signed, write_key


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port another program holds: a serve that got past the TLS checks fails fast on it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def _limited(server_factory, **env: str):
    """One token a minute and a burst of 2: nothing refills while a test runs."""
    return server_factory(
        env={
            "HALLS_SERVER__RATE_LIMIT_PER_MINUTE": "1",
            "HALLS_SERVER__RATE_LIMIT_BURST": "2",
            "HALLS_SERVER__ACCESS_LOG": "true",
            **env,
        }
    )


def _as(client: httpx.Client, forwarded_for: str) -> int:
    return client.get("/stores", headers={"X-Forwarded-For": forwarded_for}).status_code


def _access_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if '"GET /stores HTTP/1.1"' in line]


def test_forwarded_for_is_ignored_without_trusted_proxies(server_factory) -> None:
    """By default a client naming other addresses in X-Forwarded-For still spends one bucket,
    whatever uvicorn's own variable (FORWARDED_ALLOW_IPS) says."""
    live = _limited(server_factory, FORWARDED_ALLOW_IPS="*")
    c = live.client()
    codes = [_as(c, f"198.51.100.{i}") for i in range(1, 5)]
    assert codes == [200, 200, 429, 429]
    lines = _access_lines(live.log())
    assert len(lines) == 4 and all("127.0.0.1:" in line for line in lines), lines
    assert "198.51.100." not in live.log()


def test_trusted_proxy_forwards_each_client_to_its_own_limit(server_factory) -> None:
    """From a trusted proxy, each forwarded client has its own bucket, keyed by the right-most
    untrusted hop: an address the client prepends itself does not buy a fresh one."""
    live = _limited(server_factory, HALLS_SERVER__TRUSTED_PROXIES='["127.0.0.0/8"]')
    c = live.client()
    assert [_as(c, "198.51.100.1") for _ in range(3)] == [200, 200, 429]
    # A second client behind the same proxy is not throttled by the first.
    assert [_as(c, "198.51.100.2") for _ in range(3)] == [200, 200, 429]
    # The first client spoofs an address in front; the proxy appends the real one.
    assert _as(c, "203.0.113.50, 198.51.100.1") == 429
    # A hop through another trusted proxy is skipped: the client is the address before it.
    assert _as(c, "198.51.100.3, 127.0.0.2") == 200
    # Without the header, the request is the proxy's own (its own bucket).
    assert c.get("/stores").status_code == 200
    log = live.log()
    assert "198.51.100.1:" in log and "198.51.100.2:" in log and "198.51.100.3:" in log
    assert "203.0.113.50" not in log


def test_serves_https_with_the_configured_certificate(
    server_factory, tmp_path: Path, store_name: str
) -> None:
    """With server.tls_certfile/tls_keyfile the API answers over HTTPS to a client that
    trusts the certificate; plain HTTP and a client that does not trust it get nothing."""
    certfile, keyfile = self_signed(tmp_path)
    live = server_factory(
        env={"HALLS_SERVER__TLS_CERTFILE": str(certfile), "HALLS_SERVER__TLS_KEYFILE": str(keyfile)}
    )
    assert live.url.startswith("https://")
    c = live.client()
    assert c.post("/stores", json={"name": store_name}).status_code == 201
    made = c.post("/short", params={"store": store_name}, json={"content": "over TLS"})
    assert made.status_code == 201
    got = c.get(f"/short/{made.json()['id']}", params={"store": store_name})
    assert got.status_code == 200 and got.json()["content"] == "over TLS"
    assert f"serving on https://127.0.0.1:{live.port}" in live.log()
    # The CLI's remote mode (httpx) trusts a private certificate named by SSL_CERT_FILE.
    remote = ("--server-url", live.url, "--store", store_name)
    proc = run("remember", "from the CLI over TLS", *remote, SSL_CERT_FILE=str(certfile))
    assert proc.returncode == 0, proc.stderr
    got = c.get(f"/short/{proc.stdout.strip()}", params={"store": store_name})
    assert got.json()["content"] == "from the CLI over TLS"
    untrusted = run("remember", "refused", *remote)
    assert untrusted.returncode != 0 and "Traceback" not in untrusted.stderr
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{live.port}/healthz", timeout=10)
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(f"{live.url}/healthz", timeout=10)


def test_the_certificate_and_key_may_share_one_file(server_factory, tmp_path: Path) -> None:
    """server.tls_keyfile unset: the key is read from the certificate file. A second serve
    on its port says a halls server holds it, HTTPS or not."""
    certfile, keyfile = self_signed(tmp_path)
    both = tmp_path / "both.pem"
    both.write_bytes(certfile.read_bytes() + keyfile.read_bytes())
    live = server_factory(env={"HALLS_SERVER__TLS_CERTFILE": str(both)})
    assert live.client().get("/healthz").status_code == 200
    assert live.url.startswith("https://")
    proc = run("serve", "--data-dir", str(tmp_path / "other"), "--port", str(live.port))
    assert "already in use by a halls server" in error_line(proc)


def test_the_cli_finds_the_https_server_of_its_own_config(
    server_factory, tmp_path: Path, store_name: str
) -> None:
    """Without --server-url the CLI reaches the configured HTTPS server on loopback, trusting
    exactly server.tls_certfile: here a public name's leaf and intermediate, no root."""
    fullchain, privkey = public_chain(tmp_path, "memory.example.com")
    env = {
        "HALLS_SERVER__TLS_CERTFILE": str(fullchain),
        "HALLS_SERVER__TLS_KEYFILE": str(privkey),
    }
    live = server_factory(env=env, tls=trusting_only(fullchain))
    c = live.client()
    assert c.post("/stores", json={"name": store_name}).status_code == 201
    # Were the server not found, the CLI would write into this other, empty directory.
    elsewhere = {"HALLS_SERVER__PORT": str(live.port), "HALLS_DATA_DIR": str(tmp_path / "other")}
    proc = run("remember", "found by its config", "--store", store_name, **env, **elsewhere)
    assert proc.returncode == 0, proc.stderr
    got = c.get(f"/short/{proc.stdout.strip()}", params={"store": store_name})
    assert got.status_code == 200 and got.json()["content"] == "found by its config"
    # By name and chain, as any other client checks, the certificate is not for 127.0.0.1.
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(f"{live.url}/healthz", verify=ssl.create_default_context(cafile=fullchain))


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("missing certificate", "cannot read server.tls_certfile"),
        ("missing key", "cannot read server.tls_keyfile"),
        ("not a certificate", "are not a PEM certificate and its private key"),
        ("key of another certificate", "are not a PEM certificate and its private key"),
        ("encrypted key", "is encrypted; give an unencrypted key"),
        ("key without certificate", "server.tls_keyfile is set without server.tls_certfile"),
    ],
)
def test_unusable_tls_files_stop_serve_in_one_line(
    tmp_path: Path, busy_port: int, case: str, expected: str
) -> None:
    """Each bad TLS setting exits non-zero with one line naming the setting, before serving."""
    certfile, keyfile = self_signed(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    key = serialization.load_pem_private_key(keyfile.read_bytes(), password=None)
    encrypted = write_key(key, tmp_path / "encrypted.pem", password=b"a passphrase")  # type: ignore[arg-type]
    env = {
        "missing certificate": {"TLS_CERTFILE": str(tmp_path / "absent.pem")},
        "missing key": {"TLS_CERTFILE": str(certfile), "TLS_KEYFILE": str(tmp_path / "no.pem")},
        "not a certificate": {"TLS_CERTFILE": str(tmp_path / "junk.pem")},
        "key of another certificate": {
            "TLS_CERTFILE": str(certfile),
            "TLS_KEYFILE": str(self_signed(other)[1]),
        },
        "encrypted key": {
            "TLS_CERTFILE": str(certfile),
            "TLS_KEYFILE": str(encrypted),
        },
        "key without certificate": {"TLS_KEYFILE": str(keyfile)},
    }[case]
    (tmp_path / "junk.pem").write_text("not a certificate\n")
    proc = run(
        "serve", "--data-dir", str(tmp_path / "data"), "--port", str(busy_port),
        **{f"HALLS_SERVER__{k}": v for k, v in env.items()},
    )  # fmt: skip
    line = error_line(proc)
    assert expected in line, line
    assert "serving on" not in proc.stderr + proc.stdout


@pytest.mark.parametrize("value", ['["10.0.0.1/8"]', '["proxy.internal"]', '["*"]'])
def test_a_trusted_proxy_must_be_an_address_or_network(
    tmp_path: Path, busy_port: int, value: str
) -> None:
    """A host name, "*" or a network with host bits set is refused in one line, not ignored."""
    proc = run(
        "serve", "--data-dir", str(tmp_path / "data"), "--port", str(busy_port),
        HALLS_SERVER__TRUSTED_PROXIES=value,
    )  # fmt: skip
    line = error_line(proc)
    assert "invalid setting server.trusted_proxies" in line, line
