"""NumpyBuilder arithmetic op by op against NumPy / Python references:
integer wrap, division, shifts, NaN rules, casts (bf16/fp8 bit patterns)."""
from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, strategies as st

from interp_builder_env import Env, blk, env, floats_elem, mapped, ptrs  # noqa: F401 (env is a fixture)
from tritium.interpreter import (DeviceAssertionError, MemoryMap, NumpyBuilder, OutOfBoundsError, Sanitizer, Tracer,
                                 wrap)
from tritium.interpreter.events import EventBus, Launch
from tritium.interpreter import floats
from tritium.language import dtypes as D


# ---------------------------------------------------------------- integers

def test_integer_ops_wrap(env):
    a = env.v(np.array([127, -128, 100], np.int8), D.int8)
    one = env.v(np.array([1, -1, 100], np.int8), D.int8)
    assert env.bin("add", a, one).tolist() == [-128, 127, -56]
    assert env.bin("mul", a, one).tolist() == [127, -128, 16]
    u = env.v(np.array([0, 255], np.uint8), D.uint8)
    assert env.bin("sub", u, env.v(np.array([1, 0], np.uint8), D.uint8)).tolist() == [255, 255]
    big = env.v(np.array([2 ** 31 - 1], np.int32), D.int32)
    assert env.bin("add", big, big).tolist() == [-2]
    assert env.op("neg", env.v(np.array([-2 ** 31], np.int32), D.int32), ty=blk(D.int32, 1)).tolist() == [-2 ** 31]


def _c_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


@given(st.lists(st.tuples(st.integers(-2 ** 31, 2 ** 31 - 1), st.integers(-2 ** 31, 2 ** 31 - 1)), min_size=1,
                max_size=16))
def test_int32_division_matches_c(pairs):
    env = Env()
    a = env.v(np.array([p[0] for p in pairs], np.int32), D.int32)
    b = env.v(np.array([p[1] for p in pairs], np.int32), D.int32)
    q, r = env.bin("div", a, b).tolist(), env.bin("rem", a, b).tolist()
    for (x, y), qq, rr in zip(pairs, q, r):
        if y == 0:
            assert qq == -1 and rr == x
        elif x == -2 ** 31 and y == -1:
            assert qq == -2 ** 31 and rr == 0
        else:
            assert qq == _c_div(x, y)
            assert rr == x - _c_div(x, y) * y


def test_division_edge_cases(env):
    a = env.v(np.array([-7, 7, -7, 7, 5], np.int32), D.int32)
    b = env.v(np.array([2, -2, -2, 2, 0], np.int32), D.int32)
    assert env.bin("div", a, b).tolist() == [-3, -3, 3, 3, -1]
    assert env.bin("rem", a, b).tolist() == [-1, 1, -1, 1, 5]
    ua = env.v(np.array([7, 9], np.uint32), D.uint32)
    ub = env.v(np.array([0, 2], np.uint32), D.uint32)
    assert env.bin("div", ua, ub).tolist() == [0xFFFFFFFF, 4]
    assert env.bin("rem", ua, ub).tolist() == [7, 1]
    fa = env.v(np.array([-7.5, 7.5], np.float32), D.float32)
    fb = env.v(np.array([2.0, -2.0], np.float32), D.float32)
    assert env.bin("rem", fa, fb).tolist() == [-1.5, 1.5]  # fmod: sign of the dividend


def test_shifts_past_width(env):
    x = env.v(np.array([1, 1, 1, -8, 8, -8], np.int32), D.int32)
    s = env.v(np.array([31, 32, 40, 40, 40, -1], np.int32), D.int32)
    assert env.bin("shl", x, s).tolist() == [-2 ** 31, 0, 0, 0, 0, 0]
    assert env.bin("shr", x, s).tolist() == [0, 0, 0, -1, 0, -1]
    u = env.v(np.array([0x80000000, 0x80000000, 0x80000000], np.uint32), D.uint32)
    us = env.v(np.array([31, 32, 100], np.uint32), D.uint32)
    assert env.bin("shr", u, us).tolist() == [1, 0, 0]
    b8 = env.v(np.array([-128], np.int8), D.int8)
    assert env.bin("shr", b8, env.v(np.array([3], np.int8), D.int8)).tolist() == [-16]


