"""The archive format of ``halls export``: JSON Lines, optionally encrypted.

Pure byte handling, no store: ``exporter`` decides what goes in.

A plain archive is UTF-8 JSON Lines::

    {"kind": "header", "format": "halls-archive", "version": 1, "store": ..., "counts": {...}, ...}
    {"kind": "short", "record": {...}, "vector": "<base64 float32>", ...}
    ...
    {"kind": "footer", "counts": {...}, "sha256": "<hex of every byte before this line>"}

The footer's checksum and counts let a reader refuse a damaged or cut
archive; they are no defence against someone who rewrites both, which is
what encryption is for.

An encrypted archive is one clear JSON line (the format, the cipher, the
scrypt parameters and salt, a nonce prefix) and then the plain archive in
AES-256-GCM chunks (the STREAM construction): each chunk's nonce is the
prefix, its counter and a last-chunk flag, and every chunk authenticates the
clear header line as associated data. So a flipped byte anywhere, a chunk
moved, dropped or added, a cut tail or an edited header fails
authentication. A 16-byte check tag after the header (an empty message under
its own nonce) tells a wrong passphrase from a damaged chunk.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
from collections.abc import Iterator
from typing import IO, Any

import numpy as np
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from halls.errors import InvalidArchive, InvalidInput

# Record kinds in the order an archive holds them (and an import writes them),
# and those that carry a vector.
KINDS = ("journal", "short", "near", "long", "edge", "brief", "flag", "run")
SEARCHABLE = ("short", "near", "long")

FORMAT = "halls-archive"
ENCRYPTED_FORMAT = "halls-archive-encrypted"
VERSION = 1

# scrypt at N=2^17, r=8 (128 MiB, ~0.5 s): the cost OWASP suggests for
# passwords; a stolen archive costs an attacker that much per guess.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**17, 8, 1
# Archives from elsewhere may choose their own cost, within these bounds (a
# hostile header must not make the reader allocate gigabytes).
_MAX_N, _MAX_R, _MAX_P = 2**20, 16, 4
CHUNK = 64 * 1024
_TAG = 16
_PREFIX = 7
_MORE, _LAST, _CHECK = 0, 1, 2
# The longest line a reader accepts: a record is at most 32k characters, but
# a run record lists every action of a run.
MAX_LINE = 64 * 1024 * 1024


def encode_vector(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: Any, dim: int) -> np.ndarray:
    try:
        raw = base64.b64decode(text, validate=True)
    except (ValueError, TypeError):
        raise InvalidArchive("a vector is not valid base64") from None
    if len(raw) != 4 * dim:
        raise InvalidArchive(f"a vector does not have the archive's {dim} dimensions")
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class ArchiveWriter:
    """Writes the lines of a plain archive to ``sink`` and closes it with the footer."""

    def __init__(self, sink: IO[bytes]) -> None:
        self._sink = sink
        self._hash = hashlib.sha256()
        self.counts: dict[str, int] = {}

    def header(self, fields: dict[str, Any]) -> None:
        self._write({"kind": "header", "format": FORMAT, "version": VERSION, **fields})

    def record(self, kind: str, fields: dict[str, Any]) -> None:
        self._write({"kind": kind, **fields})
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def footer(self) -> None:
        footer = {"kind": "footer", "counts": self.counts, "sha256": self._hash.hexdigest()}
        self._sink.write(_line(footer))

    def _write(self, obj: dict[str, Any]) -> None:
        data = _line(obj)
        self._hash.update(data)
        self._sink.write(data)


# -- encryption --


def _derive(passphrase: str, salt: bytes, n: int, r: int, p: int) -> AESGCM:
    if not passphrase:
        raise InvalidInput("the passphrase must not be empty")
    key = Scrypt(salt=salt, length=32, n=n, r=r, p=p).derive(passphrase.encode())
    return AESGCM(key)


def _nonce(prefix: bytes, counter: int, flag: int) -> bytes:
    return prefix + struct.pack(">IB", counter, flag)


class EncryptingSink:
    """A binary sink that encrypts what is written into ``out`` in authenticated chunks."""

    def __init__(self, out: IO[bytes], passphrase: str) -> None:
        salt, self._prefix = os.urandom(16), os.urandom(_PREFIX)
        head = {
            "format": ENCRYPTED_FORMAT,
            "version": VERSION,
            "cipher": "AES-256-GCM",
            "kdf": {
                "name": "scrypt",
                "n": SCRYPT_N,
                "r": SCRYPT_R,
                "p": SCRYPT_P,
                "salt": base64.b64encode(salt).decode(),
            },
            "nonce_prefix": base64.b64encode(self._prefix).decode(),
            "chunk": CHUNK,
        }
        self._aad = _line(head)
        self._aead = _derive(passphrase, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
        self._out = out
        self._buf = bytearray()
        self._counter = 0
        out.write(self._aad)
        out.write(self._aead.encrypt(_nonce(self._prefix, 0, _CHECK), b"", self._aad))

    def write(self, data: bytes) -> int:
        self._buf += data
        # Keep at least one byte back: the last chunk is only known at close.
        while len(self._buf) > CHUNK:
            self._frame(bytes(self._buf[:CHUNK]), _MORE)
            del self._buf[:CHUNK]
        return len(data)

    def close(self) -> None:
        self._frame(bytes(self._buf), _LAST)
        self._buf.clear()

    def _frame(self, plain: bytes, flag: int) -> None:
        sealed = self._aead.encrypt(_nonce(self._prefix, self._counter, flag), plain, self._aad)
        self._out.write(struct.pack(">I", len(sealed)) + sealed)
        self._counter += 1


def _decrypting(source: IO[bytes], head_line: bytes, passphrase: str | None) -> Iterator[bytes]:
    """The plaintext chunks of an encrypted archive whose first line was ``head_line``."""
    if not passphrase:
        raise InvalidArchive("the archive is encrypted: give its passphrase")
    try:
        head = json.loads(head_line)
        kdf = head["kdf"]
        n, r, p = int(kdf["n"]), int(kdf["r"]), int(kdf["p"])
        salt = base64.b64decode(kdf["salt"], validate=True)
        prefix = base64.b64decode(head["nonce_prefix"], validate=True)
        chunk = int(head["chunk"])
    except (ValueError, KeyError, TypeError):
        raise InvalidArchive("the encrypted archive's header is damaged") from None
    if head.get("version") != VERSION or head.get("cipher") != "AES-256-GCM":
        raise InvalidArchive("the archive's encryption is of an unknown version")
    if (
        kdf.get("name") != "scrypt"
        or not (2 <= n <= _MAX_N and n & (n - 1) == 0)
        or not (1 <= r <= _MAX_R and 1 <= p <= _MAX_P)
        or len(salt) < 16
        or len(prefix) != _PREFIX
        or not (1 <= chunk <= 16 * CHUNK)
    ):
        raise InvalidArchive("the encrypted archive's header is damaged")
    aead = _derive(passphrase, salt, n, r, p)
    check = source.read(_TAG)
    try:
        aead.decrypt(_nonce(prefix, 0, _CHECK), check, head_line)
    except InvalidTag:
        raise InvalidArchive(
            "wrong passphrase (or the archive's header was altered): nothing was imported"
        ) from None
    counter = 0
    while True:
        size = source.read(4)
        if len(size) < 4:
            raise InvalidArchive("the archive is truncated (its last chunk is missing)")
        (length,) = struct.unpack(">I", size)
        if not _TAG <= length <= chunk + _TAG:
            raise InvalidArchive(f"the archive was modified or damaged (chunk {counter})")
        sealed = source.read(length)
        if len(sealed) != length:
            # The lengths are not authenticated themselves: a short read
            # means the length or the tail was altered.
            raise InvalidArchive(f"the archive was modified or damaged (chunk {counter})")
        plain = None
        for flag in (_MORE, _LAST):
            try:
                plain = aead.decrypt(_nonce(prefix, counter, flag), sealed, head_line)
            except InvalidTag:
                continue
            break
        if plain is None:
            raise InvalidArchive(f"the archive was modified or damaged (chunk {counter})")
        yield plain
        counter += 1
        if flag == _LAST:
            if source.read(1):
                raise InvalidArchive("the archive has data after its last chunk")
            return


# -- reading --


def _lines(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Split a stream of chunks into lines (newline kept), refusing overlong ones."""
    pending = bytearray()
    for chunk in chunks:
        pending += chunk
        start = 0
        while True:
            end = pending.find(b"\n", start)
            if end < 0:
                break
            yield bytes(pending[start : end + 1])
            start = end + 1
        del pending[:start]
        if len(pending) > MAX_LINE:
            raise InvalidArchive("the archive holds a line longer than any record")
    if pending:
        yield bytes(pending)


