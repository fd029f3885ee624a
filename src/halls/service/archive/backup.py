"""Backup: the backend's own consistent copy of a store's file(s), if it has one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from halls.errors import Conflict, InvalidInput
from halls.store.base import Store, offers_file_backup


def backup(s: Store, out: Path, *, overwrite: bool) -> int:
    """A consistent copy of the store's file(s) at ``out``, taken while it serves.

    Returns the copy's size in bytes. A backend without an online file
    copy says so (``InvalidInput``); ``export`` works on every backend.
    """
    if not offers_file_backup(s):
        raise InvalidInput(
            "this storage backend has no file backup: use export (halls export, "
            "POST /export) for a store, or on PostgreSQL pg_dump for the whole database"
        )
    if out.exists() and not overwrite:
        raise Conflict(f"{out.name} already exists; use overwrite (--overwrite) to replace it")
    # Copied beside the target, then renamed: a failed copy never leaves
    # a half-written file under the requested name.
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    os.close(fd)
    try:
        s.backup(Path(tmp))
        os.replace(tmp, out)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return out.stat().st_size
