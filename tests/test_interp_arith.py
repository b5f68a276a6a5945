"""Arithmetic in the interpreter against NumPy: integer wraparound and C
division, shifts, bitwise ops, promotion with scalars, float ops and NaN
rules, comparisons, math functions, casts, bf16 rounding, scalar arguments."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tritium as triton
import tritium.language as tl

interp = triton.jit(interpret=True)


@interp
def _binops(a_ptr, b_ptr, out_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    if OP == "add":
        r = a + b
    elif OP == "sub":
        r = a - b
    elif OP == "mul":
        r = a * b
    elif OP == "div":
        r = a // b
    elif OP == "mod":
        r = a % b
    elif OP == "shl":
        r = a << b
    elif OP == "shr":
        r = a >> b
    elif OP == "and":
        r = a & b
    elif OP == "or":
        r = a | b
    else:
        r = a ^ b
    tl.store(out_ptr + offs, r)


def _run_binop(op, a, b, out_dtype=None):
    out = np.zeros(a.shape, out_dtype or a.dtype)
    _binops[(1,)](a, b, out, OP=op, BLOCK=a.size)
    return out


def test_small_int_wraparound():
    a = np.array([127, -128, 100, 5], np.int8)
    b = np.array([1, -1, 100, 3], np.int8)
    assert _run_binop("add", a, b).tolist() == [-128, 127, -56, 8]
    assert _run_binop("mul", a, b).tolist() == [127, -128, 16, 15]
    u = np.array([0, 255, 3, 200], np.uint8)
    v = np.array([1, 1, 5, 100], np.uint8)
    assert _run_binop("sub", u, v).tolist() == [255, 254, 254, 100]
    assert _run_binop("add", u, v).tolist() == [1, 0, 8, 44]


def test_c_division_and_remainder():
    a = np.array([-7, 7, -7, 7, -2 ** 31, 9, 0, -1], np.int32)
    b = np.array([2, -2, -2, 2, -1, 0, 5, 3], np.int32)
    assert _run_binop("div", a, b).tolist() == [-3, -3, 3, 3, -2 ** 31, -1, 0, 0]
    assert _run_binop("mod", a, b).tolist() == [-1, 1, -1, 1, 0, 9, 0, -1]


@settings(max_examples=25)
@given(st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32]), st.data())
def test_int_division_hypothesis(dt, data):
    info = np.iinfo(dt)
    ints = st.integers(int(info.min), int(info.max))
    a = np.array(data.draw(st.lists(ints, min_size=8, max_size=8)), dt)
    b = np.array(data.draw(st.lists(ints.filter(lambda v: v != 0), min_size=8, max_size=8)), dt)
    q, r = _run_binop("div", a, b), _run_binop("mod", a, b)
    for x, y, qq, rr in zip(a.tolist(), b.tolist(), q.tolist(), r.tolist()):
        ref = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        ref = int(np.array(ref).astype(np.int64).astype(dt)) if info.min <= ref <= info.max else int(info.min)
        assert qq == ref
        assert rr == int(np.array(x - ref * y, np.int64).astype(dt)) if y != -1 else rr == 0


def test_shifts_past_width():
    a = np.array([1, 1, -8, 8, -8, 3, 1, 1], np.int32)
    s = np.array([31, 32, 40, 40, 1, 0, 33, 64], np.int32)
    assert _run_binop("shl", a, s).tolist() == [-2 ** 31, 0, 0, 0, -16, 3, 0, 0]
    assert _run_binop("shr", a, s).tolist() == [0, 0, -1, 0, -4, 3, 0, 0]
    u = np.array([2 ** 32 - 1] * 4, np.uint32)
    us = np.array([1, 31, 32, 100], np.uint32)
    assert _run_binop("shr", u, us).tolist() == [2 ** 31 - 1, 1, 0, 0]


def test_bitwise_ops():
    a = np.array([0b1100, -1, 0, 7], np.int32)
    b = np.array([0b1010, 5, 0, 2], np.int32)
    assert _run_binop("and", a, b).tolist() == (a & b).tolist()
    assert _run_binop("or", a, b).tolist() == (a | b).tolist()
    assert _run_binop("xor", a, b).tolist() == (a ^ b).tolist()


@interp
def _promote(i8_ptr, u8_ptr, f16_ptr, out_i_ptr, out_f_ptr, scalar_i, scalar_f):
    a = tl.load(i8_ptr)
    b = tl.load(u8_ptr)
    c = tl.load(f16_ptr)
    tl.static_assert((a + b).dtype == tl.int8 or (a + b).dtype == tl.uint8)
    tl.store(out_i_ptr, (a + scalar_i).to(tl.int64))      # int8 + i32 scalar → int32
    tl.store(out_i_ptr + 1, (a * 2).to(tl.int64))         # a literal keeps int8 (wraps)
    tl.store(out_f_ptr, (c + scalar_f).to(tl.float64))    # f16 + fp32 scalar → fp32
    tl.store(out_f_ptr + 1, (c * 2.0).to(tl.float64))     # a float literal keeps f16


def test_promotion_with_scalars_and_literals():
    out_i = np.zeros(2, np.int64)
    out_f = np.zeros(2, np.float64)
    _promote[(1,)](np.array([100], np.int8), np.array([200], np.uint8), np.array([60000], np.float16), out_i, out_f,
                   1000, 10000.0)
    assert out_i.tolist() == [1100, -56]
    assert out_f[0] == float(np.float32(np.float16(60000)) + np.float32(10000.0))
    assert np.isinf(out_f[1])


@interp
def _float_ops(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + 0 * BLOCK + offs, tl.maximum(x, y))
    tl.store(out_ptr + 1 * BLOCK + offs, tl.minimum(x, y))
    tl.store(out_ptr + 2 * BLOCK + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(out_ptr + 3 * BLOCK + offs, tl.clamp(x, -1.0, 1.0))
    tl.store(out_ptr + 4 * BLOCK + offs, tl.where(x > y, x, y))
    tl.store(out_ptr + 5 * BLOCK + offs, x / y)
    tl.store(out_ptr + 6 * BLOCK + offs, x % y)
    tl.store(out_ptr + 7 * BLOCK + offs, tl.fma(x, y, x))
    tl.store(out_ptr + 8 * BLOCK + offs, -x)
    tl.store(out_ptr + 9 * BLOCK + offs, tl.div_rn(x, y))


def test_float_ops_and_nan_rules():
    x = np.array([np.nan, 1.0, -3.0, 0.5, 2.0, -0.25, 7.0, np.nan], np.float32)
    y = np.array([2.0, np.nan, -4.0, 0.25, 3.0, 1.0, -2.0, np.nan], np.float32)
    out = np.zeros((10, 8), np.float32)
    with np.errstate(all="ignore"):
        _float_ops[(1,)](x, y, out, BLOCK=8)
        np.testing.assert_array_equal(out[0], np.fmax(x, y))
        np.testing.assert_array_equal(out[1], np.fmin(x, y))
        np.testing.assert_array_equal(out[2], np.maximum(x, y))
        np.testing.assert_array_equal(out[3], np.fmin(np.fmax(x, -1.0), 1.0))
        np.testing.assert_array_equal(out[4], np.where(x > y, x, y))
        np.testing.assert_allclose(out[5], x / y, rtol=1e-6)
        np.testing.assert_array_equal(out[6], np.fmod(x, y))
        np.testing.assert_array_equal(out[7], (x.astype(np.float64) * y + x).astype(np.float32))
        np.testing.assert_array_equal(out[8], -x)
        np.testing.assert_array_equal(out[9], x / y)
    assert out.dtype == np.float32


@interp
def _compare(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + 0 * BLOCK + offs, x == y)
    tl.store(out_ptr + 1 * BLOCK + offs, x != y)
    tl.store(out_ptr + 2 * BLOCK + offs, x < y)
    tl.store(out_ptr + 3 * BLOCK + offs, (x >= y) | (x != x))
    tl.store(out_ptr + 4 * BLOCK + offs, (x > 0) & (y > 0))
    tl.store(out_ptr + 5 * BLOCK + offs, ((x > 0) ^ (y > 0)) == 0)


def test_comparisons_with_nan():
    x = np.array([np.nan, 1.0, 2.0, 3.0], np.float32)
    y = np.array([np.nan, 1.0, 3.0, -2.0], np.float32)
    out = np.zeros((6, 4), bool)
    _compare[(1,)](x, y, out, BLOCK=4)
    assert out[0].tolist() == [False, True, False, False]
    assert out[1].tolist() == [True, False, True, True]
    assert out[2].tolist() == [False, False, True, False]
    assert out[3].tolist() == [True, True, False, True]
    assert out[4].tolist() == [False, True, True, False]
    assert out[5].tolist() == [True, True, True, False]


_MATH = {
    "exp": (tl.exp, np.exp, (-5, 5)), "exp2": (tl.exp2, np.exp2, (-5, 5)), "log": (tl.log, np.log, (0.01, 50)),
    "log2": (tl.log2, np.log2, (0.01, 50)), "sqrt": (tl.sqrt, np.sqrt, (0, 50)),
    "sqrt_rn": (tl.sqrt_rn, np.sqrt, (0, 50)), "rsqrt": (tl.rsqrt, lambda v: 1 / np.sqrt(v), (0.01, 50)),
    "sin": (tl.sin, np.sin, (-6, 6)), "cos": (tl.cos, np.cos, (-6, 6)), "floor": (tl.floor, np.floor, (-9, 9)),
    "ceil": (tl.ceil, np.ceil, (-9, 9)), "abs": (tl.abs, np.abs, (-9, 9)),
    "erf": (tl.erf, np.vectorize(math.erf), (-4, 4)), "sigmoid": (tl.sigmoid, lambda v: 1 / (1 + np.exp(-v)), (-9, 9)),
}


@interp
def _unary(x_ptr, out_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, FN(tl.load(x_ptr + offs)))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(_MATH))
def test_math_functions(name, dt):
    fn, ref, (lo, hi) = _MATH[name]
    x = np.linspace(lo, hi, 64).astype(dt)
    out = np.zeros_like(x)
    _unary[(1,)](x, out, FN=fn, BLOCK=64)
    with np.errstate(all="ignore"):
        expect = ref(x.astype(np.float64))
    np.testing.assert_allclose(out, expect, rtol=2e-6 if dt == np.float32 else 1e-13, atol=1e-6 if dt == np.float32
                               else 1e-14)


@interp
def _casts(f_ptr, i_out, bf_out, f8_out, bits_out, u_out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(f_ptr + offs)
    tl.store(i_out + offs, x.to(tl.int32))
    tl.store(bf_out + offs, x.to(tl.bfloat16).to(tl.float32))
    tl.store(f8_out + offs, x.to(tl.float8e4nv).to(tl.float32))
    tl.store(bits_out + offs, x.to(tl.int32, bitcast=True))
    tl.store(u_out + offs, x.to(tl.uint8))


def test_casts():
    x = np.array([1.9, -1.9, 3e9, np.nan, math.pi, 1000.0, -0.0, 255.9], np.float32)
    i_out, bits = np.zeros(8, np.int32), np.zeros(8, np.int32)
    bf, f8 = np.zeros(8, np.float32), np.zeros(8, np.float32)
    u = np.zeros(8, np.uint8)
    _casts[(1,)](x, i_out, bf, f8, bits, u, BLOCK=8)
    assert i_out.tolist() == [1, -1, 2 ** 31 - 1, 0, 3, 1000, 0, 255]
    assert bf[4] == 3.140625 and bf[5] == 1000.0 and np.isnan(bf[3])
    assert f8[4] == 3.25 and f8[5] == 448.0 and f8[0] == 1.875
    assert bits.tolist() == x.view(np.int32).tolist()
    assert u.tolist() == [1, 0, 255, 0, 3, 255, 0, 255]


@interp
def _bf16_io(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x * 3)


def test_bf16_arrays_via_signature_types():
    bits = np.array([0x3F80, 0x4049], np.uint16)  # 1.0, 3.140625 as bf16
    out = np.zeros(2, np.uint16)

    class Bf16Array:  # a tensor-like with a bfloat16 dtype name, as torch tensors have
        def __init__(self, a):
            self.a = a
            self.dtype = "bfloat16"
            self.ndim = 1
            self.__array_interface__ = a.__array_interface__

    _bf16_io[(1,)](Bf16Array(bits), Bf16Array(out), BLOCK=2)
    assert out.tolist() == [0x4040, 0x4117]  # 3.0, 9.421875 (rounded to bf16)


@interp
def _scalar_args(out_ptr, i, big, f, flag):
    tl.store(out_ptr, i.to(tl.float64))
    tl.store(out_ptr + 1, big.to(tl.float64))
    tl.store(out_ptr + 2, f.to(tl.float64))
    tl.store(out_ptr + 3, flag.to(tl.float64))


def test_scalar_argument_types():
    out = np.zeros(4, np.float64)
    _scalar_args[(1,)](out, -5, 2 ** 40, 0.1, True)
    assert out.tolist() == [-5.0, float(2 ** 40), float(np.float32(0.1)), 1.0]


def _bf16_bits_ref(f32: np.ndarray) -> np.ndarray:
    u = f32.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


@settings(max_examples=25)
@given(st.sampled_from(["add", "sub", "mul"]), st.sampled_from([np.float16, np.float32, np.float64]),
       st.lists(st.floats(-1e4, 1e4, width=16), min_size=8, max_size=8),
       st.lists(st.floats(-1e4, 1e4, width=16), min_size=8, max_size=8))
def test_float_arithmetic_hypothesis(op, dt, xs, ys):
    a, b = np.array(xs, dt), np.array(ys, dt)
    got = _run_binop(op, a, b)
    with np.errstate(all="ignore"):
        ref = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](a, b)
    assert got.dtype == dt and np.array_equal(got, ref, equal_nan=True)


@interp
def _bf16_arith(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs).to(tl.bfloat16)
    y = tl.load(y_ptr + offs).to(tl.bfloat16)
    tl.store(out_ptr + offs, (x * y).to(tl.int16, bitcast=True))
    tl.store(out_ptr + BLOCK + offs, (x + y).to(tl.int16, bitcast=True))


@settings(max_examples=25)
@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=8, max_size=8),
       st.lists(st.floats(-1e6, 1e6, width=32), min_size=8, max_size=8))
def test_bf16_arithmetic_rounds_like_hardware(xs, ys):
    x, y = np.array(xs, np.float32), np.array(ys, np.float32)
    out = np.zeros(16, np.int16)
    _bf16_arith[(1,)](x, y, out, BLOCK=8)
    xb = (_bf16_bits_ref(x).astype(np.uint32) << 16).view(np.float32)
    yb = (_bf16_bits_ref(y).astype(np.uint32) << 16).view(np.float32)
    # reference: the exact result rounded by the bit formula, on lanes where the
    # exact result is a float32 (then f32 → bf16 is the only rounding)
    for exact, got in ((xb.astype(np.float64) * yb, out[:8]), (xb.astype(np.float64) + yb, out[8:])):
        ok = exact.astype(np.float32).astype(np.float64) == exact
        ref = _bf16_bits_ref(exact.astype(np.float32))
        assert got.view(np.uint16)[ok].tolist() == ref[ok].tolist()
