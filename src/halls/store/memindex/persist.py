"""An in-memory index's arrays in one file beside its store, written atomically.

So that a restart reads the index back (~20 ms per 100k rows) instead of
rebuilding it from every row (seconds per 100k rows). The file is a cache,
never trusted: ``read`` returns None for anything it cannot vouch for (not
this format, another version, a header or array that fails its checksum, a
size that is not the one written), and the caller rebuilds.

Layout: 8 bytes of magic, the header's length and CRC-32 (4 bytes each),
the header (JSON: what the index says of itself, its ``label``, and each
array's dtype, shape, offset and checksum), then the arrays end to end (they
are read into memory, not mapped: no alignment, so every byte is checked). An array's checksum is the sum of its 64-bit words
(modulo 2^64), with the last partial word padded: one pass at memory speed
(a CRC-32 of 190 MB took 190 ms), and any flipped bit or truncation shows.

Written to a temporary file in the same folder, flushed to disk and renamed
over the old one, so a reader sees the old file or the new one, whole.
``discard`` overwrites a file with zeros before unlinking it: a file that
held the vector or words of a row deleted since must not keep them on disk.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

_MAGIC = b"HALLSIX\x01"
VERSION = 1
_PREFIX = struct.Struct("<8sII")
_ZEROS = bytes(1 << 20)


def checksum(data: np.ndarray) -> int:
    """The sum of the array's bytes as little-endian 64-bit words, modulo 2^64."""
    raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    whole = len(raw) // 8 * 8
    total = int(np.add.reduce(raw[:whole].view("<u8"), dtype=np.uint64)) if whole else 0
    if whole < len(raw):
        tail = bytes(raw[whole:]) + bytes(8 - (len(raw) - whole))
        total += int.from_bytes(tail, "little")
    return total % (1 << 64)


def write(path: Path, label: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``arrays`` and ``label`` to ``path`` atomically (temp file, fsync, rename)."""
    specs: list[dict[str, Any]] = []
    offset = 0
    ready = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
    for name, a in ready.items():
        spec = {"name": name, "dtype": a.dtype.str, "shape": list(a.shape), "offset": offset}
        spec["sum"] = checksum(a)
        specs.append(spec)
        offset += a.nbytes
    body = {"version": VERSION, "label": dict(label), "arrays": specs, "size": offset}
    header = json.dumps(body, sort_keys=True).encode()
    start = _PREFIX.size + len(header)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(_PREFIX.pack(_MAGIC, len(header), zlib.crc32(header)))
            f.write(header)
            for spec, a in zip(specs, ready.values(), strict=True):
                f.seek(start + spec["offset"])
                f.write(memoryview(a.reshape(-1).view(np.uint8)))
            f.truncate(start + offset)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_dir(path.parent)


def _sync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a folder; the rename still stands
    finally:
        os.close(fd)


def _header(f: Any) -> dict[str, Any] | None:
    prefix = f.read(_PREFIX.size)
    if len(prefix) != _PREFIX.size:
        return None
    magic, length, crc = _PREFIX.unpack(prefix)
    if magic != _MAGIC or length > 1 << 20:
        return None
    header = f.read(length)
    if len(header) != length or zlib.crc32(header) != crc:
        return None
    body = json.loads(header)
    if not isinstance(body, dict) or body.get("version") != VERSION:
        return None
    body["start"] = _PREFIX.size + length
    return body


def label_of(path: Path) -> dict[str, Any] | None:
    """The label a file was written with, or None (no file, or not one of ours)."""
    try:
        with open(path, "rb") as f:
            body = _header(f)
    except (OSError, ValueError):
        return None
    return None if body is None else dict(body["label"])


Capacity = Callable[[str, int], int]
"""capacity(name, rows): how many rows to allocate for an array read (room to grow)."""


def read(
    path: Path, capacity: Capacity | None = None
) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """(label, arrays) from ``path``, every checksum verified; None if it cannot be trusted.

    An array is read into a fresh buffer of ``capacity(name, rows)`` rows (its
    first rows the file's), so that the index can append without copying.
    """
    try:
        with open(path, "rb") as f:
            body = _header(f)
            if body is None or os.fstat(f.fileno()).st_size != body["start"] + body["size"]:
                return None
            arrays: dict[str, np.ndarray] = {}
            for spec in body["arrays"]:
                shape = tuple(int(d) for d in spec["shape"])
                dtype = np.dtype(spec["dtype"])
                rows = shape[0] if shape else 1
                room = max(rows, capacity(spec["name"], rows)) if capacity and shape else rows
                buf = np.empty((room, *shape[1:]) if shape else shape, dtype=dtype)
                data = buf[:rows] if shape else buf
                f.seek(body["start"] + int(spec["offset"]))
                if f.readinto(memoryview(data.reshape(-1).view(np.uint8))) != data.nbytes:
                    return None
                if checksum(data) != int(spec["sum"]):
                    return None
                arrays[spec["name"]] = buf
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return dict(body["label"]), arrays


def discard(path: Path) -> None:
    """Overwrite ``path`` with zeros, flush, and unlink it: no byte of it stays on disk."""
    try:
        with open(path, "r+b") as f:
            size = os.fstat(f.fileno()).st_size
            for start in range(0, size, len(_ZEROS)):
                f.write(_ZEROS[: min(len(_ZEROS), size - start)])
            f.flush()
            os.fsync(f.fileno())
    except FileNotFoundError:
        return
    path.unlink(missing_ok=True)
