"""The one error tree of halls.

Every failure the core reports is a ``HallsError``; adapters (HTTP, CLI,
MCP) translate these at the edge. The core never speaks in HTTP codes::

    HallsError
    ├── InvalidInput          bad arguments: empty content, bad id, bad time
    │   ├── InvalidStoreName  a store name outside [a-z0-9][a-z0-9_-]{0,63}
    │   └── InvalidArchive    an archive damaged, altered, or its passphrase wrong
    ├── Forbidden             the token does not grant this (store, write, admin)
    ├── NotFound              no such record
    │   └── StoreNotFound     no such store (stores are made by a first write)
    ├── Conflict              the request clashes with the current state
    │   ├── EmbedderMismatch  the store was embedded by another model
    │   └── AlreadyExists     a record with that id is already stored
    ├── EmbeddingFailed       the embedder could not embed (remote down, ...)
    ├── ConsolidationFailed   a consolidation run aborted (its engine is down, ...)
    ├── StoreUnavailable      the storage backend failed (busy, disk full, corrupt, ...)
    │   └── EncryptionError   a store the encryption key does not open (or no SQLCipher)
    └── DamagedRecord         one stored record cannot be served (lists skip it)

Messages are written for the user who sent the request: they never carry
file paths or stack traces.
"""

from __future__ import annotations


class HallsError(Exception):
    """Base of every error halls raises on purpose."""

    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(HallsError):
    code = "invalid_input"


class InvalidStoreName(InvalidInput):
    code = "invalid_store_name"


class InvalidArchive(InvalidInput):
    """An archive that cannot be imported as given; nothing was imported."""

    code = "invalid_archive"


class Forbidden(HallsError):
    code = "forbidden"


class NotFound(HallsError):
    code = "not_found"


class StoreNotFound(NotFound):
    code = "store_not_found"


class Conflict(HallsError):
    code = "conflict"


class EmbedderMismatch(Conflict):
    code = "embedder_mismatch"


class AlreadyExists(Conflict):
    code = "already_exists"


class EmbeddingFailed(HallsError):
    code = "embedding_failed"


class ConsolidationFailed(HallsError):
    code = "consolidation_failed"


class StoreUnavailable(HallsError):
    """A backend failure, translated by the store so no driver exception climbs above it."""

    code = "store_unavailable"


class EncryptionError(StoreUnavailable):
    """A store the configured ``storage.encryption_key`` does not open, or no SQLCipher."""

    code = "encryption_error"


class DamagedRecord(HallsError):
    """A stored record that cannot be read back whole (e.g. metadata written before
    halls checked it); listings, searches and exports skip it, and it can be deleted."""

    code = "damaged_record"
    id: str = ""

    @classmethod
    def of(cls, id: str) -> DamagedRecord:
        # The constructor takes a message, as every HallsError's does, so that
        # halls.client can rebuild it from an error body.
        err = cls(f"record {id} is stored in a form halls cannot serve; delete it")
        err.id = id
        return err


__all__ = [
    "AlreadyExists",
    "Conflict",
    "ConsolidationFailed",
    "DamagedRecord",
    "EmbedderMismatch",
    "EmbeddingFailed",
    "Forbidden",
    "EncryptionError",
    "HallsError",
    "InvalidArchive",
    "InvalidInput",
    "InvalidStoreName",
    "NotFound",
    "StoreNotFound",
    "StoreUnavailable",
]
