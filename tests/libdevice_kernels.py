"""Kernels applying libdevice functions (a constexpr `FN`, or a tuple `FNS`
of functions of one signature) elementwise, for tests/test_libdevice.py,
tests/gpu/test_libdevice_gpu.py and benches/libdevice_accuracy.py."""
from __future__ import annotations

import tritium as triton
import tritium.language as tl


@triton.jit
def apply1(a, y, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(y + o, FN(tl.load(a + o, mask=m)), mask=m)


@triton.jit
def apply2(a, b, y, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(y + o, FN(tl.load(a + o, mask=m), tl.load(b + o, mask=m)), mask=m)


@triton.jit
def apply3(a, b, c, y, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(y + o, FN(tl.load(a + o, mask=m), tl.load(b + o, mask=m), tl.load(c + o, mask=m)), mask=m)


@triton.jit
def apply4(a, b, c, d, y, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = FN(tl.load(a + o, mask=m), tl.load(b + o, mask=m), tl.load(c + o, mask=m), tl.load(d + o, mask=m))
    tl.store(y + o, x, mask=m)


APPLY = {1: apply1, 2: apply2, 3: apply3, 4: apply4}


@triton.jit
def many1(a, y, FNS: tl.constexpr, N: tl.constexpr):
    """Every function of FNS on one operand, result i stored at y[i * N:]."""
    o = tl.arange(0, N)
    x = tl.load(a + o)
    for i in tl.static_range(len(FNS)):
        tl.store(y + i * N + o, FNS[i](x))


@triton.jit
def many2(a, b, y, FNS: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x, z = tl.load(a + o), tl.load(b + o)
    for i in tl.static_range(len(FNS)):
        tl.store(y + i * N + o, FNS[i](x, z))


@triton.jit
def many3(a, b, c, y, FNS: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x, z, w = tl.load(a + o), tl.load(b + o), tl.load(c + o)
    for i in tl.static_range(len(FNS)):
        tl.store(y + i * N + o, FNS[i](x, z, w))


@triton.jit
def many4(a, b, c, d, y, FNS: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x, z, w, v = tl.load(a + o), tl.load(b + o), tl.load(c + o), tl.load(d + o)
    for i in tl.static_range(len(FNS)):
        tl.store(y + i * N + o, FNS[i](x, z, w, v))


MANY = {1: many1, 2: many2, 3: many3, 4: many4}
