"""halls — the Halls of Memory: a local-first memory server for LLM agents.

from halls import Memory
with Memory() as memory:
    memory.remember("Chad prefers absolute paths in configs", topic="prefs")
    hits = memory.search("how does Chad like paths written?")
"""

from typing import TYPE_CHECKING, Any

from halls.config import Settings, load_settings
from halls.errors import (
    Conflict,
    EmbedderMismatch,
    EmbeddingFailed,
    HallsError,
    InvalidInput,
    InvalidStoreName,
    NotFound,
    StoreNotFound,
)
from halls.models import (
    Brief,
    ForgetFlag,
    Hit,
    JournalEvent,
    LongFact,
    NewJournal,
    NewShort,
    OpenLoop,
    ShortEntry,
)

if TYPE_CHECKING:
    from halls.service import Memory

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Memory (the service, its store and index modules) loads on first use:
    # a CLI command that talks to a running server never needs it, and
    # importing it cost that command a third of its start-up.
    if name == "Memory":
        from halls.service import Memory

        return Memory
    raise AttributeError(f"module 'halls' has no attribute {name!r}")


__all__ = [
    "Brief",
    "Conflict",
    "EmbedderMismatch",
    "EmbeddingFailed",
    "ForgetFlag",
    "HallsError",
    "Hit",
    "InvalidInput",
    "InvalidStoreName",
    "JournalEvent",
    "LongFact",
    "Memory",
    "NewJournal",
    "NewShort",
    "NotFound",
    "OpenLoop",
    "Settings",
    "ShortEntry",
    "StoreNotFound",
    "__version__",
    "load_settings",
]
