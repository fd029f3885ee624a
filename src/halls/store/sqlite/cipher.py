"""Encryption at rest for the SQLite backend: SQLCipher, when a key is set.

With ``storage.encryption_key`` set, every connection to a store file goes
through SQLCipher (the ``sqlcipher3`` binding, the ``halls[encryption]``
extra) instead of the standard library's sqlite3: each page of the database
and of its WAL is encrypted (AES-256) and authenticated (HMAC-SHA512), so no
memory's text is in the files in the clear.

SQLCipher turns a passphrase into the page key with PBKDF2-HMAC-SHA512
(256,000 iterations, salted by the file's first 16 bytes): about a third of
a second, once per connection. A store has one writer and one reader per
thread, so ``store_key`` derives the key once per opened store, exactly as
SQLCipher would, and each connection is given the raw key and salt. The
file stays a standard SQLCipher 4 database: ``PRAGMA key = '<passphrase>'``
in any SQLCipher 4 shell opens it.

The key is never logged, put in an error or returned: the errors here name
the setting, not its value.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
from pathlib import Path
from types import ModuleType

from halls.errors import EncryptionError

_MODULE = "sqlcipher3.dbapi2"
# SQLCipher 4's defaults (PRAGMA cipher_compatibility = 4).
_KDF_ITER = 256_000
_SALT_BYTES = 16
_KEY_BYTES = 32
_PLAIN_HEADER = b"SQLite format 3\x00"


def driver(encrypted: bool) -> ModuleType:
    """The DB-API module for a store: sqlite3, or SQLCipher's when encrypted."""
    if not encrypted:
        return sqlite3
    try:
        from sqlcipher3 import dbapi2
    except ImportError:
        raise EncryptionError(
            "storage.encryption_key is set but SQLCipher is not installed: "
            "pip install 'halls[encryption]'"
        ) from None
    return dbapi2


def is_error(err: BaseException, name: str = "Error") -> bool:
    """Whether ``err`` is the driver exception ``name`` of sqlite3 or (if loaded) SQLCipher."""
    if isinstance(err, getattr(sqlite3, name)):
        return True
    cipher = sys.modules.get(_MODULE)
    return cipher is not None and isinstance(err, getattr(cipher, name))


def is_plain(path: Path) -> bool:
    """Whether ``path`` starts as an unencrypted SQLite file does."""
    try:
        with path.open("rb") as f:
            return f.read(len(_PLAIN_HEADER)) == _PLAIN_HEADER
    except OSError:
        return False


def store_key(path: Path, passphrase: str) -> str:
    """The ``PRAGMA key`` value (raw key and salt) SQLCipher derives from ``passphrase``.

    An existing file's salt is its first 16 bytes (SQLCipher keeps them in
    the clear); a new file gets a random one, which SQLCipher writes there.
    """
    salt = b""
    if path.exists() and path.stat().st_size >= _SALT_BYTES:
        with path.open("rb") as f:
            salt = f.read(_SALT_BYTES)
    if len(salt) < _SALT_BYTES:
        salt = os.urandom(_SALT_BYTES)
    key = hashlib.pbkdf2_hmac("sha512", passphrase.encode(), salt, _KDF_ITER, _KEY_BYTES)
    return f"x'{key.hex()}{salt.hex()}'"


def wrong_key(path: Path) -> EncryptionError:
    """The error for a store file the key does not open, saying why when the file tells."""
    if is_plain(path):
        return EncryptionError(
            "the store is not encrypted but storage.encryption_key is set "
            "(an existing plain store is not encrypted in place)"
        )
    return EncryptionError("the store cannot be decrypted: storage.encryption_key is wrong")


def not_plain(path: Path) -> EncryptionError | None:
    """The error for a file that is not plain SQLite when no key is set, if it looks encrypted."""
    if path.exists() and path.stat().st_size > 0 and not is_plain(path):
        return EncryptionError(
            "the store is not a plain SQLite file: it may be encrypted "
            "(set storage.encryption_key) or damaged"
        )
    return None
