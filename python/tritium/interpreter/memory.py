"""The interpreter's address space: kernel arguments mapped at fake, aligned
byte addresses, with vectorised gather/scatter and bounds checks.

Pointers in interpreted kernels are plain int64 byte addresses. Each argument
buffer gets its own range (256-byte aligned, with unmapped gaps between ranges)
so a stray pointer lands in no buffer and is reported, instead of silently
reading a neighbour. Data lives in the caller's memory: writes are visible to
the caller's arrays as soon as they happen (an array passed twice gets two
ranges over the same bytes).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_ALIGN = 256
_GAP = 1 << 16
_FIRST = 1 << 20


class OutOfBoundsError(IndexError):
    """An unmasked load/store/atomic touched an address outside every argument buffer."""


@dataclass
class Region:
    name: str
    base: int          # fake address of byte 0 of `data`
    data: np.ndarray   # uint8 view of the caller's memory
    owner: Any = field(repr=False, default=None)  # keeps the memory alive
    start: int = 0     # fake address of the array's first element

    def element(self, addr: int) -> str:
        """`name[i]`: the element at `addr`, counted in the array's itemsize from its first element."""
        size = getattr(self.owner, "itemsize", 1) or 1
        off = addr - self.start
        return f"{self.name}[{off // size}]" if off % size == 0 else f"{self.name} byte {off:+d}"

    @property
    def end(self) -> int:
        return self.base + self.data.size


def byte_view(arr: np.ndarray) -> tuple[np.ndarray, int]:
    """A writable uint8 view of every byte an (possibly strided) array can
    reach, and the offset of the array's first element inside that view."""
    if arr.size == 0:
        return np.zeros(0, np.uint8), 0
    if arr.flags.c_contiguous:
        return arr.reshape(-1).view(np.uint8), 0
    lo = sum(min(0, s * (n - 1)) for s, n in zip(arr.strides, arr.shape))
    hi = sum(max(0, s * (n - 1)) for s, n in zip(arr.strides, arr.shape)) + arr.itemsize
    start = arr.__array_interface__["data"][0] + lo
    buf = (ctypes.c_uint8 * (hi - lo)).from_address(start)
    return np.ctypeslib.as_array(buf), -lo


class MemoryMap:
    """Maps fake addresses to argument buffers; all checks are vectorised."""

    def __init__(self) -> None:
        self.regions: list[Region] = []
        self._next = _FIRST
        self._bases = np.zeros(0, np.int64)
        self._ends = np.zeros(0, np.int64)

    def register(self, name: str, arr: np.ndarray) -> int:
        """Map `arr`'s bytes; returns the fake address of its first element."""
        data, first = byte_view(arr)
        base = self._next
        self.regions.append(Region(name, base, data, arr, base + first))
        self._next = (base + data.size + _GAP + _ALIGN - 1) // _ALIGN * _ALIGN
        self._bases = np.array([r.base for r in self.regions], np.int64)
        self._ends = np.array([r.end for r in self.regions], np.int64)
        return base + first

    def find(self, addr: np.ndarray, nbytes: int) -> np.ndarray:
        """Region index of each address whose `nbytes` lie inside one region, else -1."""
        addr = np.asarray(addr, np.int64)
        if not self.regions:
            return np.full(addr.shape, -1, np.int64)
        idx = np.searchsorted(self._bases, addr, side="right") - 1
        safe = np.maximum(idx, 0)
        ok = (idx >= 0) & (addr >= self._bases[safe]) & (addr + nbytes <= self._ends[safe])
        return np.where(ok, idx, -1)

    def describe(self, addr: int) -> str:
        """Which buffer an address is in or nearest to, for error messages."""
        if not self.regions:
            return "no argument buffers are mapped"
        parts = []
        for r in self.regions:
            parts.append(f"'{r.name}' [{r.base:#x}, {r.end:#x})")
        near = min(self.regions, key=lambda r: 0 if r.base <= addr < r.end else
                   min(abs(addr - r.base), abs(addr - r.end)))
        where = "inside" if near.base <= addr < near.end else "nearest"
        return f"{where} buffer {near.name!r} [{near.base:#x}, {near.end:#x}) (offset {addr - near.base:+d}); " \
               f"mapped: {', '.join(parts)}"

    def check(self, addr: np.ndarray, active: np.ndarray, nbytes: int, what: str) -> np.ndarray:
        """Region of each active lane; raises on the first active lane that is
        out of bounds or misaligned. Inactive lanes get -1 and are never touched."""
        regions = np.where(active, self.find(addr, nbytes), -1)
        bad = active & (regions < 0)
        if bad.any():
            first = int(np.asarray(addr).reshape(-1)[np.flatnonzero(bad.reshape(-1))[0]])
            raise OutOfBoundsError(f"{what}: address {first:#x} ({nbytes} bytes) is out of bounds; "
                                   f"{self.describe(first)}")
        if nbytes > 1:
            mis = active & (np.asarray(addr) % nbytes != 0)
            if mis.any():
                first = int(np.asarray(addr).reshape(-1)[np.flatnonzero(mis.reshape(-1))[0]])
                raise OutOfBoundsError(f"{what}: address {first:#x} is not aligned to {nbytes} bytes; "
                                       f"{self.describe(first)}")
        return regions

    def gather(self, addr: np.ndarray, regions: np.ndarray, nbytes: int) -> np.ndarray:
        """Bytes at each lane with a region >= 0, as an (n, nbytes) uint8 array (zeros elsewhere)."""
        addr = np.asarray(addr, np.int64).reshape(-1)
        regions = regions.reshape(-1)
        out = np.zeros((addr.size, nbytes), np.uint8)
        span = np.arange(nbytes, dtype=np.int64)
        for ri in np.unique(regions[regions >= 0]):
            r = self.regions[ri]
            lanes = np.flatnonzero(regions == ri)
            out[lanes] = r.data[(addr[lanes] - r.base)[:, None] + span]
        return out

    def scatter(self, addr: np.ndarray, regions: np.ndarray, raw: np.ndarray) -> None:
        """Write rows of `raw` ((n, nbytes) uint8) at lanes with a region >= 0.
        With duplicate addresses the highest lane wins (NumPy's assignment order)."""
        addr = np.asarray(addr, np.int64).reshape(-1)
        regions = regions.reshape(-1)
        nbytes = raw.shape[1]
        span = np.arange(nbytes, dtype=np.int64)
        for ri in np.unique(regions[regions >= 0]):
            r = self.regions[ri]
            lanes = np.flatnonzero(regions == ri)
            r.data[(addr[lanes] - r.base)[:, None] + span] = raw[lanes]
