"""Elementwise semantics NumPy does not give directly, matched to compiled code
(PTX): C-style integer division, clamped shifts, umulhi, fma, erf, saturating
float→int casts and rounding casts into bf16/fp8.

Choices where hardware is the reference (documented in the docstrings):
  x / 0 → -1 (all ones, signed or unsigned), x % 0 → x, like `div`/`rem` on
  NVIDIA GPUs; MIN // -1 wraps to MIN. Shift amounts are read as unsigned:
  `shl`/logical `shr` by >= width give 0, arithmetic `shr` gives the sign fill.
"""
from __future__ import annotations

import math

import numpy as np

from ..language.dtypes import dtype
from . import floats

_UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def int_div(a: np.ndarray, b: np.ndarray, ty: dtype) -> np.ndarray:
    """Truncating division; division by zero gives all ones."""
    with np.errstate(all="ignore"):
        zero = b == 0
        safe = np.where(zero, np.ones_like(b), b)
        q = np.floor_divide(a, safe)
        if ty.scalar.is_int_signed():
            r = a - q * safe
            q = q + ((r != 0) & ((a < 0) != (safe < 0))).astype(q.dtype)
        return np.where(zero, ~np.zeros_like(q), q)


def int_rem(a: np.ndarray, b: np.ndarray, ty: dtype) -> np.ndarray:
    """Remainder with the dividend's sign; x % 0 gives x."""
    with np.errstate(all="ignore"):
        q = int_div(a, b, ty)
        return np.where(b == 0, a, a - q * b)


def shift(a: np.ndarray, b: np.ndarray, ty: dtype, left: bool) -> np.ndarray:
    sca = ty.scalar
    width = sca.primitive_bitwidth
    if sca.is_int1():  # a one-bit value shifted by 1 (the only non-zero amount) is empty
        return np.where(np.asarray(b), False, a)
    nt = floats.storage_dtype(sca)
    amount = np.asarray(b).astype(_UNSIGNED[width])
    clamped = np.minimum(amount, width - 1).astype(nt)
    with np.errstate(all="ignore"):
        if left:
            out = np.left_shift(a, clamped)
            return np.where(amount >= width, np.zeros_like(out), out)
        out = np.right_shift(a, clamped)
        if sca.is_int_signed():
            return out  # shifting by width - 1 already gives the sign fill
        return np.where(amount >= width, np.zeros_like(out), out)


def umulhi(a: np.ndarray, b: np.ndarray, ty: dtype) -> np.ndarray:
    """High half of the product of the operands' *unsigned* bit patterns (as the
    name says), returned in the operand type."""
    sca = ty.scalar
    width = sca.primitive_bitwidth
    nt = floats.storage_dtype(sca)
    ua = np.asarray(a).astype(_UNSIGNED[width]).astype(np.uint64)
    ub = np.asarray(b).astype(_UNSIGNED[width]).astype(np.uint64)
    with np.errstate(all="ignore"):
        if width <= 32:
            return ((ua * ub) >> np.uint64(width)).astype(nt)
        m, s = np.uint64(0xFFFFFFFF), np.uint64(32)
        a_lo, a_hi = ua & m, ua >> s
        b_lo, b_hi = ub & m, ub >> s
        ll, lh, hl, hh = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
        mid = (ll >> s) + (lh & m) + (hl & m)
        return (hh + (lh >> s) + (hl >> s) + (mid >> s)).astype(nt)


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's exact product: a*b == p + e in float64."""
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ah = a * split
    ah = ah - (ah - a)
    al = a - ah
    bh = b * split
    bh = bh - (bh - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray, ty: dtype) -> np.ndarray:
    """Fused multiply-add. f16/bf16/f32: the product is exact in float64, so one
    float64 add and one final rounding; f64: Dekker's exact product keeps the
    low bits a plain a*b+c would lose."""
    with np.errstate(all="ignore"):
        a64, b64, c64 = (np.asarray(v, np.float64) for v in (a, b, c))
        if ty.scalar.is_fp64():
            p, e = _two_prod(a64, b64)
            s = p + c64
            bp = s - p
            err = (p - (s - bp)) + (c64 - bp)
            out = s + (err + e)
            return np.where(np.isfinite(out), out, a64 * b64 + c64)
        return a64 * b64 + c64


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def erf(x: np.ndarray) -> np.ndarray:
    """erf in float64, vectorised, to ~1e-15 relative: a positive-term series
    erf(x) = 2/sqrt(pi) e^{-x^2} sum 2^n x^{2n+1} / (1*3*...*(2n+1)) for |x| < 2.5
    (no cancellation), and the erfc continued fraction beyond."""
    x = np.asarray(x, np.float64)
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        small = np.minimum(ax, 2.5)
        term = small.copy()
        total = small.copy()
        x2 = small * small
        for n in range(1, 90):
            term = term * (2.0 * x2) / (2 * n + 1)
            total = total + term
        series = _TWO_OVER_SQRT_PI * np.exp(-x2) * total
        big = np.maximum(ax, 2.5)
        t = big.copy()
        for k in range(120, 0, -1):
            t = big + (k / 2.0) / t
        erfc = np.exp(-big * big) / (math.sqrt(math.pi) * t)
        out = np.where(ax < 2.5, series, 1.0 - erfc)
        out = np.where(np.isnan(x), x, out)
    return np.copysign(out, x)


