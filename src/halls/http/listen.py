"""How ``halls serve`` listens: TLS, and whose ``X-Forwarded-For`` it believes.

uvicorn does both (its ``ProxyHeadersMiddleware`` and its SSL context);
this module turns the ``server.*`` settings into uvicorn's options and
checks the certificate before anything slow loads, so that a wrong path
is one line, not a traceback after the model has loaded.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

from halls.config import ServerSettings


def uvicorn_options(cfg: ServerSettings) -> dict[str, Any]:
    """The keyword arguments of ``uvicorn.run`` that ``server.*`` decides."""
    trusted = [str(net) for net in cfg.trusted_proxies]
    return {
        # Off unless proxies are named. Passed even then: left to its
        # defaults, uvicorn believes X-Forwarded-For from 127.0.0.1 and ::1
        # (or from FORWARDED_ALLOW_IPS), so any local client could pick the
        # address the rate limiter counts. When on, uvicorn rewrites the
        # ASGI scope's client before the app runs: the rate limiter and the
        # access log both see the resolved client.
        "proxy_headers": bool(trusted),
        "forwarded_allow_ips": trusted,
        "ssl_certfile": str(cfg.tls_certfile) if cfg.tls_certfile else None,
        "ssl_keyfile": str(cfg.tls_keyfile) if cfg.tls_keyfile else None,
    }


class _Encrypted(Exception):
    pass


def _no_password() -> str:
    # Called by OpenSSL only for an encrypted key: without this it would
    # prompt on the terminal, which a service under systemd cannot answer.
    raise _Encrypted


def tls_problem(cfg: ServerSettings) -> str | None:
    """Why the configured certificate and key cannot serve HTTPS, in one line; None if they can."""
    if cfg.tls_certfile is None:
        return None
    files = [("server.tls_certfile", cfg.tls_certfile)]
    if cfg.tls_keyfile is not None:
        files.append(("server.tls_keyfile", cfg.tls_keyfile))
    for key, path in files:
        try:
            Path(path).read_bytes()
        except OSError as exc:
            return f"cannot read {key} {path}: {exc.strerror or exc}"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cfg.tls_certfile, cfg.tls_keyfile, password=_no_password)
    except _Encrypted:
        return "the private key of server.tls_keyfile is encrypted; give an unencrypted key"
    except ssl.SSLError as exc:
        where = "server.tls_certfile and server.tls_keyfile"
        if cfg.tls_keyfile is None:
            where = "server.tls_certfile (with its key, as server.tls_keyfile is unset)"
        return f"{where} are not a PEM certificate and its private key ({exc.reason or exc})"
    return None
