"""The block memory ops (`block_load`, `block_store`, `block_atomic`:
block pointers and tensor descriptors) in the interpreter: each element's
address and whether it is in bounds, from the op's base, shapes, strides and
offsets exactly as `expand_block_memory` computes them for compiled code,
for every program of the batch at once; then the builder's ordinary masked
access (memory_ops.py), so events, the sanitizer and out-of-bounds checks
see a block access like any other."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..language.dtypes import block_type
from . import floats
from .errors import InterpreterError


def _per_program(v: np.ndarray, rank: int) -> np.ndarray:
    """A (1|P,) scalar operand shaped to broadcast against (P, *block)."""
    return np.asarray(v).astype(np.int64).reshape(-1, *([1] * rank))


class BlockOps:
    """Mixed into NumpyBuilder."""

    def _block_lanes(self, vals: Sequence[np.ndarray], types: Sequence[Any], shape: tuple,
                     attrs: dict) -> tuple[np.ndarray, np.ndarray]:
        """(byte address, in bounds) of every element, both (P, *shape)."""
        r = len(shape)
        elem = types[0].element_ty
        nbytes = floats.memory_itemsize(elem)
        if attrs.get("descriptor"):
            self._check_descriptor(vals, r, nbytes)
        addr = _per_program(vals[0], r)
        active = np.ones((1,) * (r + 1), bool)
        checked = set(attrs.get("boundary_check", ()))
        with np.errstate(all="ignore"):   # int64 wraps, as the compiled i64 arithmetic does
            for d in range(r):
                off = np.asarray(vals[1 + 2 * r + d]).astype(np.int64)
                # a scalar start covers start..start+B_d; a tensor is one index per row (gather)
                idx = off[:, None] + np.arange(shape[d], dtype=np.int64) if off.ndim == 1 else off
                idx = idx.reshape(idx.shape[0], *[shape[d] if j == d else 1 for j in range(r)])
                addr = addr + idx * _per_program(vals[1 + r + d], r) * np.int64(nbytes)
                if d in checked:
                    active = active & (idx >= 0) & (idx < _per_program(vals[1 + d], r))
        n = max(addr.shape[0], active.shape[0])
        self.widest = max(self.widest, int(np.prod(shape)))
        return np.broadcast_to(addr, (n, *shape)), np.broadcast_to(active, (n, *shape))

    def _check_descriptor(self, vals: Sequence[np.ndarray], r: int, nbytes: int) -> None:
        """Triton's contract for descriptors (what TMA needs; compiled code
        vectorises on it): 16-byte aligned base and leading strides, last stride 1."""
        base = np.asarray(vals[0]).astype(np.int64)
        strides = [np.asarray(v).astype(np.int64) for v in vals[1 + r:1 + 2 * r]]
        problems = [(base % 16 != 0, lambda i: f"tensor descriptor base {int(base[i]):#x} is not 16-byte aligned")]
        for d, s in enumerate(strides[:-1]):
            problems.append((s * nbytes % 16 != 0, lambda i, d=d, s=s: (
                f"tensor descriptor stride {d} ({int(s[i])} elements of {nbytes} bytes) is not a multiple "
                "of 16 bytes")))
        problems.append((strides[-1] != 1, lambda i: f"tensor descriptor's last stride is {int(strides[-1][i])}, "
                                                     "must be 1"))
        for bad, message in problems:
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise self._error(InterpreterError, f"{message(i)} ({self._where(i if bad.size > 1 else 0)})")

    def _op_block_load(self, op, vals, types, rtys, attrs):
        ty = rtys[0]
        r = len(ty.shape)
        addr, active = self._block_lanes(vals, types, ty.shape, attrs)
        where = self._access("load", addr, active, ty.scalar)
        data = self._read(addr, where, active, ty.scalar)
        read = active if not isinstance(where, np.ndarray) else where >= 0
        if not read.all():
            other = vals[1 + 3 * r] if len(vals) > 1 + 3 * r else None
            fill = np.zeros((), data.dtype) if other is None else np.asarray(other).reshape(-1, *([1] * r))
            data = np.where(read, data, fill)
        origin = np.where(active, addr, -1) if self.events.active else None   # masked-off lanes: -1
        return [self.wrap(data, ty, origin=origin)]

    def _op_block_store(self, op, vals, types, rtys, attrs):
        elem = types[0].element_ty
        value = vals[-1]
        addr, active = self._block_lanes(vals, types, value.shape[1:], attrs)
        where = self._access("store", addr, active, elem)
        self._write(addr, where, active, elem, value)
        return []

    # `tma_load` / `tma_store` (made by the compiler for sm_90a, so only
    # hand-written IR brings them here): the block op after the tensor map's
    # address, which holds nothing the block op's own operands do not
    def _op_tma_load(self, op, vals, types, rtys, attrs):
        return self._op_block_load(op, vals[1:], types[1:], rtys, attrs)

    def _op_tma_store(self, op, vals, types, rtys, attrs):
        return self._op_block_store(op, vals[1:], types[1:], rtys, attrs)

    # `tensormap_create` (a tensor map built on the device for sm_90a): its
    # address is what the TMA ops above take and ignore, so the scratch
    # address stands for it and nothing is written
    def _op_tensormap_create(self, op, vals, types, rtys, attrs):
        return [vals[0]]

    def _op_block_atomic(self, op, vals, types, rtys, attrs):
        # the same lanes through atomic_rmw's implementation, result dropped
        value = vals[-1]
        addr, active = self._block_lanes(vals, types, value.shape[1:], attrs)
        self._op_atomic_rmw(op, [addr, value, active], types, [block_type(types[0].element_ty, value.shape[1:])],
                            attrs)
        return []
