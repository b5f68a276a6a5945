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

from .errors import InterpreterError

_ALIGN = 256
_GAP = 1 << 16
_FIRST = 1 << 20


class OutOfBoundsError(InterpreterError, IndexError):
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
        self._word_views: dict[tuple[int, int], np.ndarray] = {}

    def register(self, name: str, arr: np.ndarray) -> int:
        """Map `arr`'s bytes; returns the fake address of its first element."""
        data, first = byte_view(arr)
        base = self._next
        self.regions.append(Region(name, base, data, arr, base + first))
        # the gap after a buffer is as large as the buffer: a stray lane that
        # overshoots by less than the whole buffer lands nowhere, and is reported
        self._next = (base + data.size + max(_GAP, data.size) + _ALIGN - 1) // _ALIGN * _ALIGN
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

    def locate(self, addr: np.ndarray, active: np.ndarray, nbytes: int) -> int | np.ndarray:
        """Where the active lanes of an access are: one region index when they
        all lie in one region (the usual case, told from their extent alone),
        else the region of each lane (-1 outside every region, or inactive)."""
        a = addr.reshape(-1)
        act = active.reshape(-1)
        lanes = a if act.all() else a[act]
        if lanes.size == 0:
            return -1
        lo, hi = int(lanes.min()), int(lanes.max())
        ri = int(np.searchsorted(self._bases, lo, side="right")) - 1
        if ri >= 0 and lo >= self._bases[ri] and hi + nbytes <= self._ends[ri]:
            return ri
        return np.where(active, self.find(addr, nbytes), -1)

    def check(self, addr: np.ndarray, active: np.ndarray, nbytes: int, what: str) -> int | np.ndarray:
        """`locate`, raising on the first active lane that is out of bounds or
        misaligned. Inactive lanes are never touched."""
        where = self.locate(addr, active, nbytes)
        if isinstance(where, np.ndarray):
            bad = active & (where < 0)
            first = int(np.asarray(addr).reshape(-1)[np.flatnonzero(bad.reshape(-1))[0]])
            raise OutOfBoundsError(f"{what}: address {first:#x} ({nbytes} bytes) is out of bounds; "
                                   f"{self.describe(first)}")
        if nbytes > 1 and where >= 0:
            lanes = addr if active.all() else addr[active]
            if (lanes & (nbytes - 1)).any():
                mis = active & (addr % nbytes != 0)
                first = int(np.asarray(addr).reshape(-1)[np.flatnonzero(mis.reshape(-1))[0]])
                raise OutOfBoundsError(f"{what}: address {first:#x} is not aligned to {nbytes} bytes; "
                                       f"{self.describe(first)}")
        return where

    def _words(self, ri: int, nbytes: int) -> np.ndarray:
        """Region `ri`'s bytes as unsigned words of `nbytes` (a view, cached)."""
        key = (ri, nbytes)
        view = self._word_views.get(key)
        if view is None:
            data = self.regions[ri].data
            view = self._word_views[key] = data[:data.size - data.size % nbytes].view(f"<u{nbytes}")
        return view

    def _groups(self, addr: np.ndarray, where: int | np.ndarray, active: np.ndarray, nbytes: int):
        """(region, lanes or None for all, byte offsets, word indices or None
        when some lane is misaligned) per region the active lanes touch."""
        if isinstance(where, (int, np.integer)):
            if where < 0:
                return
            act = active.reshape(-1)
            lanes = None if act.all() else np.flatnonzero(act)
            groups = [(int(where), lanes)]
        else:
            where = where.reshape(-1)
            groups = [(int(ri), np.flatnonzero(where == ri)) for ri in np.unique(where[where >= 0])]
        for ri, lanes in groups:
            off = (addr if lanes is None else addr[lanes]) - self.regions[ri].base
            if nbytes == 1:
                yield ri, lanes, off, off
                continue
            words = off >> (nbytes.bit_length() - 1)
            yield ri, lanes, off, (None if (off & (nbytes - 1)).any() else words)

    def gather(self, addr: np.ndarray, where: int | np.ndarray, active: np.ndarray, nbytes: int) -> np.ndarray:
        """The `nbytes`-wide word at each active lane `locate` placed in a
        region, as unsigned integers of that width (zero elsewhere), one per
        lane of the flat `addr`."""
        addr = np.asarray(addr, np.int64).reshape(-1)
        out = None
        for ri, lanes, off, words in self._groups(addr, where, active, nbytes):
            if words is not None:
                vals = self._words(ri, nbytes)[words]
            else:   # misaligned lanes (oob="skip" lets them through): byte by byte
                data = self.regions[ri].data
                vals = np.ascontiguousarray(data[off[:, None] + np.arange(nbytes)]).view(f"<u{nbytes}")[:, 0]
            if lanes is None:
                return vals
            if out is None:
                out = np.zeros(addr.size, f"<u{nbytes}")
            out[lanes] = vals
        return out if out is not None else np.zeros(addr.size, f"<u{nbytes}")

    def scatter(self, addr: np.ndarray, where: int | np.ndarray, active: np.ndarray, words_in: np.ndarray,
                undo: list | None = None) -> None:
        """Write `words_in` (unsigned, one per lane of the flat `addr`) at the
        active lanes `locate` placed in a region. With duplicate addresses the
        highest lane wins (NumPy's assignment order). `undo`, when given,
        receives what `restore` needs to put the overwritten words back."""
        addr = np.asarray(addr, np.int64).reshape(-1)
        nbytes = words_in.dtype.itemsize
        for ri, lanes, off, words in self._groups(addr, where, active, nbytes):
            vals = words_in if lanes is None else words_in[lanes]
            if words is not None:
                view = self._words(ri, nbytes)
                if undo is not None:
                    undo.append((view, words, view[words]))
                view[words] = vals
            else:
                data = self.regions[ri].data
                idx = off[:, None] + np.arange(nbytes)
                if undo is not None:
                    undo.append((data, idx, data[idx]))
                data[idx] = np.ascontiguousarray(vals).view(np.uint8).reshape(-1, nbytes)

    @staticmethod
    def restore(undo: list) -> None:
        """Undo the writes `scatter` logged, newest first."""
        for view, idx, old in reversed(undo):
            view[idx] = old
        undo.clear()
