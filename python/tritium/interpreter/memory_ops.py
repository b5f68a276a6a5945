"""The builder's memory ops: load, store and atomics as gathers and scatters
over every program of a batch at once (one row per program in front of the
op's shape), with the bounds checks and the events clients receive.

A store in a batch of several programs logs the words it overwrites, so the
batch can be undone if its programs later disagree on a branch. Atomics need
program order: in a batch of several programs they ask for one program at a
time (batches.NeedsOrder) before touching memory."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..language.dtypes import dtype
from . import floats
from .errors import InterpreterError
from .events import MemoryEvent
from .memory import OutOfBoundsError


class MemoryOps:
    """Mixed into NumpyBuilder."""

    def _lanes(self, ptr: np.ndarray, mask: np.ndarray | None, shape: tuple,
               value: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Addresses and active lanes, both (n, *shape), n the programs covered."""
        n = max(a.shape[0] if a.ndim else 1 for a in (ptr, mask, value) if a is not None)
        full = (n, *shape)
        addr = np.broadcast_to(ptr, full).astype(np.int64, copy=False)
        active = np.ones(full, bool) if mask is None else np.broadcast_to(mask, full).astype(bool, copy=False)
        per_program = addr.size // n
        if per_program > self.widest:
            self.widest = per_program
        return addr, active

    def _access(self, kind: str, addr: np.ndarray, active: np.ndarray, elem: dtype, atomic_op: str = "",
                value_from=None) -> int | np.ndarray:
        """Emits the event, then checks bounds; returns where the active lanes
        are (MemoryMap.locate). With oob="skip" out-of-bounds lanes count as
        inactive."""
        nbytes = floats.memory_itemsize(elem)
        if self.events.active:
            # an access all programs make alike is still one access per program
            every = (len(self.pids), *addr.shape[1:])
            self.events.emit(MemoryEvent(self.pids, self.location(), kind, np.array(np.broadcast_to(addr, every)),
                                         np.array(np.broadcast_to(active, every)), elem, nbytes, atomic_op,
                                         value_from))
        if self.oob == "skip":
            return self.memory.locate(addr, active, nbytes)
        try:
            return self.memory.check(addr, active, nbytes, kind)
        except OutOfBoundsError as e:
            bad = np.flatnonzero((active & (self.memory.find(addr, nbytes) < 0)).reshape(addr.shape[0], -1).any(1))
            first = int(bad[0]) if bad.size else 0
            raise self._error(OutOfBoundsError, f"{e.message} ({self._where(first)})") from None

    def _read(self, addr: np.ndarray, where: int | np.ndarray, active: np.ndarray, elem: dtype) -> np.ndarray:
        nbytes = floats.memory_itemsize(elem)
        bits = self.memory.gather(addr, where, active, nbytes).reshape(addr.shape)
        return floats.from_bits(bits, elem)

    def _write(self, addr: np.ndarray, where: int | np.ndarray, active: np.ndarray, elem: dtype,
               value: np.ndarray) -> None:
        nbytes = floats.memory_itemsize(elem)
        bits = floats.to_bits(np.broadcast_to(value, addr.shape), elem)
        words = np.ascontiguousarray(bits).reshape(-1).astype(f"<u{nbytes}", copy=False)
        self.memory.scatter(addr, where, active, words, self.undo)

    def _op_load(self, op, vals, types, rtys, attrs):
        ty = rtys[0]
        elem = ty.scalar
        shape = ty.shape if ty.is_block() else ()
        mask = vals[1] if len(vals) > 1 else None
        other = vals[2] if len(vals) > 2 else None
        addr, active = self._lanes(vals[0], mask, shape)
        where = self._access("load", addr, active, elem)
        data = self._read(addr, where, active, elem)
        read = active if not isinstance(where, np.ndarray) else where >= 0
        if not (mask is None and read is active) and not read.all():
            fill = np.zeros((), data.dtype) if other is None else other
            data = np.where(read, data, fill)
        # clients (a dot's tiles) see where each lane came from; -1 for masked-off lanes
        origin = (addr if mask is None else np.where(active, addr, -1)) if self.events.active else None
        return [self.wrap(data, ty, origin=origin)]

    def _op_store(self, op, vals, types, rtys, attrs):
        ptr_t = types[0]
        elem = ptr_t.element_ty if ptr_t.is_ptr() else types[1]
        ptr = vals[0]
        shape = ptr.shape[1:] if ptr.ndim else ()
        mask = vals[2] if len(vals) > 2 else None
        addr, active = self._lanes(ptr, mask, shape, vals[1])
        origin = self._origin_of[1]
        where = self._access("store", addr, active, elem,
                             value_from=origin if not isinstance(origin, np.ndarray) else None)
        self._write(addr, where, active, elem, vals[1])
        return []

    def _atomic(self, atomic_op: str, addr, active, elem: dtype, update: Callable) -> np.ndarray:
        """Applies `update(old, lanes) -> new` lane by lane in lane order per
        address: lanes are grouped into rounds where each address occurs once,
        so every round is one vectorised read-modify-write."""
        self.require_order("an atomic")
        shape = addr.shape
        where = self._access("atomic", addr, active, elem, atomic_op)
        flat_addr = addr.reshape(-1)
        flat_reg = np.where(active, where, -1).reshape(-1) if not isinstance(where, np.ndarray) else where.reshape(-1)
        old = np.zeros(flat_addr.shape, floats.storage_dtype(elem))
        lanes = np.flatnonzero(flat_reg >= 0)
        if lanes.size:
            a = flat_addr[lanes]
            order = np.argsort(a, kind="stable")
            sa = a[order]
            starts = np.concatenate([[True], sa[1:] != sa[:-1]])
            first = np.flatnonzero(starts)[np.cumsum(starts) - 1]
            rank = np.empty(lanes.size, np.int64)
            rank[order] = np.arange(lanes.size) - first
            for r in range(int(rank.max()) + 1):
                sel = lanes[rank == r]
                at, reg, on = flat_addr[sel], flat_reg[sel], np.ones(sel.size, bool)
                cur = self._read(at, reg, on, elem)
                old[sel] = cur
                new = update(cur, sel)
                self._write(at, reg, on, elem, new)
        return old.reshape(shape)

    def _op_atomic_rmw(self, op, vals, types, rtys, attrs):
        ty = rtys[0]
        elem = ty.scalar
        kind = attrs["kind"]
        shape = ty.shape if ty.is_block() else ()
        mask = vals[2] if len(vals) > 2 else None
        addr, active = self._lanes(vals[0], mask, shape, vals[1])
        val = np.broadcast_to(vals[1], addr.shape).reshape(-1)
        floating = elem.is_floating()
        fns = {"add": np.add, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
               "max": np.fmax if floating else np.maximum, "min": np.fmin if floating else np.minimum}
        if kind not in fns and kind != "xchg":
            raise InterpreterError(f"atomic_rmw: unknown kind {kind!r}")

        def update(old, sel):
            with np.errstate(all="ignore"):
                new = val[sel] if kind == "xchg" else fns[kind](old, val[sel])
            return np.asarray(self.wrap(new, elem))
        return [self.wrap(self._atomic(kind, addr, active, elem, update), ty)]

    def _op_atomic_cas(self, op, vals, types, rtys, attrs):
        ty = rtys[0]
        elem = ty.scalar
        shape = ty.shape if ty.is_block() else ()
        addr, active = self._lanes(vals[0], None, shape, vals[2])
        cmp = floats.to_bits(np.broadcast_to(vals[1], addr.shape), elem).reshape(-1)
        val = np.broadcast_to(vals[2], addr.shape).reshape(-1)

        def cas(old, sel):  # compares bit patterns, as the hardware does
            return np.where(floats.to_bits(old, elem) == cmp[sel], val[sel], old)
        return [self.wrap(self._atomic("cas", addr, active, elem, cas), ty)]
