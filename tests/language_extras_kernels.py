"""Kernels for the language pieces of issue 14 (sort, topk, bitonic_merge,
reduce_or, gather, histogram, assume, casts), shared by the interpreter and
compile tests (tests/test_language_extras.py) and the GPU tests
(tests/gpu/test_language_extras_gpu.py), with the NumPy answer of each."""
from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl


@triton.jit
def sort_1d(x_ptr, y_ptr, N: tl.constexpr, DESCENDING: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.sort(tl.load(x_ptr + offs), descending=DESCENDING))


@triton.jit
def sort_2d(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr, DESCENDING: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x.sort(DIM, DESCENDING))


@triton.jit
def topk_2d(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(y_ptr + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :], tl.topk(x, K))


@triton.jit
def bitonic_merge_1d(x_ptr, y_ptr, N: tl.constexpr, DESCENDING: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.bitonic_merge(tl.load(x_ptr + offs), descending=DESCENDING))


@triton.jit
def reduce_or_2d(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(y_ptr + tl.arange(0, M), tl.reduce_or(x, 1))
    tl.store(y_ptr + M, x.reduce_or(None))


def bitonic_input(n: int, rng) -> np.ndarray:
    half = np.sort(rng.integers(-1000, 1000, n // 2))
    return np.concatenate([half, np.sort(rng.integers(-1000, 1000, n - n // 2))[::-1]])


SORT_DTYPES = [np.float32, np.float16, np.int32, np.uint8, np.int64, np.float64]


@triton.jit
def gather_2d(x_ptr, i_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, AXIS: tl.constexpr):
    """y = gather(x[M, N], idx, AXIS) with idx shaped [K, N] (AXIS 0) or [M, K] (AXIS 1)."""
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    if AXIS == 0:
        offs = tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :]
    else:
        offs = tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :]
    idx = tl.load(i_ptr + offs)
    tl.store(y_ptr + offs, tl.gather(x, idx, AXIS))


@triton.jit
def histogram_1d(x_ptr, y_ptr, n, N: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + tl.arange(0, BINS), tl.histogram(x, BINS, mask=offs < n))


@triton.jit
def assume_positive(x_ptr, y_ptr, n, N: tl.constexpr):
    tl.assume(n > 0)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.assume(x >= 0)
    tl.store(y_ptr + offs, x // 2, mask=offs < n)


def gather_reference(x: np.ndarray, idx: np.ndarray, axis: int) -> np.ndarray:
    return np.take_along_axis(x, idx.astype(np.int64), axis)


def histogram_reference(x: np.ndarray, n: int, bins: int) -> np.ndarray:
    v = x[:n].astype(np.int64)
    v = v[(v >= 0) & (v < bins)]
    return np.bincount(v, minlength=bins)[:bins].astype(np.int32)


@triton.jit
def to_bf16(x_ptr, y_ptr, N: tl.constexpr):
    """x cast to bf16, stored as its 16 bits (y is int16)."""
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.bfloat16).to(tl.int16, bitcast=True))


@triton.jit
def to_bf16_rtz(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.bfloat16, fp_downcast_rounding="rtz").to(tl.int16, bitcast=True))


def bf16_bits(x: np.ndarray, rtz: bool = False) -> np.ndarray:
    """x (integers or floats) rounded once to bf16, to nearest even or toward
    zero: the 16 bits, computed exactly with Fractions."""
    import fractions
    import math
    out = []
    for v in x.ravel():
        q = fractions.Fraction(int(v)) if np.issubdtype(x.dtype, np.integer) else fractions.Fraction(float(v))
        if q == 0:
            out.append(0x8000 if np.signbit(v) else 0)
            continue
        _, e = math.frexp(float(q))            # |q| = m * 2^e, 0.5 <= m < 1
        scaled = q * fractions.Fraction(2) ** (8 - e)   # 8 significant bits
        n = math.trunc(scaled) if rtz else round(scaled)  # round(): ties to even
        val = float(n * fractions.Fraction(2) ** (e - 8))
        out.append(int(np.array(val, np.float32).view(np.uint32)) >> 16)
    return np.array(out, np.uint16).reshape(x.shape)
