"""The Store contract's fixtures and builders, shared by the contract modules.

One parametrized fixture runs each contract test against each backend
(litestar style), opened the way the service opens it: through
``open_backend`` and ``Backend.open``. A new backend adds its settings to
``BACKENDS``; nothing here assumes a file path (``data_dir`` is handed to
the backend, which may ignore it) and every test gets a store name of its own.

Vectors here are small hand-made unit vectors (dimension 8), so that the
expected dense ranking is known exactly; the model is tested elsewhere.
"""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from halls.config import StorageSettings
from halls.models import (
    JournalEvent,
    LongFact,
    OpenLoop,
    SearchFilter,
    ShortEntry,
    new_id,
    to_datetime,
)
from halls.store import Backend, Store, open_backend

DIM = 8
T0 = 1_700_000_000.0  # a fixed epoch keeps every stored time exact in tests

# The backends under contract: SQLite plain, SQLite encrypted with SQLCipher
# when the extra is installed, and PostgreSQL. PostgreSQL's settings need the
# session's server (conftest's ``pg_dsn``), which starts only when a test asks for it.
BACKENDS = ["sqlite"]
if importlib.util.find_spec("sqlcipher3") is not None:
    BACKENDS.append("sqlite-encrypted")
BACKENDS.append("postgres")


def settings_of(backend: str, request: pytest.FixtureRequest) -> StorageSettings:
    if backend == "postgres":
        return StorageSettings(backend="postgres", dsn=request.getfixturevalue("pg_dsn"))
    if backend == "sqlite-encrypted":
        return StorageSettings(backend="sqlite", encryption_key="contract key")
    return StorageSettings(backend="sqlite")


@dataclass
class Opened:
    """One store of one backend; ``.open()`` opens another handle on it through a
    new ``Backend`` (as another process would)."""

    settings: StorageSettings
    data_dir: Path
    name: str
    backends: list[Backend] = field(default_factory=list)
    handles: list[Store] = field(default_factory=list)

    def backend(self) -> Backend:
        b = open_backend(self.settings, self.data_dir)
        self.backends.append(b)
        return b

    def open(self) -> Store:
        handle = self.backend().open(self.name, True)
        self.handles.append(handle)
        return handle

    def close(self, handle: Store) -> None:
        handle.close()
        self.handles.remove(handle)


@pytest.fixture(params=BACKENDS)
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opened]:
    """A fresh store of each backend; ``.open()`` gives another handle on it."""
    o = Opened(settings_of(request.param, request), tmp_path, f"c{uuid.uuid4().hex[:12]}")
    yield o
    for handle in o.handles:
        handle.close()
    for b in o.backends:
        b.close()


@pytest.fixture
def store(opened: Opened) -> Store:
    return opened.open()


# -- helpers --


def vec(*parts: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(parts)] = parts
    return v / np.linalg.norm(v)


def axis(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    return v


def at(offset: float) -> datetime:
    return to_datetime(T0 + offset)  # type: ignore[return-value]


def short(content: str, topic: str | None = None, when: float = 0.0, **extra: object) -> ShortEntry:
    return ShortEntry(
        id=new_id("short"),
        content=content,
        topic=topic,
        created_at=at(when),
        occurred_at=at(when),
        **extra,  # type: ignore[arg-type]
    )


def loop(intent: str, topic: str | None = None, when: float = 0.0) -> OpenLoop:
    return OpenLoop(
        id=new_id("near"), intent=intent, topic=topic, created_at=at(when), occurred_at=at(when)
    )


def fact(
    content: str, status: str = "active", topic: str | None = None, when: float = 0.0
) -> LongFact:
    return LongFact(
        id=new_id("long"),
        content=content,
        topic=topic,
        status=status,  # type: ignore[arg-type]
        first_seen=at(when),
        last_confirmed=at(when),
        created_at=at(when),
        occurred_at=at(when),
    )


def journal(content: str, when: float = 0.0) -> JournalEvent:
    return JournalEvent(
        id=new_id("journal"), content=content, created_at=at(when), occurred_at=at(when)
    )


ALL = SearchFilter()
WITH_HIDDEN = SearchFilter(include_superseded=True)


def text_ids(s: Store, terms: list[str], filt: SearchFilter = ALL, limit: int = 50) -> list[str]:
    return [m.id for m in s.text_search(terms, filt, limit)]


def vec_ids(s: Store, v: np.ndarray, filt: SearchFilter = ALL, limit: int = 50) -> list[str]:
    return [m.id for m in s.vector_search(v, filt, limit)]