def _plain_chunks(source: IO[bytes], first: bytes) -> Iterator[bytes]:
    yield first
    while chunk := source.read(CHUNK):
        yield chunk


def is_encrypted(source: IO[bytes]) -> bool:
    """Whether the archive opening ``source`` is an encrypted one (reads its first line)."""
    try:
        opening = json.loads(source.readline(4096))
    except ValueError:
        return False
    return isinstance(opening, dict) and opening.get("format") == ENCRYPTED_FORMAT


def read_archive(source: IO[bytes], passphrase: str | None) -> Iterator[dict[str, Any]]:
    """Every line of the archive as a dict, the header first; the footer is checked, not yielded.

    Raises ``InvalidArchive`` at the first problem: a wrong passphrase, a
    failed authentication, a bad checksum, a count that does not add up, a
    line that is not JSON, a missing footer. A caller that must not act on a
    damaged archive reads it to the end before acting.
    """
    first = source.readline(MAX_LINE)
    try:
        opening = json.loads(first)
    except ValueError:
        raise InvalidArchive("this is not a halls archive") from None
    if not isinstance(opening, dict):
        raise InvalidArchive("this is not a halls archive")
    if opening.get("format") == ENCRYPTED_FORMAT:
        chunks = _decrypting(source, first, passphrase)
    elif opening.get("kind") == "header" and opening.get("format") == FORMAT:
        chunks = _plain_chunks(source, first)
    else:
        raise InvalidArchive("this is not a halls archive")
    digest = hashlib.sha256()
    counts: dict[str, int] = {}
    footer: dict[str, Any] | None = None
    for n, line in enumerate(_lines(chunks)):
        if footer is not None:
            raise InvalidArchive("the archive has data after its footer")
        try:
            obj = json.loads(line)
        except ValueError:
            raise InvalidArchive(f"line {n + 1} of the archive is not JSON (damaged?)") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
            raise InvalidArchive(f"line {n + 1} of the archive is not a record")
        kind = obj["kind"]
        if n == 0:
            if kind != "header" or obj.get("format") != FORMAT:
                raise InvalidArchive("the archive does not start with its header")
            if obj.get("version") != VERSION:
                raise InvalidArchive(
                    f"the archive is format version {obj.get('version')}; "
                    f"this halls reads version {VERSION}"
                )
        elif kind == "footer":
            footer = obj
            continue
        elif kind == "header":
            raise InvalidArchive(f"line {n + 1} of the archive is a second header")
        else:
            counts[kind] = counts.get(kind, 0) + 1
        digest.update(line)
        yield obj
    if footer is None:
        raise InvalidArchive("the archive is truncated (no footer)")
    if footer.get("sha256") != digest.hexdigest():
        raise InvalidArchive("the archive was modified or damaged (its checksum does not match)")
    if footer.get("counts") != counts:
        raise InvalidArchive("the archive was modified or damaged (its counts do not match)")