def test_umulhi(env):
    xs = [0xFFFFFFFF, 0x12345678, 3]
    ys = [0xFFFFFFFF, 0x9ABCDEF0, 5]
    a, b = env.v(np.array(xs, np.uint32), D.uint32), env.v(np.array(ys, np.uint32), D.uint32)
    assert env.bin("umulhi", a, b).tolist() == [(x * y) >> 32 for x, y in zip(xs, ys)]
    xs64 = [2 ** 64 - 1, 0x123456789ABCDEF0, 7]
    ys64 = [2 ** 64 - 1, 0x0FEDCBA987654321, 2 ** 63]
    a, b = env.v(np.array(xs64, np.uint64), D.uint64), env.v(np.array(ys64, np.uint64), D.uint64)
    assert env.bin("umulhi", a, b).tolist() == [(x * y) >> 64 for x, y in zip(xs64, ys64)]
    s = env.v(np.array([-1], np.int32), D.int32)  # the unsigned bit pattern 0xFFFFFFFF
    assert env.bin("umulhi", s, s).tolist() == [np.int32(np.uint32((0xFFFFFFFF ** 2) >> 32).astype(np.int32))]


def test_bool_ops(env):
    t = env.v(np.array([True, True, False, False]), D.int1)
    f = env.v(np.array([True, False, True, False]), D.int1)
    assert env.bin("and", t, f).tolist() == [True, False, False, False]
    assert env.bin("or", t, f).tolist() == [True, True, True, False]
    assert env.bin("xor", t, f).tolist() == [False, True, True, False]
    assert env.op("not", t, ty=blk(D.int1, 4)).tolist() == [False, False, True, True]


# ---------------------------------------------------------------- floats

def test_nan_min_max_and_compare(env):
    a = env.v(np.array([np.nan, 1.0, np.nan], np.float32), D.float32)
    b = env.v(np.array([2.0, np.nan, np.nan], np.float32), D.float32)
    assert env.bin("min", a, b).tolist()[:2] == [2.0, 1.0]
    assert np.isnan(env.bin("max", a, b)[2])
    assert np.isnan(env.bin("max", a, b, propagate_nan=True)[:2]).all()
    bt = blk(D.int1, 3)
    assert env.op("cmp", a, b, ty=bt, pred="eq").tolist() == [False] * 3
    assert env.op("cmp", a, b, ty=bt, pred="ne").tolist() == [True] * 3
    assert env.op("cmp", a, b, ty=bt, pred="lt").tolist() == [False] * 3
    x = env.v(np.array([np.nan, -5.0, 5.0], np.float32), D.float32)
    lo = env.v(np.array([-1.0] * 3, np.float32), D.float32)
    hi = env.v(np.array([1.0] * 3, np.float32), D.float32)
    assert env.op("clamp", x, lo, hi, ty=blk(D.float32, 3)).tolist() == [-1.0, -1.0, 1.0]
    assert np.isnan(env.op("clamp", x, lo, hi, ty=blk(D.float32, 3), propagate_nan=True)[0])


