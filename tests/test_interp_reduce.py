"""Reductions and scans in the interpreter: built-in and user combine functions,
tuple reductions, float32 results, 2-D scans."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

interp = triton.jit(interpret=True)


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
