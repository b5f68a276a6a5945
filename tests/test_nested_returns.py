"""Early returns nested inside dynamic ifs and elifs, in inlined functions and
in kernels: the compiled IR and the interpreter give Python's results, and
a kernel never falls through past a return."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from ir_util import ir_text, ops

interp = triton.jit(interpret=True)


@triton.jit
def _nested_return(x, n):
    if n > 0:
        if n > 5:
            return x * 5
        x = x + 1
    return x


@triton.jit
def _nested_return_elif(x, n):
    y = x
    if n > 0:
        y = x * 2
        if n > 5:
            return y * 5
        elif n > 3:
            return y * 3
        y = y + 1
    else:
        y = y - 1
    y = y + 10
    return y


@triton.jit
def _sequential_returns(x, n):
    if n == 1:
        return x + 1
    if n == 2:
        return x + 2
    if n == 3:
        return x + 3
    return x


@triton.jit
def _returns_kernel(x_ptr, o_ptr, n, N: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, N))
    tl.store(o_ptr + tl.arange(0, N), _nested_return(v, n))
    tl.store(o_ptr + N + tl.arange(0, N), _nested_return_elif(v, n))
    tl.store(o_ptr + 2 * N + tl.arange(0, N), _sequential_returns(v, n))


@triton.jit
def _kernel_nested_return(x_ptr, o_ptr, n, N: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, N))
    if n > 0:
        if n > 5:
            tl.store(o_ptr + tl.arange(0, N), v * 5)
            return
        v = v + 1
    tl.store(o_ptr + tl.arange(0, N), v)


def _py_nested(x, n):
    if n > 0:
        if n > 5:
            return x * 5
        x = x + 1
    return x


def _py_nested_elif(x, n):
    y = x
    if n > 0:
        y = x * 2
        if n > 5:
            return y * 5
        elif n > 3:
            return y * 3
        y = y + 1
    else:
        y = y - 1
    return y + 10


@pytest.mark.parametrize("n", range(8))
def test_nested_returns_in_inlined_functions(n):
    x = np.arange(8, dtype=np.float32) - 3.5
    out = np.zeros(24, np.float32)
    interp(_returns_kernel.fn)[(1,)](x, out, n, N=8)
    np.testing.assert_allclose(out[:8], _py_nested(x, n))
    np.testing.assert_allclose(out[8:16], _py_nested_elif(x, n))
    np.testing.assert_allclose(out[16:], x + n if n in (1, 2, 3) else x)


def test_nested_returns_compile():
    text = ir_text(_returns_kernel, "*fp32 *fp32 i32", N=8)
    assert ops(text, "store") == 3 and ops(text, "if") >= 6


def _top_level_ops(text: str) -> list[str]:
    """Op names directly in the kernel body (one indentation level deep)."""
    body = text.split("{", 1)[1]
    names = []
    for line in body.splitlines():
        stripped = line.lstrip()
        if len(line) - len(stripped) == 2 and '"' in stripped:
            names.append(stripped.split('"')[1])
    return names


def test_kernel_nested_return_does_not_fall_through():
    x = np.arange(8, dtype=np.float32)
    for n in (0, 3, 7):
        out = np.zeros(8, np.float32)
        interp(_kernel_nested_return.fn)[(1,)](x, out, n, N=8)
        np.testing.assert_allclose(out, _py_nested(x, n))
    text = ir_text(_kernel_nested_return, "*fp32 *fp32 i32", N=8)
    # the final store runs only on paths that did not return: it must sit inside
    # the ifs, once per fall-through path, never after them at the top level
    assert ops(text, "store") == 3
    top = _top_level_ops(text)
    assert "store" not in top and top[-1] == "return", top
