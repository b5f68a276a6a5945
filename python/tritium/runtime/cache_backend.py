"""The cache backend interface and the one-value form of an entry that
remote backends store (runtime/remote_cache.py chooses the backend).

A backend maps a key (hex digest) to an entry (file name → bytes). The local
disk cache (runtime/cache.py) is always there; a remote backend (Redis, or a
class of the user's) is shared by many processes and machines, and also
offers short build locks so one kernel is compiled by one process while the
others wait for its result."""
from __future__ import annotations

import hashlib
import json
import struct
from typing import Any

MAGIC = b"TRTMENT1"


class CacheBackend:
    """What the cache stack asks of a backend. `get` and `put` never raise
    for an unavailable store (they return None / do nothing, having warned);
    a backend without locks keeps these defaults (every lock is granted)."""

    name = "backend"

    def get(self, key: str) -> dict[str, bytes] | None:
        raise NotImplementedError

    def put(self, key: str, files: dict[str, bytes]) -> None:
        raise NotImplementedError

    def drop(self, key: str) -> None:
        """Removes a corrupt entry (its value did not decode)."""

    def acquire(self, key: str) -> tuple[bool, Any]:
        """Tries to take `key`'s build lock: (True, token) when this process
        may build, (False, None) while another process holds it."""
        return True, None

    def release(self, key: str, token: Any) -> None:
        pass

    def locked(self, key: str) -> bool:
        return False


# -- an entry as one value ---------------------------------------------------
#
# MAGIC, a little-endian u32 header length, a JSON header {name: [size,
# sha256]} in file order, then the files' bytes back to back. One value per
# entry: a reader sees a whole entry or none, and checksums catch the rest.

def encode_entry(files: dict[str, bytes]) -> bytes:
    header = json.dumps({name: [len(data), hashlib.sha256(data).hexdigest()] for name, data in files.items()})
    head = header.encode()
    return MAGIC + struct.pack("<I", len(head)) + head + b"".join(bytes(d) for d in files.values())


def decode_entry(blob: bytes) -> dict[str, bytes]:
    """The files of `encode_entry`'s value; ValueError for anything else."""
    if not isinstance(blob, (bytes, bytearray)) or blob[:len(MAGIC)] != MAGIC or len(blob) < len(MAGIC) + 4:
        raise ValueError("not a tritium cache value")
    (n,) = struct.unpack_from("<I", blob, len(MAGIC))
    start = len(MAGIC) + 4
    try:
        header = json.loads(bytes(blob[start:start + n]))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"unreadable header: {e}") from None
    if not isinstance(header, dict):
        raise ValueError("header is not an object")
    pos, files = start + n, {}
    for name, meta in header.items():
        if not (isinstance(meta, list) and len(meta) == 2 and type(meta[0]) is int and meta[0] >= 0
                and isinstance(meta[1], str)):
            raise ValueError(f"bad header entry for {name!r}")
        data = bytes(blob[pos:pos + meta[0]])
        if len(data) != meta[0] or hashlib.sha256(data).hexdigest() != meta[1]:
            raise ValueError(f"file {name!r} does not match its checksum")
        files[name] = data
        pos += meta[0]
    if pos != len(blob):
        raise ValueError("trailing bytes after the last file")
    return files


__all__ = ["CacheBackend", "decode_entry", "encode_entry"]
