"""Regression tests for the gaps found while auditing issue 2: each test failed
before its fix (interpreter constexprs, debug-only device asserts, Triton's
error classes, early returns nested inside dynamic ifs)."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import _core
from tritium.interpreter import DeviceAssertionError
from ir_util import ir_text, ops

interp = triton.jit(interpret=True)


# ---------------------------------------------------------------- constexprs in the interpreter
# Triton's interpreter hands constexpr parameters (and None arguments) to the
# kernel as plain Python values, so identity tests behave as in Python.

@triton.jit
def _identity_flags(x_ptr, o_ptr, bias_ptr, FLAG: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(x_ptr + offs)
    if FLAG is True:
        v = v * 2
    if FLAG is False:
        v = v - 100
    if bias_ptr is not None:
        v += tl.load(bias_ptr + offs)
    tl.store(o_ptr + offs, v)


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("with_bias", [True, False])
def test_constexpr_identity_in_interpreter_and_compiler(flag, with_bias):
    x = np.arange(8, dtype=np.float32)
    bias = np.full(8, 0.5, np.float32) if with_bias else None
    out = np.zeros(8, np.float32)
    interp(_identity_flags.fn)[(1,)](x, out, bias, FLAG=flag, N=8)
    expect = (x * 2 if flag else x - 100) + (0.5 if with_bias else 0)
    np.testing.assert_array_equal(out, expect)
    # the compiler takes the same branches: one mul (flag) or one sub, one extra load with a bias
    text = ir_text(_identity_flags, "*fp32 *fp32 *fp32" if with_bias else "*fp32 *fp32", FLAG=flag, N=8,
                   **({} if with_bias else {"bias_ptr": None}))
    assert ops(text, "mul") == int(flag) and ops(text, "sub") == int(not flag)
    assert ops(text, "load") == 1 + int(with_bias)


@triton.jit
def _flag_is_one(o_ptr, FLAG: tl.constexpr):
    # a bool is not an int: `True is 1` is false in Python and in Triton
    tl.store(o_ptr, 1 if FLAG is True else 0)
    tl.store(o_ptr + 1, 1 if FLAG == 1 else 0)


def test_bool_constexpr_distinct_from_int():
    for flag, expect in ((True, [1, 1]), (1, [0, 1])):
        out = np.zeros(2, np.int32)
        interp(_flag_is_one.fn)[(1,)](out, FLAG=flag)
        assert out.tolist() == expect


# ---------------------------------------------------------------- device_assert follows debug

@triton.jit
def _asserting(x_ptr, N: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, N))
    tl.device_assert(v < 100, "too big")
    assert N > 0, "python assert on a constexpr stays static"
    tl.device_assert(False, "always fails")


def _assert_count(kernel, **kw) -> int:
    data = kernel.compile_ir(signature="*fp32", constexprs={"N": 8}, **kw)
    _core.verify(data)
    return _core.to_text(data).count('"assert"(')


def test_device_assert_only_in_debug_mode(monkeypatch):
    monkeypatch.delenv("TRITON_DEBUG", raising=False)
    monkeypatch.delenv("TRITIUM_DEBUG", raising=False)
    assert _assert_count(_asserting) == 0
    assert _assert_count(_asserting, debug=True) == 2
    assert _assert_count(triton.jit(debug=True)(_asserting.fn)) == 2
    assert _assert_count(triton.jit(debug=True)(_asserting.fn), debug=False) == 0
    monkeypatch.setenv("TRITON_DEBUG", "1")
    assert _assert_count(_asserting) == 2
    monkeypatch.delenv("TRITON_DEBUG")
    monkeypatch.setenv("TRITIUM_DEBUG", "1")
    assert _assert_count(_asserting) == 2


def test_warmup_debug_option_keeps_asserts(monkeypatch):
    monkeypatch.delenv("TRITON_DEBUG", raising=False)
    monkeypatch.delenv("TRITIUM_DEBUG", raising=False)
    x = np.zeros(8, np.float32)
    assert _asserting.warmup(x, N=8, grid=(1,)).asm["ir"].count('"assert"(') == 0
    assert _asserting.warmup(x, N=8, grid=(1,), debug=True).asm["ir"].count('"assert"(') == 2


def test_interpreter_always_checks_device_assert(monkeypatch):
    monkeypatch.delenv("TRITON_DEBUG", raising=False)
    x = np.zeros(8, np.float32)
    with pytest.raises(DeviceAssertionError, match="always fails"):
        interp(_asserting.fn)[(1,)](x, N=8)


# ---------------------------------------------------------------- Triton's error classes

def test_error_classes_importable_where_triton_users_look():
    from tritium.compiler import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct
    from tritium.compiler.errors import CompilationError as E2
    assert CompilationError is E2 is triton.CompilationError
    assert issubclass(CompileTimeAssertionFailure, CompilationError)
    assert issubclass(UnsupportedLanguageConstruct, CompilationError)


@triton.jit
def _static_assert_fails(x_ptr, N: tl.constexpr):
    tl.static_assert(N > 10, "N too small")


@triton.jit
def _uses_lambda(x_ptr):
    f = lambda a: a  # noqa: E731
    tl.store(x_ptr, f(1))


@triton.jit
def _uses_break(x_ptr, n):
    for i in range(n):
        break


def test_static_assert_raises_compile_time_assertion_failure():
    from tritium.compiler.errors import CompileTimeAssertionFailure
    with pytest.raises(CompileTimeAssertionFailure, match="N too small") as info:
        _static_assert_fails.compile_ir(signature="*i32", constexprs={"N": 2})
    assert info.value.__cause__ is None and info.value.__suppress_context__ or info.value.__context__ is None
    assert "tl.static_assert(N > 10" in str(info.value)


@pytest.mark.parametrize("kernel, sig, what", [(_uses_lambda, "*i32", "'lambda'"), (_uses_break, "*i32 i32", "'break'")])
def test_unsupported_constructs_raise_unsupported_language_construct(kernel, sig, what):
    from tritium.compiler.errors import UnsupportedLanguageConstruct
    with pytest.raises(UnsupportedLanguageConstruct, match=what):
        kernel.compile_ir(signature=sig)


def test_compile_errors_pickle_with_their_class():
    import pickle
    from tritium.compiler.errors import CompileTimeAssertionFailure
    with pytest.raises(CompileTimeAssertionFailure) as info:
        _static_assert_fails.compile_ir(signature="*i32", constexprs={"N": 2})
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is CompileTimeAssertionFailure and str(again) == str(info.value)


# ---------------------------------------------------------------- early returns nested in dynamic ifs

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
