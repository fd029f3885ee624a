"""The audit log: every mutation, appended to a tamper-evident hash chain.

One log per data directory, ``<data_dir>/audit.jsonl``: a JSON object per
line with the time, store, action, ids, the id of the token that asked
(never the token; ``None`` on an open server, ``"cli"``, ``"scheduler"``),
the previous entry's hash and its own. An entry's hash is the SHA-256 of
the previous hash and the entry's canonical JSON, so changing, removing or
reordering any entry breaks every hash after it; ``verify`` names the first
entry that does not follow. It never holds the content of a memory: ids
only, so that a purge leaves nothing of what it purged here.

Appends take a lock in this process and an ``flock`` on the file, so that
a server and a CLI command writing beside it keep one chain; each append is
fsynced before the mutation is answered.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

from halls.errors import StoreUnavailable
from halls.models import to_datetime

FILE_NAME = "audit.jsonl"
GENESIS = "0" * 64

# Who is asking, set by the adapter for the length of a request or command.
actor: contextvars.ContextVar[str | None] = contextvars.ContextVar("halls_actor", default=None)
# Whether they may delete for good (an admin token). Unset, the caller is the
# operator (the CLI, a library call): they own the files anyway. A forget
# flag records it, so that the run that acts on the flag purges only for an admin.
actor_admin: contextvars.ContextVar[bool] = contextvars.ContextVar("halls_admin", default=True)

__all__ = ["AuditLog", "acting_as", "actor", "actor_admin"]


@contextmanager
def acting_as(token_id: str | None, *, admin: bool = True) -> Iterator[None]:
    """Attribute the mutations made inside to ``token_id``, an admin or not."""
    reset = actor.set(token_id)
    reset_admin = actor_admin.set(admin)
    try:
        yield
    finally:
        actor_admin.reset(reset_admin)
        actor.reset(reset)


def _canonical(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _hash(prev: str, entry: dict[str, Any]) -> str:
    body = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256(prev.encode() + b"\n" + _canonical(body)).hexdigest()


class AuditLog:
    """Append to and read the hash chain of one data directory."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME
        self._lock = threading.Lock()

    def record(
        self, store: str | None, action: str, ids: Sequence[str] = (), now: float = 0.0
    ) -> dict[str, Any]:
        """Append one entry (time, store, action, ids, token id) to the chain."""
        entry: dict[str, Any] = {
            "time": to_datetime(now).isoformat(),
            "store": store,
            "action": action,
            "ids": list(ids),
            "token": actor.get(),
        }
        try:
            return self._append(entry)
        except OSError as err:
            # The change is made but unrecorded: say so, rather than answer OK.
            raise StoreUnavailable(
                f"the audit log cannot be written ({err.strerror or 'system error'})"
            ) from None

    def _append(self, entry: dict[str, Any]) -> dict[str, Any]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path, "a+b") as f:
            if fcntl is not None:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            try:
                last = _last_line(f)
                prev = json.loads(last)["hash"] if last else GENESIS
                entry["seq"] = (json.loads(last)["seq"] + 1) if last else 1
                entry["prev"] = prev
                entry["hash"] = _hash(prev, entry)
                f.seek(0, os.SEEK_END)
                f.write(_canonical(entry) + b"\n")
                f.flush()
                os.fsync(f.fileno())
            finally:
                if fcntl is not None:
                    fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        return entry

    def entries(self) -> Iterator[dict[str, Any]]:
        """Every entry, oldest first (a line that is not JSON reads as ``{"broken": n}``)."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as f:
            for n, line in enumerate(f, start=1):
                try:
                    entry = json.loads(line)
                except ValueError:
                    entry = None
                yield entry if isinstance(entry, dict) else {"broken": n}

    def page(self, store: str | None, limit: int, offset: int) -> list[dict[str, Any]]:
        """Entries newest first, of one store (all when None)."""
        found = [e for e in self.entries() if store is None or e.get("store") == store]
        found.reverse()
        return found[offset : offset + limit]

    def verify(self) -> tuple[int, int | None]:
        """(entries checked, seq or line of the first broken entry or None)."""
        prev, n = GENESIS, 0
        for n, entry in enumerate(self.entries(), start=1):  # noqa: B007 - n is returned
            if (
                "broken" in entry
                or entry.get("seq") != n
                or entry.get("prev") != prev
                or entry.get("hash") != _hash(prev, entry)
            ):
                return n - 1, n
            prev = entry["hash"]
        return n, None


def _last_line(f: Any) -> bytes:
    """The last non-empty line of a file open for reading, without reading it all."""
    f.seek(0, os.SEEK_END)
    end = f.tell()
    size = min(end, 4096)
    while True:
        f.seek(end - size)
        tail = f.read(size).rstrip(b"\n")
        cut = tail.rfind(b"\n")
        if cut >= 0 or size == end:
            return tail[cut + 1 :] if cut >= 0 else tail
        size = min(end, size * 2)
