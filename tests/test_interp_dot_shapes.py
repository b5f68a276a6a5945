"""Shape ops and `tl.dot` in the interpreter: reshape/permute/join/split, dots
in a loop, int8 dot, input precisions."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

interp = triton.jit(interpret=True)


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
