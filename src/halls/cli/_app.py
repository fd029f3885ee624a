"""The ``halls`` group and what every command shares: settings, errors, the service.

Commands that touch memories call the same ``Memory`` service as the HTTP
API. The everyday ones (remember, recall, stats, stores) first ask a running
server (``--server-url``, else the configured host and port, probed briefly)
and only open the data directory themselves, loading the model, when none
answers or ``--data-dir`` names one. Errors are printed as one line, never as
a traceback, and exit with status 1 (2 for bad usage, as click does).
"""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import ValidationError

from halls.config import Settings, env_warnings, load_settings
from halls.errors import HallsError

F = TypeVar("F", bound=Callable[..., Any])


def _common(fn: F) -> F:
    fn = click.option(
        "--config", type=click.Path(dir_okay=False, path_type=Path), help="YAML config file."
    )(fn)
    fn = click.option(
        "--data-dir", type=click.Path(file_okay=False, path_type=Path), help="Where stores live."
    )(fn)
    return fn


def _server(fn: F) -> F:
    fn = click.option(
        "--token",
        envvar="HALLS_TOKEN",
        help="Bearer token for the server (env HALLS_TOKEN; default server.bearer_token).",
    )(fn)
    fn = click.option(
        "--server-url",
        help="Talk to this running halls server (default: the configured one, if it answers).",
    )(fn)
    return fn


def _remote(
    settings: Settings, data_dir: Path | None, server_url: str | None, token: str | None
) -> Any:
    """A client of the running server this command should use, or None to work locally.

    ``--server-url`` must answer; ``--data-dir`` means this directory, here;
    otherwise the configured server is used when it answers /healthz within
    half a second. The server owns its store: a CLI writing beside it would
    contend for the writer and load a second copy of the model.
    """
    from halls.client import HallsClient, trusting_only

    if server_url and data_dir is not None:
        raise click.UsageError("use either --server-url or --data-dir, not both")
    if data_dir is not None:
        return None
    bearer = token or (
        settings.server.bearer_token.get_secret_value() if settings.server.bearer_token else None
    )
    host = settings.server.host
    # A server bound to every interface is reached on loopback.
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    host = f"[{host}]" if ":" in host else host
    scheme = "http"
    verify: ssl.SSLContext | bool = True
    # Unreadable by this user: no server is found, and the store is opened here.
    if settings.server.tls_certfile is not None and not server_url:
        with suppress(OSError, ssl.SSLError):
            scheme, verify = "https", trusting_only(settings.server.tls_certfile)
    client = HallsClient(
        server_url or f"{scheme}://{host}:{settings.server.port}", bearer, verify=verify
    )
    if client.answers():
        return client
    client.close()
    if server_url:
        raise click.ClickException(f"no halls server answers at {server_url}")
    return None


@contextmanager
def _translated() -> Iterator[None]:
    """HallsErrors (from a server's answer) as one-line CLI errors."""
    try:
        yield
    except HallsError as exc:
        raise click.ClickException(exc.message) from None


_warned_env = False


def _settings(config: Path | None, data_dir: Path | None, **overrides: Any) -> Settings:
    global _warned_env
    if not _warned_env:
        # A warning, not an error: the environment is shared with other
        # programs and other halls versions, and must not stop a server.
        _warned_env = True
        for message in env_warnings():
            click.echo(f"halls: warning: {message}", err=True)
    try:
        return load_settings(config, data_dir=data_dir, **overrides)
    except (ValueError, HallsError) as exc:
        raise click.ClickException(_one_line(exc)) from None


def _one_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError) and exc.errors():
        # The setting and what is wrong with it, never its value (it may be a secret).
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "settings"
        return f"invalid setting {where}: {first['msg']}"
    text = getattr(exc, "message", None) or str(exc)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


@contextmanager
def _memory(settings: Settings) -> Iterator[Any]:
    from halls.service import Memory, acting_as

    memory = Memory(settings)
    try:
        # The audit log names who changed what: here, the shell.
        with acting_as("cli"):
            yield memory
    except HallsError as exc:
        raise click.ClickException(exc.message) from None
    finally:
        memory.close()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.group()
@click.version_option(package_name="halls")
def main() -> None:
    """halls: the Halls of Memory, a local-first memory server for LLM agents."""


def _halls_answers(host: str, port: int) -> bool:
    import httpx

    # Over HTTPS too (server.tls_certfile), unverified: it only names who
    # holds the port in an error message, and sends nothing but the probe.
    for scheme in ("http", "https"):
        try:
            url = f"{scheme}://{host}:{port}/healthz"
            if httpx.get(url, timeout=2, verify=False).json() == {"status": "ok"}:
                return True
        except (httpx.HTTPError, ValueError):
            pass
    return False
