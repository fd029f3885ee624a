"""Files on the MCP server's own machine: an archive written whole, or read."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from halls.errors import Conflict, InvalidInput


@contextmanager
def writing(path: str, overwrite: bool) -> Iterator[IO[bytes]]:
    """A file to fill, renamed to ``path`` only once complete (never a half file there)."""
    target = Path(path).expanduser()
    if target.exists() and not overwrite:
        raise Conflict(f"{target.name} already exists; pass overwrite to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)


def written(path: str, passphrase: str | None) -> dict[str, Any]:
    return {
        "path": path,
        "encrypted": bool(passphrase),
        "bytes": Path(path).expanduser().stat().st_size,
    }


def reading(path: str) -> Path:
    source = Path(path).expanduser()
    if not source.is_file():
        raise InvalidInput(f"no archive file at {source.name}")
    return source
