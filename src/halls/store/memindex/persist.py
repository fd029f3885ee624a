"""An in-memory index's arrays in one file beside its store, written atomically.

So that a restart maps the index back instead of rebuilding it from every
row (seconds per 100k rows). The file is a cache, never trusted: ``read``
returns None for anything it cannot vouch for (not this format, another
version, a header or array that fails its checksum, a size that is not the
one written), and the caller rebuilds.

Layout: 8 bytes of magic, the header's length and CRC-32 (4 bytes each),
the header (JSON: what the index says of itself, its ``label``, and each
array's dtype, rows, room, offset and checksum), then the arrays, each at a
64-byte boundary with room for more rows after its own: a hole in the file
(no disk block) that the index appends into. An array's checksum is the
sum of its rows' 64-bit words (modulo 2^64), the last partial word padded:
one pass at memory speed (a CRC-32 of 190 MB took 190 ms), and a flipped
bit or a cut shows.

``read`` maps the file copy-on-write (``MAP_PRIVATE``) instead of reading
it: reading 200 MB into fresh memory took 0.2-1.4 s on a busy 2-core
machine (page faults, not the copy), mapping it a few ms, and the float32
rows a search only rescores are never touched. Appends land in private
pages; the file itself is never written in place (a new one is renamed
over it, or it is unlinked), so a mapping never sees it change.
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import struct
import weakref
import zlib
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

_MAGIC = b"HALLSIX\x02"
VERSION = 2
_ALIGN = 64
_PREFIX = struct.Struct("<8sII")

# From this many 64-bit words (64 MB) a checksum is summed on two threads.
_SPLIT_WORDS = 1 << 23
_SUMS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="halls-checksum")

Capacity = Callable[[str, int], int]
"""capacity(name, rows): how many rows an array gets room for in the file (to grow into)."""


def _sum(words: np.ndarray) -> int:
    return int(np.add.reduce(words, dtype=np.uint64))


def checksum(data: np.ndarray) -> int:
    """The sum of the array's bytes as little-endian 64-bit words, modulo 2^64.

    A large array is summed in two halves on two threads (numpy lets the GIL
    go): at 1M rows the float32 matrix alone is 1.5 GB.
    """
    raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    whole = len(raw) // 8 * 8
    words = raw[:whole].view("<u8")
    if len(words) >= _SPLIT_WORDS:
        half = _SUMS.submit(_sum, words[len(words) // 2 :])
        total = _sum(words[: len(words) // 2]) + half.result()
    else:
        total = _sum(words) if whole else 0
    if whole < len(raw):
        tail = bytes(raw[whole:]) + bytes(8 - (len(raw) - whole))
        total += int.from_bytes(tail, "little")
    return total % (1 << 64)


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def write(
    path: Path,
    label: Mapping[str, Any],
    arrays: Mapping[str, np.ndarray],
    capacity: Capacity | None = None,
) -> None:
    """Write ``arrays`` and ``label`` to ``path`` atomically (temp file, fsync, rename)."""
    specs: list[dict[str, Any]] = []
    offset = 0
    ready = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
    for name, a in ready.items():
        rows = a.shape[0]
        room = max(rows, capacity(name, rows)) if capacity else rows
        spec = {"name": name, "dtype": a.dtype.str, "shape": list(a.shape), "room": room}
        spec.update(offset=offset, sum=checksum(a))
        specs.append(spec)
        width = int(np.prod(a.shape[1:])) if a.ndim > 1 else 1
        offset = _aligned(offset + room * width * a.dtype.itemsize)
    body = {"version": VERSION, "label": dict(label), "arrays": specs, "size": offset}
    header = json.dumps(body, sort_keys=True).encode()
    start = _aligned(_PREFIX.size + len(header))
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(_PREFIX.pack(_MAGIC, len(header), zlib.crc32(header)))
            f.write(header)
            for spec, a in zip(specs, ready.values(), strict=True):
                f.seek(start + spec["offset"])
                f.write(a.reshape(-1).view(np.uint8).data)
            f.truncate(start + offset)  # the room past the last rows: a hole
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
    body["start"] = _aligned(_PREFIX.size + length)
    return body


def label_of(path: Path) -> dict[str, Any] | None:
    """The label a file was written with, or None (no file, or not one of ours)."""
    try:
        with open(path, "rb") as f:
            body = _header(f)
    except (OSError, ValueError):
        return None
    return None if body is None else dict(body["label"])


def regions(path: Path) -> dict[str, tuple[int, int]]:
    """Where each array's rows lie in the file: name -> (offset, bytes). For tests."""
    with open(path, "rb") as f:
        body = _header(f)
    assert body is not None
    out = {}
    for spec in body["arrays"]:
        size = int(np.prod(spec["shape"])) * np.dtype(spec["dtype"]).itemsize
        out[spec["name"]] = (body["start"] + int(spec["offset"]), size)
    return out


