"""Real @jit kernels run through the interpreter, covering the language surface
end to end (language layer + NumpyBuilder + runner) against NumPy references."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tritium as triton
import tritium.language as tl
from tritium.interpreter import DeviceAssertionError, OutOfBoundsError, Sanitizer, Tracer, run_grid
from tritium.interpreter.runner import program_order

interp = triton.jit(interpret=True)


# ------------------------------------------------------------------ memory and masks

@interp
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@pytest.mark.parametrize("n", [0, 1, 37, 64, 1000])
def test_vector_add_with_masks(n):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    _add[(triton.cdiv(n, 64) or 1,)](x, y, out, n, BLOCK=64)
    assert np.array_equal(out, x + y)


def test_env_var_selects_interpreter(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)

    x = np.arange(8, dtype=np.int32)
    k[(1,)](x, BLOCK=8)
    assert x.tolist() == [2 * i for i in range(8)]


@interp
def _load_other(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=-7)
    tl.store(out_ptr + offs, v)


def test_masked_lanes_get_other_and_are_not_read():
    x = np.arange(5, dtype=np.int32)
    out = np.zeros(16, np.int32)
    _load_other[(1,)](x, out, 5, BLOCK=16)
    assert out.tolist() == [0, 1, 2, 3, 4] + [-7] * 11
    _load_other[(1,)](x, out, 0, BLOCK=16)  # all lanes masked off
    assert out.tolist() == [-7] * 16


@interp
def _oob(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)


def test_unmasked_out_of_bounds_names_the_kernel_line():
    with pytest.raises(OutOfBoundsError, match=r"'x_ptr'.*program \(0, 0, 0\).*test_interp_language.py:\d+"):
        _oob[(1,)](np.zeros(10, np.float32), BLOCK=16)


def test_sanitizer_client_collects_reports():
    san, tracer = Sanitizer(), Tracer()
    run_grid(_oob, (2,), {"x_ptr": np.zeros(12, np.float32), "BLOCK": 16}, clients=[san, tracer], oob="skip")
    assert len(san.reports) == 4  # a load and a store per program
    assert {r.kind for r in san.reports} == {"load", "store"}
    assert san.reports[0].lanes.tolist() == [12, 13, 14, 15]
    assert len(tracer.of_kind("load")) == 2 and tracer.of_kind("load")[1].pid == (1, 0, 0)


@interp
def _bool_copy(src, dst, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + offs)
    tl.store(dst + offs, ~v)


def test_bool_pointers_are_bytes():
    src = np.array([True, False, True, True])
    dst = np.zeros(4, bool)
    _bool_copy[(1,)](src, dst, BLOCK=4)
    assert dst.tolist() == [False, True, False, False]


@interp
def _strided(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * stride))


def test_strided_numpy_view():
    base = np.arange(32, dtype=np.float32)
    view = base[::4]
    out = np.zeros(8, np.float32)
    _strided[(1,)](view, out, 1, BLOCK=8)  # the view's own elements are contiguous in its byte range
    assert out.tolist() == base[:8].tolist()  # element stride 1 reads the underlying buffer's neighbours
    _strided[(1,)](base, out, 4, BLOCK=8)
    assert out.tolist() == view.tolist()


# ------------------------------------------------------------------ arithmetic

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


# ------------------------------------------------------------------ reductions and scans

@tl.core.builtin
def _noop(x):
    return x


@triton.jit
def _combine_max_abs(a, b):
    return tl.where(tl.abs(a) > tl.abs(b), a, b)


@interp
def _reductions(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    K: tl.constexpr = N if AXIS == 0 else M
    o = tl.arange(0, K)
    tl.store(out_ptr + 0 * K + o, tl.sum(x, axis=AXIS))
    tl.store(out_ptr + 1 * K + o, tl.max(x, axis=AXIS))
    tl.store(out_ptr + 2 * K + o, tl.min(x, axis=AXIS))
    tl.store(out_ptr + 3 * K + o, tl.argmax(x, axis=AXIS).to(tl.int32))
    tl.store(out_ptr + 4 * K + o, tl.argmin(x, axis=AXIS).to(tl.int32))
    tl.store(out_ptr + 5 * K + o, tl.xor_sum(x, axis=AXIS))
    tl.store(out_ptr + 6 * K + o, tl.reduce(x, AXIS, _combine_max_abs))
    kept = tl.reduce(x, AXIS, _combine_max_abs, keep_dims=True)
    tl.store(out_ptr + 7 * K + o, tl.reshape(kept, (K,)))
    tl.store(out_ptr + 8 * K, tl.sum(x))


@pytest.mark.parametrize("axis", [0, 1])
def test_reductions(axis):
    rng = np.random.default_rng(axis)
    x = rng.integers(-50, 50, (4, 8)).astype(np.int32)
    x[1, 3] = x[2, 3] = 99  # ties: argmax takes the first
    k = x.shape[1 - axis]
    out = np.zeros(8 * k + 1, np.int32)
    _reductions[(1,)](x, out, M=4, N=8, AXIS=axis)
    res = out[:8 * k].reshape(8, k)
    assert res[0].tolist() == x.sum(axis).tolist()
    assert res[1].tolist() == x.max(axis).tolist()
    assert res[2].tolist() == x.min(axis).tolist()
    assert res[3].tolist() == x.argmax(axis).tolist()
    assert res[4].tolist() == x.argmin(axis).tolist()
    assert res[5].tolist() == np.bitwise_xor.reduce(x, axis).tolist()
    ref = np.take_along_axis(x, np.expand_dims(np.abs(x).argmax(axis), axis), axis).squeeze(axis)
    assert np.abs(res[6]).tolist() == np.abs(ref).tolist()
    assert res[7].tolist() == res[6].tolist()
    assert out[-1] == x.sum()


@interp
def _float_reduce(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.max(x, axis=0))
    tl.store(out_ptr + 1, tl.sum(x, axis=0))
    tl.store(out_ptr + 2, tl.argmax(x, axis=0).to(tl.float32))


def test_float_reduction_results_are_float32():
    x = np.array([1.5, -2.0, 7.25, 3.0, 7.25, 0.0, -9.0, 2.0], np.float32)
    out = np.zeros(3, np.float32)
    _float_reduce[(1,)](x, out, BLOCK=8)
    assert out.tolist() == [7.25, float(x.sum()), 2.0]


@triton.jit
def _pair_max(v1, i1, v2, i2):
    take = v2 > v1
    return tl.where(take, v2, v1), tl.where(take, i2, i1)


@triton.jit
def _mul_combine(a, b):
    return a * b


@interp
def _scans(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + 0 * BLOCK + offs, tl.cumsum(x, axis=0))
    tl.store(out_ptr + 1 * BLOCK + offs, tl.cumsum(x, axis=0, reverse=True))
    tl.store(out_ptr + 2 * BLOCK + offs, tl.cumprod(x, axis=0))
    tl.store(out_ptr + 3 * BLOCK + offs, tl.associative_scan(x, 0, _mul_combine, reverse=True))
    v, i = tl.associative_scan((x, offs), 0, _pair_max)
    tl.store(out_ptr + 4 * BLOCK + offs, v)
    tl.store(out_ptr + 5 * BLOCK + offs, i)
    v2, i2 = tl.reduce((x, offs), 0, _pair_max)
    tl.store(out_ptr + 6 * BLOCK, v2)
    tl.store(out_ptr + 6 * BLOCK + 1, i2)


def test_scans_and_tuple_reduce():
    x = np.array([2, -1, 3, 1, -2, 5, 1, 2], np.int32)
    out = np.zeros(6 * 8 + 2, np.int32)
    _scans[(1,)](x, out, BLOCK=8)
    r = out[:48].reshape(6, 8)
    assert r[0].tolist() == np.cumsum(x).tolist()
    assert r[1].tolist() == np.cumsum(x[::-1])[::-1].tolist()
    assert r[2].tolist() == np.cumprod(x).tolist()
    assert r[3].tolist() == np.cumprod(x[::-1])[::-1].tolist()
    assert r[4].tolist() == np.maximum.accumulate(x).tolist()
    assert r[5].tolist() == [int(np.argmax(x[:i + 1])) for i in range(8)]
    assert out[48:].tolist() == [5, 5]


@interp
def _scan2d(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=1))
    tl.store(out_ptr + M * N + offs, tl.cumsum(x, axis=0))


def test_scan_2d_float():
    x = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)
    out = np.zeros((2, 4, 8), np.float32)
    _scan2d[(1,)](x, out, M=4, N=8)
    np.testing.assert_allclose(out[0], np.cumsum(x, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1], np.cumsum(x, 0), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ shapes and dot

@interp
def _shapes(x_ptr, out_ptr):
    r = tl.arange(0, 4)
    c = tl.arange(0, 8)
    x = tl.load(x_ptr + r[:, None] * 8 + c[None, :])        # [4, 8]
    t = tl.trans(x)                                          # [8, 4]
    tl.store(out_ptr + c[:, None] * 4 + r[None, :], t)
    p = tl.permute(tl.reshape(x, (2, 2, 8)), (2, 0, 1))      # [8, 2, 2]
    flat = tl.reshape(p, (32,))
    tl.store(out_ptr + 32 + tl.arange(0, 32), flat)
    e = tl.expand_dims(r, (0, 2))                            # [1, 4, 1]
    b = tl.broadcast_to(e, (2, 4, 2))
    tl.store(out_ptr + 64 + tl.arange(0, 16), tl.reshape(b, (16,)))
    j = tl.join(r, r + 10)                                   # [4, 2]
    tl.store(out_ptr + 80 + tl.arange(0, 8), tl.reshape(j, (8,)))
    lo, hi = tl.split(j)
    tl.store(out_ptr + 88 + r, hi - lo)
    cc = tl.cat(r, r + 100, can_reorder=True)
    tl.store(out_ptr + 92, tl.sum(cc, axis=0))
    tl.store(out_ptr + 93 + r, tl.sum(x, axis=1) + r[None, :].reshape(4) * 0)
    z = tl.zeros((4,), tl.int32) + tl.full((4,), 3, tl.int32)
    tl.store(out_ptr + 97 + r, z)


def test_shape_ops():
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    out = np.zeros(101, np.int32)
    _shapes[(1,)](x, out)
    assert out[:32].reshape(8, 4).tolist() == x.T.tolist()
    assert out[32:64].tolist() == np.transpose(x.reshape(2, 2, 8), (2, 0, 1)).reshape(-1).tolist()
    assert out[64:80].tolist() == np.broadcast_to(np.arange(4)[None, :, None], (2, 4, 2)).reshape(-1).tolist()
    assert out[80:88].tolist() == np.stack([np.arange(4), np.arange(4) + 10], -1).reshape(-1).tolist()
    assert out[88:92].tolist() == [10] * 4
    assert out[92] == 2 * 6 + 400
    assert out[93:97].tolist() == x.sum(1).tolist()
    assert out[97:].tolist() == [3] * 4


@interp
def _dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    acc = tl.zeros((M, N), tl.float32)
    for _ in range(2):
        acc += tl.dot(a, b)
    tl.store(c_ptr + m[:, None] * N + n[None, :], acc)


@pytest.mark.parametrize("dt", [np.float32, np.float16])
def test_dot_in_a_loop(dt):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((16, 32)).astype(dt), rng.standard_normal((32, 16)).astype(dt)
    c = np.zeros((16, 16), np.float32)
    _dot[(1,)](a, b, c, M=16, N=16, K=32)
    np.testing.assert_allclose(c, 2 * (a.astype(np.float64) @ b.astype(np.float64)), rtol=1e-4, atol=1e-4)


@interp
def _dot_i8(a_ptr, b_ptr, c_ptr):
    i = tl.arange(0, 16)
    k = tl.arange(0, 32)
    a = tl.load(a_ptr + i[:, None] * 32 + k[None, :])
    b = tl.load(b_ptr + k[:, None] * 16 + i[None, :])
    tl.store(c_ptr + i[:, None] * 16 + i[None, :], tl.dot(a, b))


def test_int8_dot():
    rng = np.random.default_rng(5)
    a = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    b = rng.integers(-128, 128, (32, 16)).astype(np.int8)
    c = np.zeros((16, 16), np.int32)
    _dot_i8[(1,)](a, b, c)
    assert np.array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


# ------------------------------------------------------------------ atomics

@interp
def _atomics(cnt_ptr, vals_ptr, old_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(vals_ptr + offs, mask=mask)
    same = cnt_ptr + offs * 0  # every lane hits one address
    tl.atomic_add(same, v, mask=mask)
    tl.atomic_max(same + 1, v, mask=mask)
    tl.atomic_min(same + 2, v, mask=mask)
    tl.atomic_and(same + 3, v, mask=mask)
    tl.atomic_or(same + 4, v, mask=mask)
    tl.atomic_xor(same + 5, v, mask=mask)
    old = tl.atomic_xchg(same + 6, v, mask=mask)
    tl.store(old_ptr + offs, old, mask=mask)


def test_atomics_all_kinds():
    vals = np.random.default_rng(6).integers(-1000, 1000, 37).astype(np.int32)
    cnt = np.array([0, -2 ** 31, 2 ** 31 - 1, -1, 0, 0, -5], np.int32)
    old = np.zeros(37, np.int32)
    _atomics[(3,)](cnt, vals, old, 37, BLOCK=16)
    assert cnt[:6].tolist() == [vals.sum(), vals.max(), vals.min(), np.bitwise_and.reduce(vals),
                                np.bitwise_or.reduce(vals), np.bitwise_xor.reduce(vals)]
    assert cnt[6] == vals[-1] and old.tolist() == [-5] + vals[:-1].tolist()  # lane order, program order


@interp
def _float_atomics(out_ptr, vals_ptr, BLOCK: tl.constexpr):
    v = tl.load(vals_ptr + tl.arange(0, BLOCK))
    tl.atomic_max(out_ptr + tl.arange(0, BLOCK) * 0, v)
    tl.atomic_min(out_ptr + 1 + tl.arange(0, BLOCK) * 0, v)
    tl.atomic_add(out_ptr + 2 + tl.arange(0, BLOCK) * 0, v)


def test_float_atomic_max_min_add():
    vals = np.array([-3.5, 2.25, -0.5, 8.0, -9.75, 1.0, 0.0, 4.5], np.float32)
    out = np.array([-np.inf, np.inf, 0.0], np.float32)
    _float_atomics[(1,)](out, vals, BLOCK=8)
    assert out.tolist() == [8.0, -9.75, float(vals.sum())]


@interp
def _spin_lock(lock_ptr, counter_ptr, log_ptr):
    pid = tl.program_id(0)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    c = tl.load(counter_ptr)
    tl.store(log_ptr + pid, c)
    tl.store(counter_ptr, c + 1)
    tl.atomic_xchg(lock_ptr, 0)


def test_cas_spin_lock():
    lock, counter = np.zeros(1, np.int32), np.zeros(1, np.int32)
    log = np.full(6, -1, np.int32)
    _spin_lock[(6,)](lock, counter, log)
    assert counter[0] == 6 and lock[0] == 0 and sorted(log.tolist()) == list(range(6))


# ------------------------------------------------------------------ control flow and calls

@triton.jit
def _square_plus(x, y: tl.constexpr):
    return x * x + y


@interp
def _control(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(n):                        # loop-carried tensor
        acc += tl.load(x_ptr + i * BLOCK + offs)
    for i in tl.range(0, 3):
        acc = acc + i
    for i in tl.static_range(2):
        acc = acc * 2
    k = 0
    while k < 5:
        k += 2
    if n > 2:
        acc = acc + 1000
    else:
        acc = acc - 1000
    acc = _square_plus(acc, 1)
    tl.store(out_ptr + offs, acc + k)


@pytest.mark.parametrize("n", [1, 3])
def test_loops_branches_and_jit_calls(n):
    x = np.random.default_rng(n).standard_normal((n, 8)).astype(np.float32)
    out = np.zeros(8, np.float32)
    _control[(1,)](x, out, n, BLOCK=8)
    acc = (x.sum(0, dtype=np.float32) + 3) * 4 + (1000 if n > 2 else -1000)
    np.testing.assert_allclose(out, acc * acc + 1 + 6, rtol=1e-5)


@interp
def _early_return(out_ptr, limit):
    pid = tl.program_id(0)
    if pid >= limit:
        return
    tl.store(out_ptr + pid, pid + 1)


def test_early_return():
    out = np.zeros(8, np.int32)
    _early_return[(8,)](out, 5)
    assert out.tolist() == [1, 2, 3, 4, 5, 0, 0, 0]


@interp
def _grid3d(out_ptr):
    x, y, z = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    nx, ny, nz = tl.num_programs(0), tl.num_programs(1), tl.num_programs(2)
    idx = (z * ny + y) * nx + x
    tl.store(out_ptr + idx, x * 100 + y * 10 + z + 0 * nz)


def test_3d_grid_program_ids():
    out = np.zeros(4 * 3 * 2, np.int32)
    _grid3d[(4, 3, 2)](out)
    ref = [x * 100 + y * 10 + z for z in range(2) for y in range(3) for x in range(4)]
    assert out.tolist() == ref
    out2 = np.zeros(6, np.int32)
    _grid3d[lambda meta: (2, 3)](out2)
    assert out2.tolist() == [x * 100 + y * 10 for y in range(3) for x in range(2)]


@interp
def _order(log_ptr, counter_ptr):
    slot = tl.atomic_add(counter_ptr, 1)
    tl.store(log_ptr + slot, tl.program_id(0))


def test_program_order_and_shuffle(monkeypatch):
    log, counter = np.zeros(16, np.int32), np.zeros(1, np.int32)
    _order[(16,)](log, counter)
    assert log.tolist() == list(range(16))
    assert program_order((2, 2, 1), False) == [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)]
    monkeypatch.setenv("TRITIUM_INTERPRET_SHUFFLE", "1")
    orders = set()
    for _ in range(4):
        log[:], counter[:] = 0, 0
        _order[(16,)](log, counter)
        assert sorted(log.tolist()) == list(range(16))
        orders.add(tuple(log.tolist()))
    assert len(orders) > 1


# ------------------------------------------------------------------ debugging

@interp
def _assert_positive(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_assert(x > 0, "x must be positive")


def test_device_assert():
    _assert_positive[(1,)](np.ones(4, np.int32), BLOCK=4)
    pattern = r"program \(0, 0, 0\) at .*test_interp_language.py:\d+ .*lane\(s\) \[\(2,\)\].*x must be positive"
    with pytest.raises(DeviceAssertionError, match=pattern):
        _assert_positive[(1,)](np.array([1, 2, -3, 4], np.int32), BLOCK=4)


@interp
def _printer(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_print("x", x)
    tl.device_print("pid", tl.program_id(0))


def test_device_print(capsys):
    _printer[(2,)](np.array([1, 2, 3, 4], np.int32), BLOCK=4)
    out = capsys.readouterr().out.splitlines()
    assert out == ["pid (0, 0, 0) x: [1 2 3 4]", "pid (0, 0, 0) pid: 0",
                   "pid (1, 0, 0) x: [1 2 3 4]", "pid (1, 0, 0) pid: 1"]


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


@interp
def _philox(out_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a, b, c, d = tl.randint4x(seed, offs * 0)
    tl.store(out_ptr + offs * 4 + 0, a)
    tl.store(out_ptr + offs * 4 + 1, b)
    tl.store(out_ptr + offs * 4 + 2, c)
    tl.store(out_ptr + offs * 4 + 3, d)
    tl.store(out_ptr + 4 * BLOCK + offs, tl.rand(seed, offs).to(tl.uint32, bitcast=True))
    tl.device_print("r", a, hex=True)


def test_philox_known_answer_and_rand(capsys):
    # Random123's known-answer vector for philox4x32-10 with zero counter and key
    out = np.zeros(4 * 4 + 4, np.uint32)
    _philox[(1,)](out, 0, BLOCK=4)
    assert out[:4].tolist() == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert (out[:16].reshape(4, 4) == out[:4]).all()
    u = out[16:].view(np.float32)
    assert ((u >= 0) & (u < 1)).all() and len(set(u.tolist())) == 4
    assert capsys.readouterr().out.strip() == "pid (0, 0, 0) r: [0x6627e8d5 0x6627e8d5 0x6627e8d5 0x6627e8d5]"


@interp
def _dot_prec(a_ptr, b_ptr, c_ptr, PREC: tl.constexpr):
    i = tl.arange(0, 16)
    a = tl.load(a_ptr + i[:, None] * 16 + i[None, :])
    b = tl.load(b_ptr + i[:, None] * 16 + i[None, :])
    tl.store(c_ptr + i[:, None] * 16 + i[None, :], tl.dot(a, b, input_precision=PREC))


@pytest.mark.parametrize("prec", ["ieee", "tf32", "tf32x3"])
def test_dot_input_precisions_compute_fp32(prec):
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((16, 16)).astype(np.float32), rng.standard_normal((16, 16)).astype(np.float32)
    c = np.zeros((16, 16), np.float32)
    _dot_prec[(1,)](a, b, c, PREC=prec)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


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


@triton.jit
def _helper_kind(x, N: tl.constexpr):
    # plain Python values, as in Triton's interpreter (so `N is True` works)
    tl.static_assert(type(N) is int)
    return x + N


@interp
def _uses_call_hook(out_ptr):
    from tritium.interpreter import call_jit_in_interpreter
    tl.store(out_ptr, call_jit_in_interpreter(_helper_kind, tl.program_id(0), 41))


def test_call_jit_in_interpreter_passes_constexpr_params_unwrapped():
    out = np.zeros(1, np.int32)
    _uses_call_hook[(1,)](out)
    assert out[0] == 41
    with pytest.raises(RuntimeError, match="inside a @jit kernel"):
        from tritium.interpreter import call_jit_in_interpreter
        call_jit_in_interpreter(_helper_kind, 1, 2)
