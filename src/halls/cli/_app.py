"""The ``halls`` group and what every command shares: settings, errors, the service.

Commands that touch memories call the same ``Memory`` service as the HTTP
API, on the local data directory. Errors are printed as one line, never as a
traceback, and exit with status 1 (2 for bad usage, as click does).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from halls.config import Settings, load_settings
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


def _settings(config: Path | None, data_dir: Path | None, **overrides: Any) -> Settings:
    try:
        return load_settings(config, data_dir=data_dir, **overrides)
    except (ValueError, HallsError) as exc:
        raise click.ClickException(_one_line(exc)) from None


def _one_line(exc: Exception) -> str:
    text = getattr(exc, "message", None) or str(exc)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


@contextmanager
def _memory(settings: Settings) -> Iterator[Any]:
    from halls.service import Memory

    memory = Memory(settings)
    try:
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

    try:
        return httpx.get(f"http://{host}:{port}/healthz", timeout=2).json() == {"status": "ok"}
    except (httpx.HTTPError, ValueError):
        return False