def test_float32_stays_float32(env):
    a = env.v(np.float32(1.5), D.float32)
    out = env.op("add", a, a, ty=D.float32)
    assert out.dtype == np.float32 and out.shape == () and out.item() == 3.0
    x = env.v(np.linspace(0.1, 3, 8).astype(np.float32), D.float32)
    for name in ("exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "floor", "ceil", "erf"):
        r = env.op(name, x, ty=blk(D.float32, 8))
        assert r.dtype == np.float32, name
    ref = {"exp": np.exp, "log2": np.log2, "rsqrt": lambda v: 1 / np.sqrt(v), "cos": np.cos}
    for name, fn in ref.items():
        np.testing.assert_allclose(env.op(name, x, ty=blk(D.float32, 8)), fn(x.astype(np.float64)), rtol=1e-6)


def test_erf_accuracy(env):
    xs = np.concatenate([np.linspace(-7, 7, 281), [0.0, -0.0, 1e-30, 2.5, -2.5, np.inf, -np.inf]])
    r = env.op("erf", env.v(xs, D.float64), ty=blk(D.float64, len(xs)))
    ref = np.array([math.erf(v) for v in xs])
    np.testing.assert_allclose(r, ref, rtol=2e-15, atol=1e-300)
    x32 = xs.astype(np.float32)
    r32 = env.op("erf", env.v(x32, D.float32), ty=blk(D.float32, len(xs)))
    ref32 = np.array([math.erf(float(v)) for v in x32]).astype(np.float32)
    np.testing.assert_array_max_ulp(np.asarray(r32), ref32, maxulp=1)
    assert np.isnan(env.op("erf", env.v(np.float64(np.nan), D.float64), ty=D.float64))


def test_fma_is_fused(env):
    e = 2.0 ** -20
    a = env.v(np.float32(1 + e), D.float32)
    c = env.v(np.float32(-(1 + 2 * e)), D.float32)
    assert env.op("fma", a, a, c, ty=D.float32).item() == e * e
    assert env.op("add", env.op("mul", a, a, ty=D.float32), c, ty=D.float32).item() == 0.0
    e = 2.0 ** -40
    a = env.v(np.float64(1 + e), D.float64)
    c = env.v(np.float64(-(1 + 2 * e)), D.float64)
    assert env.op("fma", a, a, c, ty=D.float64).item() == e * e


# ---------------------------------------------------------------- casts

def test_float_to_int_truncates_and_saturates(env):
    x = env.v(np.array([1.9, -1.9, 3e9, -3e9, np.nan, np.inf, -0.5], np.float32), D.float32)
    assert env.op("cast", x, ty=blk(D.int32, 7)).tolist() == [1, -1, 2 ** 31 - 1, -2 ** 31, 0, 2 ** 31 - 1, 0]
    assert env.op("cast", x, ty=blk(D.uint8, 7)).tolist() == [1, 0, 255, 0, 0, 255, 0]
    big = env.v(np.array([1e30, -1e30], np.float64), D.float64)
    assert env.op("cast", big, ty=blk(D.int64, 2)).tolist() == [2 ** 63 - 1, -2 ** 63]


def test_int_casts_extend_by_source_sign(env):
    s = env.v(np.array([-1, 5], np.int8), D.int8)
    assert env.op("cast", s, ty=blk(D.uint32, 2)).tolist() == [0xFFFFFFFF, 5]
    u = env.v(np.array([255, 5], np.uint8), D.uint8)
    assert env.op("cast", u, ty=blk(D.int32, 2)).tolist() == [255, 5]
    assert env.op("cast", env.v(np.array([300, -1], np.int32), D.int32), ty=blk(D.int8, 2)).tolist() == [44, -1]
    b = env.v(np.array([True, False]), D.int1)
    assert env.op("cast", b, ty=blk(D.int32, 2)).tolist() == [1, 0]
    assert env.op("cast", b, ty=blk(D.float32, 2)).tolist() == [1.0, 0.0]


def _bits(env, h, ty_bits):
    return env.op("bitcast", h, ty=blk(ty_bits, h.shape)).astype(np.int64).tolist()


def test_bf16_rounding_bit_patterns(env):
    vals = np.array([1.0, math.pi, 1 + 2 ** -8, 1 + 3 * 2 ** -8, np.finfo(np.float32).max, -0.0, np.inf],
                    np.float32)
    x = env.v(vals, D.float32)
    bf = env.op("cast", x, ty=blk(D.bfloat16, len(vals)))
    got = [b & 0xFFFF for b in _bits(env, bf, D.int16)]
    assert got == [0x3F80, 0x4049, 0x3F80, 0x3F82, 0x7F80, 0x8000, 0x7F80]
    rz = env.op("cast", x, ty=blk(D.bfloat16, len(vals)), rounding="rtz")
    assert [b & 0xFFFF for b in _bits(env, rz, D.int16)] == [0x3F80, 0x4049, 0x3F80, 0x3F81, 0x7F7F, 0x8000, 0x7F80]


def test_bf16_matches_bit_reference_on_random_floats(env):
    rng = np.random.default_rng(0)
    u = rng.integers(0, 2 ** 32, 4096, dtype=np.uint64).astype(np.uint32)
    f = u.view(np.float32)
    keep = ~np.isnan(f)
    f, u = f[keep], u[keep]
    ref = ((u.astype(np.uint64) + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)  # RNE on the bits
    bf = env.op("cast", env.v(f, D.float32), ty=blk(D.bfloat16, len(f)))
    assert np.array_equal(floats.to_bits(bf, D.bfloat16), ref)
    # from f64 the rounding must be direct (no double rounding through f32)
    tie_above = 1 + 2 ** -8 + 2 ** -40  # just above a bf16 tie; f32 would round it onto the tie
    r = env.op("cast", env.v(np.float64(tie_above), D.float64), ty=D.bfloat16)
    assert floats.to_bits(r, D.bfloat16) == 0x3F81


def test_fp8_rounding_bit_patterns(env):
    vals = np.array([1.0, 448.0, 500.0, -np.inf, np.nan, 2 ** -9, 1.0625, 1.1875, -0.0], np.float32)
    e4 = env.op("cast", env.v(vals, D.float32), ty=blk(D.float8e4nv, len(vals)))
    assert [b & 0xFF for b in _bits(env, e4, D.int8)] == [0x38, 0x7E, 0x7E, 0xFE, 0x7F, 0x01, 0x38, 0x3A, 0x80]
    vals5 = np.array([1.0, 57344.0, 1e6, np.inf, np.nan, 2 ** -16, 1.125], np.float32)
    e5 = env.op("cast", env.v(vals5, D.float32), ty=blk(D.float8e5, len(vals5)))
    assert [b & 0xFF for b in _bits(env, e5, D.int8)] == [0x3C, 0x7B, 0x7B, 0x7B, 0x7F, 0x01, 0x3C]


@pytest.mark.parametrize("fmt", [D.float8e4nv, D.float8e5])
def test_fp8_bitcast_round_trips_every_code(env, fmt):
    codes = np.arange(256, dtype=np.uint8)
    vals = env.op("bitcast", env.v(codes, D.uint8), ty=blk(fmt, 256))
    back = env.op("bitcast", vals, ty=blk(D.uint8, 256))
    nan = np.isnan(vals)
    assert np.array_equal(back[~nan], codes[~nan])
    assert np.isnan(env.op("bitcast", back[nan], ty=blk(fmt, int(nan.sum())))).all()
    # every finite decoded value is its own rounding; casts saturate infinities (satfinite)
    again = env.op("cast", env.op("cast", vals, ty=blk(D.float32, 256)), ty=blk(fmt, 256))
    fin = np.isfinite(vals)
    assert np.array_equal(again[fin], vals[fin])
    assert np.array_equal(np.abs(again[np.isinf(vals)]), np.full(int(np.isinf(vals).sum()), 57344.0))


def test_bitcast_and_f16(env):
    one = env.v(np.float32(1.0), D.float32)
    assert env.op("bitcast", one, ty=D.int32).item() == 0x3F800000
    h = env.op("cast", env.v(np.array([65520.0, 1 / 3], np.float32), D.float32), ty=blk(D.float16, 2))
    assert h.dtype == np.float16 and np.isinf(h[0]) and h[1] == np.float16(1 / 3)
    assert env.op("bitcast", h, ty=blk(D.uint16, 2))[1] == struct.unpack("<H", struct.pack("<e", 1 / 3))[0]
