"""``halls serve``: the HTTP API on its address, refused in one line where it cannot bind."""

from __future__ import annotations

import errno
import gc
import socket
from pathlib import Path

import click

from halls.cli._app import _common, _halls_answers, _is_loopback, _settings, main
from halls.errors import HallsError


@main.command()
@_common
@click.option("--host", help="Address to bind (default 127.0.0.1).")
@click.option("--port", type=int, help="Port to listen on (default 7420).")
def serve(config: Path | None, data_dir: Path | None, host: str | None, port: int | None) -> None:
    """Run the HTTP API (and everything mounted on it)."""
    server = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    settings = _settings(config, data_dir, server=server or None)
    cfg = settings.server
    if not _is_loopback(cfg.host) and not cfg.auth_enabled:
        raise click.ClickException(
            f"refusing to listen on {cfg.host} without a bearer token: set server.bearer_token "
            "(HALLS_SERVER__BEARER_TOKEN) or server.tokens, or bind to 127.0.0.1"
        )
    if not _is_loopback(cfg.host) and cfg.rate_limit_per_minute == 0:
        click.echo(
            "halls: hint: rate limiting is off; set server.rate_limit_per_minute "
            "(HALLS_SERVER__RATE_LIMIT_PER_MINUTE) to limit each client",
            err=True,
        )
    from halls.http.listen import tls_problem, uvicorn_options

    # Before the model loads and before "serving on" is printed: a taken
    # port or an unreadable certificate fails here in one line, not after
    # a second of promise.
    problem = tls_problem(cfg)
    if problem is not None:
        raise click.ClickException(problem)
    _check_port(cfg.host, cfg.port)
    import uvicorn

    from halls.http import create_app
    from halls.service import Memory

    memory = Memory(settings)
    try:
        memory.open_stores()  # a wrong encryption key stops here, in one line
        # The app opens the default store at startup; a store embedded by
        # another embedder (an earlier graph) is refused here, in one line,
        # rather than in the app's startup with a traceback.
        memory.create_store(settings.default_store)
    except HallsError as exc:
        memory.close()
        raise click.ClickException(exc.message) from None
    mcp = None
    if settings.mcp.enabled:
        from halls.mcp import LocalBackend, build_server

        mcp = build_server(
            LocalBackend(memory),
            default_store=settings.default_store,
            host=cfg.host,
            path=settings.mcp.path,
            tools=settings.mcp.tools,
        )
    scheme = "https" if cfg.tls_certfile else "http"
    click.echo(
        f"halls: serving on {scheme}://{cfg.host}:{cfg.port} (data in {settings.data_dir})",
        err=True,
    )
    app = create_app(memory, mcp=mcp)
    # Everything loaded so far (the model, the libraries) lives as long as
    # the server: frozen, the garbage collector's full passes no longer walk
    # it, which took ~1 ms out of a search whenever one landed in it.
    gc.collect()
    gc.freeze()
    uvicorn.run(
        app,
        host=cfg.host,
        port=cfg.port,
        log_level="info",
        access_log=cfg.access_log,
        **uvicorn_options(cfg),
    )


def _check_port(host: str, port: int) -> None:
    """Refuse, in one line, to serve on an address this process cannot bind.

    Binds as uvicorn will (every address the host resolves to, with
    SO_REUSEADDR), then lets go. A program that takes the port in the
    second between this and uvicorn's bind still gets uvicorn's own error.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise click.ClickException(f"cannot listen on {host}: {exc.strerror}") from None
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise click.ClickException(
                        f"cannot listen on {host}:{port}: {exc.strerror}"
                    ) from None
                who = "a halls server" if _halls_answers(host, port) else "another program"
                raise click.ClickException(
                    f"port {port} on {host} is already in use by {who}; choose another "
                    "with --port or server.port (HALLS_SERVER__PORT)"
                ) from None
