"""Constexpr parameters in the interpreter are the plain values, as Triton's
interpreter passes them: identity tests such as `FLAG is True` or
`bias_ptr is None` behave as in the compiled kernel, and a bool constexpr
stays distinct from an int."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from ir_util import ir_text, ops

interp = triton.jit(interpret=True)






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
