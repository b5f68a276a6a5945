"""Shared by the tests/test_interp_builder_*.py files: a block type without
the power-of-two rule and `Env`, which drives a NumpyBuilder with one
program's values, and pointers into its memory (`mapped`, `ptrs`)."""
from __future__ import annotations

import numpy as np
import pytest

from tritium.interpreter import NumpyBuilder, wrap
from tritium.language import dtypes
from tritium.language.dtypes import block_type


class _AnyBlock(block_type):
    """A block type without the power-of-two rule, so tests can use odd lengths;
    the builder reads only the shape and the element type."""

    def __init__(self, elem, shape):
        self.element_ty = elem
        self.shape = tuple(int(s) for s in shape)
        self.numel = int(np.prod(self.shape))
        self.name = f"<{self.shape}, {elem}>"
        self.primitive_bitwidth = elem.primitive_bitwidth


def blk(elem, n):
    return _AnyBlock(elem, (n,) if isinstance(n, int) else n)


class Env:
    """Drives the builder with one program's values: handles here have no
    program axis; `create` adds it to operands and drops it from results."""

    def __init__(self, **kw):
        self.b = NumpyBuilder(**kw)

    def v(self, values, elem):
        arr = np.asarray(values)
        return wrap(arr, blk(elem, arr.shape) if arr.ndim else elem)

    def create(self, name, handles, tys, attrs):
        ins = [None if h is None else h[None] for h in handles]
        return [r[0, ...] for r in self.b.create(name, ins, tys, attrs)]

    def combine(self, name, handles, tys, attrs, elem_types, fn):
        ins = [h[None] for h in handles]
        return [r[0, ...] for r in self.b.create_combine(name, ins, tys, attrs, elem_types, fn)]

    def op(self, name, *handles, ty, **attrs):
        return self.create(name, list(handles), [ty], attrs)[0]

    def same_ty(self, h):
        return blk(h.ktype, h.shape) if h.ndim else h.ktype

    def bin(self, name, a, b, **attrs):
        return self.op(name, a, b, ty=self.same_ty(a), **attrs)


@pytest.fixture
def env():
    return Env()


def mapped(env, name, arr):
    addr = env.b.memory.register(name, arr)
    return wrap(np.int64(addr), dtypes.pointer_type(floats_elem(arr)))


def floats_elem(arr):
    return {np.dtype(np.float32): dtypes.float32, np.dtype(np.int32): dtypes.int32, np.dtype(np.int64): dtypes.int64,
            np.dtype(np.uint32): dtypes.uint32, np.dtype(np.uint16): dtypes.uint16, np.dtype(np.uint8): dtypes.uint8}[arr.dtype]


def ptrs(env, base, offs):
    pty = base.ktype
    offs = env.v(np.asarray(offs, np.int32), dtypes.int32)
    splat = env.op("splat", base, ty=blk(pty, offs.shape))
    return env.op("addptr", splat, offs, ty=blk(pty, offs.shape))