Read = tuple[dict[str, Any], dict[str, np.ndarray], dict[str, int]]
"""(label, arrays, the checksums of the arrays left to check later, by name)."""


def read(path: Path, later: Collection[str] = ()) -> Read | None:
    """(label, arrays, checksums left) mapped from ``path``; None if it cannot be trusted.

    Every array's checksum is verified but those named in ``later``, whose
    expected sums are returned for the caller to verify (``checksum``) off
    the request path. Each array has its room: ``len`` is the rows it may
    grow to, its first ``shape[0]`` rows (as written) are the file's.
    """
    left: dict[str, int] = {}
    try:
        with open(path, "rb") as f:
            body = _header(f)
            size = os.fstat(f.fileno()).st_size
            if body is None or size != body["start"] + body["size"] or size == 0:
                return None
            mapped = _map(f.fileno(), size)
        arrays: dict[str, np.ndarray] = {}
        for spec in body["arrays"]:
            shape = tuple(int(d) for d in spec["shape"])
            room, dtype = int(spec["room"]), np.dtype(spec["dtype"])
            width = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            if not shape or room < shape[0]:
                return None
            at = body["start"] + int(spec["offset"])
            if at + room * width * dtype.itemsize > size:
                return None
            if room * width:
                buf = np.frombuffer(mapped, dtype=dtype, count=room * width, offset=at)
                buf = buf.reshape((room, *shape[1:]))
            else:
                buf = np.zeros((room, *shape[1:]), dtype=dtype)
            if spec["name"] in later:
                left[spec["name"]] = int(spec["sum"])
            elif checksum(buf[: shape[0]]) != int(spec["sum"]):
                return None
            arrays[spec["name"]] = buf
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return dict(body["label"]), arrays, left


def _map(fd: int, size: int) -> Any:
    """The file mapped copy-on-write; unmapped when the last array over it goes.

    Through libc, not Python's ``mmap``, which keeps a duplicate of the
    descriptor open while the mapping lives (until Python 3.13's
    ``trackfd``): two more descriptors for every open store, where a server
    bounds them (``storage.max_open_stores``).
    """
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    prot = mmap.PROT_READ | mmap.PROT_WRITE
    addr = libc.mmap(None, size, prot, mmap.MAP_PRIVATE, fd, 0)
    if addr is None or addr == ctypes.c_void_p(-1).value:
        raise OSError(ctypes.get_errno(), "mmap failed")
    mapped = (ctypes.c_char * size).from_address(addr)
    weakref.finalize(mapped, libc.munmap, addr, size)
    return mapped


def discard(path: Path) -> None:
    """Unlink ``path``: no file of the store holds what it held any more.

    Not overwritten first: a process may have it mapped, and would read the
    zeros. Its blocks are freed when the last mapping goes, as a deleted
    store's file's are.
    """
    path.unlink(missing_ok=True)
