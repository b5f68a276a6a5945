"""A `tl.constexpr` annotation on a @jit callee's parameter does not make the
caller's argument a compile-time constant (Triton 3.6 decides by the value:
a constant specializes the callee, a tensor or runtime scalar is bound as an
ordinary value). Tutorial 06 (fused attention) passes `tl.arange` results
and the kernel's runtime N_CTX into `offs_m: tl.constexpr`, `N_CTX:
tl.constexpr` of its inlined `_attn_fwd_inner`."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.compiler import CompilationError

from ir_util import ir_text, ops, verified_and_interpreted


@triton.jit
def _window_annotated(x, offs: tl.constexpr, lo, N: tl.constexpr, STEP: tl.constexpr):
    # offs: a tensor, N: a runtime int or a constant, STEP: a constant
    acc = tl.zeros_like(x)
    for start in range(lo, N, STEP):
        acc += tl.where(offs < start, x, 0.0)
    if STEP == 2:
        acc = acc * 2.0
    return acc + offs


@triton.jit
def _window_plain(x, offs, lo, N, STEP: tl.constexpr):
    acc = tl.zeros_like(x)
    for start in range(lo, N, STEP):
        acc += tl.where(offs < start, x, 0.0)
    if STEP == 2:
        acc = acc * 2.0
    return acc + offs


@triton.jit
def _calls_annotated(x_ptr, o_ptr, n, BLOCK: tl.constexpr, CONST_N: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if CONST_N:
        y = _window_annotated(x, offs, 0, BLOCK, 2)      # constants: N specializes
    else:
        y = _window_annotated(x, offs, 0, n, 2)          # a runtime int into N
    y += _window_annotated(x, offs, 1, N=n, STEP=3)   # keywords too
    tl.store(o_ptr + offs, y)


@triton.jit
def _calls_plain(x_ptr, o_ptr, n, BLOCK: tl.constexpr, CONST_N: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if CONST_N:
        y = _window_plain(x, offs, 0, BLOCK, 2)
    else:
        y = _window_plain(x, offs, 0, n, 2)
    y += _window_plain(x, offs, 1, N=n, STEP=3)
    tl.store(o_ptr + offs, y)


def _expected(x, n_first, n_second, block):
    offs = np.arange(x.size, dtype=np.float32)
    first = sum(np.where(offs < s, x, 0) for s in range(0, n_first, 2)) * 2 + offs
    second = sum(np.where(offs < s, x, 0) for s in range(1, n_second, 3)) + offs
    return (first + second).astype(np.float32)


@pytest.mark.parametrize("const_n", [False, True])
def test_tensor_and_runtime_int_into_constexpr_params_interpreted(const_n):
    block, n = 16, 11
    x = np.linspace(-1, 1, 2 * block).astype(np.float32)
    results = []
    for kernel in (_calls_annotated, _calls_plain):
        out = np.zeros_like(x)
        _, got, _ = verified_and_interpreted(kernel, (2,), [x, out, n], BLOCK=block, CONST_N=const_n)
        results.append(got)
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_allclose(results[0], _expected(x, block if const_n else n, n, block), rtol=1e-6)


@pytest.mark.parametrize("const_n", [False, True])
def test_annotated_callee_compiles_like_the_plain_one(const_n):
    annotated = ir_text(_calls_annotated, "*fp32 *fp32 i32", BLOCK=16, CONST_N=const_n)
    plain = ir_text(_calls_plain, "*fp32 *fp32 i32", BLOCK=16, CONST_N=const_n)
    assert ops(annotated, "call") == 0
    # the same program: the annotation changes nothing once the values are bound
    def body(text, name):
        return re.sub(r' loc\("[^"]*":\d+:\d+\)', "", text).replace(name, "K")
    assert body(annotated, "_calls_annotated") == body(plain, "_calls_plain")
    assert ops(annotated, "for") == 2


@triton.jit
def _static_use(offs, N: tl.constexpr):
    tl.static_assert(N > 0)
    return offs * N


@triton.jit
def _static_use_of_runtime(o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, _static_use(offs, n))


def test_runtime_value_in_a_constexpr_param_fails_where_it_is_used_statically():
    # bound as a runtime value, it fails where the callee needs a constant (as in Triton)
    with pytest.raises(CompilationError, match="static_assert needs a constexpr condition") as e:
        ir_text(_static_use_of_runtime, "*i32 i32", BLOCK=8)
    assert "tl.static_assert(N > 0)" in str(e.value) and "in '_static_use' called from" in str(e.value)


@triton.jit(noinline=True)
def _noinline_annotated(x, N: tl.constexpr):
    return x * N


@triton.jit
def _calls_noinline(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = _noinline_annotated(x, n) + _noinline_annotated(x, 3) + _noinline_annotated(x, 4)
    tl.store(x_ptr + offs, y)


def test_noinline_constexpr_param_takes_runtime_scalar_as_argument():
    # as Triton: a runtime scalar becomes an argument of the IR function, a
    # constant specializes it (one function per constant)
    text = ir_text(_calls_noinline, "*i32 i32", BLOCK=8)
    assert ops(text, "call") == 3
    assert text.count("func @") == 4  # kernel + (runtime N) + N=3 + N=4
    x = np.arange(8, dtype=np.int32)
    got = verified_and_interpreted(_calls_noinline, (1,), [x, 5], BLOCK=8)[0]
    np.testing.assert_array_equal(got, np.arange(8) * 12)