def float_to_int(x: np.ndarray, dst: dtype) -> np.ndarray:
    """Truncate toward zero, saturating at the type's range, NaN → 0 (PTX cvt.rzi.sat)."""
    bits = dst.primitive_bitwidth
    nt = floats.storage_dtype(dst)
    t = np.trunc(np.asarray(x, np.float64))
    if dst.is_int_signed():
        lo_f, hi_f = -(2.0 ** (bits - 1)), 2.0 ** (bits - 1)
    else:
        lo_f, hi_f = 0.0, 2.0 ** bits
    info = np.iinfo(nt)
    inside = (t >= lo_f) & (t < hi_f)
    safe = np.where(inside, t, 0.0)
    out = safe.astype(nt)
    out = np.where(t >= hi_f, nt.type(info.max), out)
    out = np.where(t < lo_f, nt.type(info.min), out)
    return np.where(np.isnan(t), nt.type(0), out).astype(nt)


def _exact_widening(src: dtype, dst: dtype) -> bool:
    # fp8 formats differ in bias and specials (e4b15's 1.875 is e4m3fn's 0x3f), so into one is always rounded
    return not dst.is_fp8() and src.exponent_bits <= dst.exponent_bits \
        and src.fp_mantissa_width <= dst.fp_mantissa_width


def cast(x: np.ndarray, src: dtype, dst: dtype, rounding: str = "rtne") -> np.ndarray:
    """Value conversion between scalar types (docs/ir.md `cast`)."""
    x = np.asarray(x)
    nt = floats.storage_dtype(dst)
    with np.errstate(all="ignore"):
        if dst.is_int1():
            return x != 0
        if src.is_int1():
            x = x.astype(np.uint8)
        if dst.is_int():
            if src.is_floating():
                return float_to_int(x, dst)
            return x.astype(nt)  # wraps; extends by the source's signedness
        if src.is_floating() and _exact_widening(src, dst):
            return x.astype(nt)
        if dst.is_fp64() or (dst.name in ("fp16", "fp32") and rounding == "rtne"):
            return x.astype(nt)  # NumPy rounds once, to nearest even
        if dst.name == "fp8e4b15" and not src.is_fp16():
            # Triton converts f32 to f16 first: NaN comes out positive (floats.py)
            x = np.where(np.isnan(x), np.abs(x), x)
        return floats.round_to(x, dst.name, rounding, saturate_inf=True).astype(nt)
