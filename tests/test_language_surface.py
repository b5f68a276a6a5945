"""The triton.language surface written as a Triton user writes it (shapes,
bools, casts, math, reductions and scans, dot, atomics, control flow,
hints, constexpr globals, prints): every kernel here must both compile to
IR the Rust verifier accepts and run in the interpreter matching NumPy."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from ir_util import verified_and_interpreted

import frontend_helpers as other_module

f32 = np.float32
X8 = np.arange(8, dtype=f32) - 3.5




@triton.jit
def expand_multi(x_ptr, o_ptr, N: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, N))
    w = tl.expand_dims(v, (0, -1))
    tl.static_assert(w.shape[0] == 1 and w.shape[1] == N and w.shape[2] == 1)
    u = tl.expand_dims(v, (0, 2))
    tl.static_assert(len(u.shape) == 3 and u.shape[2] == 1)
    tl.store(o_ptr + tl.arange(0, N), tl.reshape(w, (N,)) + tl.sum(tl.sum(u, 2), 0))


def test_expand_dims_several_axes():
    _, o = verified_and_interpreted(expand_multi, (1,), [X8, np.zeros(8, f32)], N=8)
    np.testing.assert_array_equal(o, 2 * X8)


@triton.jit
def shape_ops(x_ptr, o_ptr, N: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, N))
    a = tl.broadcast_to(v[None, :], (4, N))
    b, _ = tl.broadcast(v[:, None], a.T)
    c = tl.reshape(a, (2, 2 * N)).reshape(4, N)
    d = c.view(4 * N)
    e = tl.trans(a)
    s = tl.sum(tl.permute(e, (1, 0)) + tl.permute(e, 1, 0), 0) + tl.sum(b, 1) + tl.sum(d.reshape(4, N), 0)
    tl.store(o_ptr + tl.arange(0, N), s)
    j = tl.join(v, v * 2)
    p, q = tl.split(j)
    tl.store(o_ptr + N + tl.arange(0, 2 * N), tl.reshape(j, 2 * N))
    tl.store(o_ptr + 3 * N + tl.arange(0, N), p + q)
    cat = tl.cat(p, q, can_reorder=True)
    tl.store(o_ptr + 4 * N + tl.arange(0, N), tl.sum(tl.reshape(cat, (2, N)), 0))
    tl.store(o_ptr + 5 * N + tl.arange(0, 2 * N), tl.interleave(v, v))


def test_shape_ops():
    _, o = verified_and_interpreted(shape_ops, (1,), [X8, np.zeros(56, f32)], N=8)
    np.testing.assert_allclose(o[:8], 16 * X8)
    np.testing.assert_array_equal(o[8:24], np.stack([X8, 2 * X8], -1).ravel())
    np.testing.assert_array_equal(o[24:32], 3 * X8)
    np.testing.assert_array_equal(o[32:40], 3 * X8)
    np.testing.assert_array_equal(o[40:56], np.repeat(X8, 2))




@triton.jit
def bool_logic(o_ptr, a, b, A: tl.constexpr, B: tl.constexpr):
    r = tl.where(a and b, 1, 0) + tl.where(a or b, 10, 0) + tl.where(not a, 100, 0)
    if A and B:
        r += 1000
    if A or B:
        r += 10000
    if not A:
        r += 100000
    tl.store(o_ptr, r)


@pytest.mark.parametrize("a, b, A, B", [(p, q, P, Q) for p in (True, False) for q in (True, False)
                                         for P in (True, False) for Q in (True, False)])
def test_and_or_not_on_scalar_bools_and_constexprs(a, b, A, B):
    (o,) = verified_and_interpreted(bool_logic, (1,), [np.zeros(1, np.int32), a, b], A=A, B=B)[:1]
    assert o[0] == (a and b) + 10 * (a or b) + 100 * (not a) + 1000 * (A and B) + 10000 * (A or B) + 100000 * (not A)


@triton.jit
def casts(x_ptr, o_ptr, oi_ptr, N: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, N))
    tl.store(oi_ptr + tl.arange(0, N), v.to(tl.int32, bitcast=True))
    back = tl.cast(tl.cast(v, tl.uint32, bitcast=True), tl.float32, bitcast=True)
    low = v.to(tl.float16).to(tl.float32) + v.to(tl.bfloat16).to(tl.float32) \
        + v.to(tl.float8e4nv).to(tl.float32) + v.to(tl.float8e5).to(tl.float32)
    tl.store(o_ptr + tl.arange(0, N), low + back)


def test_casts_bitcast_and_low_precision():
    _, o, oi = verified_and_interpreted(casts, (1,), [X8, np.zeros(8, f32), np.zeros(8, np.int32)], N=8)
    np.testing.assert_array_equal(oi, X8.view(np.int32))
    np.testing.assert_allclose(o, 5 * X8)  # halves are exact in every format


@triton.jit
def math_fns(x_ptr, o_ptr, N: tl.constexpr):
    v = tl.abs(tl.load(x_ptr + tl.arange(0, N))) + 0.5
    r = tl.exp(v) + tl.exp2(v) + tl.log(v) + tl.log2(v) + tl.sqrt(v) + tl.sqrt_rn(v) + tl.rsqrt(v) + tl.abs(-v)
    r += tl.sin(v) + tl.cos(v) + tl.floor(v) + tl.ceil(v) + tl.erf(v) + tl.fma(v, v, v) + tl.sigmoid(v)
    r += tl.div_rn(v, 3.0) + tl.fdiv(v, 3.0) + tl.math.fdiv(v, 3.0, ieee_rounding=True)
    r += tl.where(v > 2, v, -v) + tl.minimum(v, 1.0) + tl.maximum(v, 2.0) + tl.clamp(v, 1.0, 3.0)
    tl.store(o_ptr + tl.arange(0, N), r)


def test_math_functions():
    _, o = verified_and_interpreted(math_fns, (1,), [X8, np.zeros(8, f32)], N=8)
    v = np.abs(X8).astype(np.float64) + 0.5
    erf = np.vectorize(math.erf)
    ref = np.exp(v) + np.exp2(v) + np.log(v) + np.log2(v) + 2 * np.sqrt(v) + 1 / np.sqrt(v) + v + np.sin(v) \
        + np.cos(v) + np.floor(v) + np.ceil(v) + erf(v) + v * v + v + 1 / (1 + np.exp(-v)) + v \
        + np.where(v > 2, v, -v) + np.minimum(v, 1) + np.maximum(v, 2) + np.clip(v, 1, 3)
    np.testing.assert_allclose(o, ref, rtol=1e-5)


@triton.jit
def mulhi(a_ptr, b_ptr, o_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(o_ptr + r, tl.umulhi(tl.load(a_ptr + r), tl.load(b_ptr + r)))


def test_umulhi_is_the_unsigned_high_half():
    a = np.array([0xFFFFFFFF, 123456789, 2**31, 7, 0, 1, 99, 2**30], np.uint32)
    b = np.array([0xFFFFFFFF, 987654321, 3, 7, 5, 1, 2**31 + 5, 8], np.uint32)
    ref = ((a.astype(np.uint64) * b.astype(np.uint64)) >> 32).astype(np.uint32)
    assert np.array_equal(verified_and_interpreted(mulhi, (1,), [a, b, np.zeros(8, np.uint32)], N=8)[2], ref)
    got = verified_and_interpreted(mulhi, (1,), [a.view(np.int32), b.view(np.int32), np.zeros(8, np.int32)], N=8)[2]
    assert np.array_equal(got, ref.view(np.int32))




@triton.jit
def _first_min(v1, i1, v2, i2):
    pick = (v1 < v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(pick, v1, v2), tl.where(pick, i1, i2)


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _affine(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@triton.jit
def reductions(x_ptr, o_ptr, oi_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    v = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    idx = tl.broadcast_to(rn[None, :], (M, N))
    mv, mi = tl.reduce((v, idx), 1, _first_min)
    tl.store(o_ptr + rm, mv)
    tl.store(oi_ptr + rm, mi)
    kept = tl.reduce(v, 1, _add, keep_dims=True)
    tl.static_assert(kept.shape[1] == 1)
    tl.store(o_ptr + M + rm[:, None], kept)
    tl.store(o_ptr + 2 * M, tl.sum(v, axis=None))
    tl.store(oi_ptr + M + rn, tl.argmax(v, 0, tie_break_left=False))
    tl.store(oi_ptr + M + N + rm, tl.xor_sum(idx * 3 + rm[:, None], 1))
    _, a = tl.associative_scan((tl.full((N,), 2.0, tl.float32), tl.load(x_ptr + rn)), 0, _affine)
    tl.store(o_ptr + 2 * M + 1 + rn, a)
    c = tl.cumsum(tl.load(x_ptr + rn), 0) + tl.cumprod(tl.load(x_ptr + rn), 0, reverse=True)
    tl.store(o_ptr + 2 * M + 1 + N + rn, c)


def test_reductions_and_scans():
    x = ((np.arange(32) * 7 % 11) - 5).astype(f32)
    _, o, oi = verified_and_interpreted(reductions, (1,), [x, np.zeros(32, f32), np.zeros(24, np.int32)], M=4, N=8)
    v = x.reshape(4, 8)
    np.testing.assert_array_equal(o[:4], v.min(1))
    np.testing.assert_array_equal(oi[:4], v.argmin(1))
    np.testing.assert_allclose(o[4:8], v.sum(1))
    assert o[8] == v.sum()
    np.testing.assert_array_equal(oi[4:12], 3 - np.argmax(v[::-1], 0))  # last index of the max
    idx = np.arange(8)[None, :] * 3 + np.arange(4)[:, None]
    np.testing.assert_array_equal(oi[12:16], np.bitwise_xor.reduce(idx, 1))
    affine = [x[0]]
    for j in range(1, 8):
        affine.append(affine[-1] * 2 + x[j])
    np.testing.assert_allclose(o[9:17], affine)
    np.testing.assert_allclose(o[17:25], np.cumsum(x[:8]) + np.cumprod(x[:8][::-1])[::-1])




@triton.jit
def dots(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    c = tl.dot(a, b)
    c = tl.dot(a, b, c, allow_tf32=False)
    c = tl.dot(a, b, acc=c, input_precision="ieee", out_dtype=tl.float32)
    tl.store(c_ptr + r[:, None] * N + r[None, :], c)


def test_dot():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 16, 16)).astype(f32)
    c = verified_and_interpreted(dots, (1,), [a, b, np.zeros((16, 16), f32)], N=16)[2]
    np.testing.assert_allclose(c, 3 * (a @ b), atol=1e-4)


@triton.jit
def atomics(p_ptr, v_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(v_ptr + offs)
    m = offs < 6
    tl.store(o_ptr + offs, tl.atomic_add(p_ptr + offs, v, mask=m, sem="relaxed", scope="gpu"))
    tl.atomic_max(p_ptr + N + offs, v, mask=m, sem="acquire", scope="cta")
    tl.atomic_min(p_ptr + 2 * N + offs, v, mask=m, sem="release", scope="sys")
    tl.atomic_and(p_ptr + 3 * N + offs, v, mask=m, sem="acq_rel")
    tl.atomic_or(p_ptr + 4 * N + offs, v, mask=m)
    tl.atomic_xor(p_ptr + 5 * N + offs, v, mask=m)
    tl.atomic_xchg(p_ptr + 6 * N + offs, v, mask=m)
    tl.atomic_cas(p_ptr + 7 * N + offs, tl.full((N,), 5, tl.int32), v, sem="acq_rel", scope="gpu")


def test_atomics_with_masks_and_sem_scope():
    v = np.arange(8, dtype=np.int32) * 3 - 4
    p, _, old = verified_and_interpreted(atomics, (1,), [np.full(64, 5, np.int32), v, np.zeros(8, np.int32)], N=8)
    e = np.full(64, 5, np.int32)
    s = slice(0, 6)
    e[0:6] += v[s]
    e[8:14] = np.maximum(5, v[s])
    e[16:22] = np.minimum(5, v[s])
    e[24:30] = 5 & v[s]
    e[32:38] = 5 | v[s]
    e[40:46] = 5 ^ v[s]
    e[48:54] = v[s]
    e[56:64] = v  # cas compares against 5: every lane swaps
    np.testing.assert_array_equal(p, e)
    np.testing.assert_array_equal(old[:6], 5)


@triton.jit
def spin_lock(lock, counter):
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(counter, tl.load(counter) + 1)
    tl.atomic_xchg(lock, 0)


def test_lock_with_cas_in_a_while_loop():
    _, counter = verified_and_interpreted(spin_lock, (5,), [np.zeros(1, np.int32), np.zeros(1, np.int32)])
    assert counter[0] == 5




@triton.jit
def control(x_ptr, o_ptr, n, N: tl.constexpr):
    acc = tl.zeros((N,), tl.float32)
    for i in range(0, n, 2):
        acc += tl.load(x_ptr + tl.arange(0, N)) * i
    for i in tl.range(0, n, num_stages=3, loop_unroll_factor=2):
        acc += 1.0
    for i in tl.static_range(3):
        acc += i
    j = 0
    while j < n:
        acc += 0.25
        j += 1
    if n > 3:
        y = acc * 2
        z = 1
    else:
        y = acc
        z = 2
    r = y + z if tl.program_id(0) == 0 else y - z
    tl.store(o_ptr + tl.arange(0, N), r + tl.cdiv(n, 3) + triton.cdiv(10, 3) + triton.next_power_of_2(5))


@pytest.mark.parametrize("n", [0, 2, 5])
def test_loops_if_merge_ternary(n):
    o = verified_and_interpreted(control, (1,), [X8, np.zeros(8, f32), n], N=8)[1]
    acc = sum((X8 * i for i in range(0, n, 2)), np.zeros(8, f32)) + n + 3 + 0.25 * n
    y, z = (acc * 2, 1) if n > 3 else (acc, 2)
    np.testing.assert_allclose(o, y + z + -(-n // 3) + 4 + 8)


@triton.jit
def _both_branches(x, n):
    if n > 0:
        return x * 2
    else:
        return x - 1


@triton.jit
def _after_static(x, FLAG: tl.constexpr):
    if FLAG:
        return x * 3
    return x + 1


@triton.jit
def returns(x_ptr, o_ptr, n, FLAG: tl.constexpr, N: tl.constexpr):
    pid = tl.program_id(0)
    if pid >= 1:
        return
    v = tl.load(x_ptr + tl.arange(0, N))
    if FLAG:
        tl.store(o_ptr + tl.arange(0, N), _both_branches(v, n) + _after_static(v, FLAG) + other_module.scaled(v))
        return
    _both_branches(v, n)  # a call used as a statement
    tl.store(o_ptr + tl.arange(0, N), other_module.masked_load(x_ptr, tl.arange(0, N), n))


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("n", [0, 3])
def test_early_return_forms(flag, n):
    o = verified_and_interpreted(returns, (4,), [X8, np.zeros(8, f32), n], FLAG=flag, N=8)[1]
    if flag:
        np.testing.assert_allclose(o, (X8 * 2 if n > 0 else X8 - 1) + X8 * 3 + X8 * 3)
    else:
        np.testing.assert_allclose(o, np.where(np.arange(8) < n, X8, 0))




MODULE_TWO = tl.constexpr(2)
MODULE_HALF = tl.constexpr(1.5)


@triton.jit
def hints_and_constexprs(x_ptr, o_ptr, n, N: tl.constexpr):
    M: tl.constexpr = N * MODULE_TWO // 4
    tl.static_assert(M == 4, "M must be 4")
    tl.static_print("M is", M)
    offs = tl.program_id(0) * M + tl.arange(0, M)
    offs = tl.max_constancy(tl.max_contiguous(tl.multiple_of(offs, 4), 4), 1)
    n = tl.multiple_of(n, 16)
    v = tl.load(x_ptr + offs)
    tl.device_print("v", v)
    tl.store(o_ptr + offs, v * MODULE_HALF + n + M)


def test_hints_constexpr_globals_and_prints(capsys):
    o = verified_and_interpreted(hints_and_constexprs, (2,), [X8, np.zeros(8, f32), 16], N=8)[1]
    np.testing.assert_allclose(o, X8 * 1.5 + 16 + 4)
    out = capsys.readouterr().out
    assert "M is 4" in out and "pid (1, 0, 0)" in out
