"""Calls of @jit functions: inlining (also across modules), noinline
functions with one IR function per specialization, and the jit API."""
import pytest

import tritium as triton
import tritium.language as tl
from frontend_helpers import masked_load, scaled, twice
from ir_util import ir_text, ops


@triton.jit
def cross_module(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = masked_load(x_ptr, offs, n)
    scaled(x)  # a call used as a statement
    tl.store(x_ptr + offs, scaled(x), mask=offs < n)


def test_inline_from_other_module_uses_its_globals():
    text = ir_text(cross_module, "*fp32 i32", BLOCK=16)
    assert ops(text, "call") == 0 and "value = 3.0" in text
    assert "func @" in text and text.count("func @") == 1


@triton.jit
def noinline_kernel(x_ptr, y_ptr):
    x = tl.load(x_ptr)
    y = tl.load(y_ptr)
    tl.store(x_ptr, twice(x) + twice(x + 1.0))
    tl.store(y_ptr, twice(y))


def test_noinline_emits_call_and_function_per_specialization():
    text = ir_text(noinline_kernel, "*fp32 *i32")
    assert ops(text, "call") == 3
    assert text.count("func @") == 3  # kernel + twice(f32) + twice(i32)
    assert 'callee = "twice"' in text and 'callee = "twice_1"' in text
    assert "attributes {noinline}" in text


@triton.jit
def kw_helper(a, b, c: tl.constexpr = 2):
    return a * c + b


@triton.jit
def kwargs_kernel(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, kw_helper(b=x, a=x) + kw_helper(x, x, c=5))


def test_keyword_arguments_and_defaults():
    text = ir_text(kwargs_kernel, "*i32")
    assert "value = 2" in text and "value = 5" in text


def test_jit_api_surface():
    assert repr(kwargs_kernel) == f"JITFunction({__name__}:kwargs_kernel)"
    assert kw_helper.arg_names == ["a", "b", "c"] and kw_helper.constexprs == [2]
    assert kwargs_kernel.src.lstrip().startswith("@triton.jit")
    with pytest.raises(RuntimeError, match="cannot be called directly"):
        kw_helper(1, 2)

    @triton.jit(noinline=True, do_not_specialize=["n"])
    def k(x, n):
        pass

    assert k.noinline and k.do_not_specialize == [1]


def test_launch_without_backend_compiles_then_explains(monkeypatch):
    import numpy as np
    from tritium.runtime import driver
    if driver.available():
        pytest.skip("a CUDA device is present: launches go to the GPU (tests/gpu/)")
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(RuntimeError, match="TRITIUM_INTERPRET=1"):
        kwargs_kernel[(1,)](x, num_warps=4)
    with pytest.raises(RuntimeError, match="TRITIUM_INTERPRET=1"):
        kwargs_kernel[lambda meta: (triton.cdiv(4, 2),)](x_ptr=x)


def test_launch_argument_errors():
    import numpy as np
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(TypeError, match=r"kwargs_kernel\(\) takes 1 (positional )?argument but 2 were given"):
        kwargs_kernel[(1,)](x, x)
    with pytest.raises(TypeError, match="missing 1 required (positional )?argument: 'x_ptr'"):
        kwargs_kernel[(1,)]()
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        kwargs_kernel[(1,)](x, bogus=1)


def test_host_helpers():
    assert triton.cdiv(10, 4) == 3 and triton.next_power_of_2(17) == 32 and triton.next_power_of_2(1) == 1
    import numpy as np
    triton.testing.assert_close(np.ones(3), np.ones(3) + 1e-3)
    with pytest.raises(AssertionError):
        triton.testing.assert_close(np.ones(3), np.zeros(3))


def test_heuristics_and_autotune_pass_meta_parameters(monkeypatch):
    seen = {}

    class Fake:
        arg_names = ["x", "n", "BLOCK", "EVEN"]

        def bind_call(self, *a):
            pass

        def run(self, *args, grid, **kwargs):
            seen.update(kwargs)

    tuned = triton.autotune([triton.Config({"BLOCK": 64}, num_warps=8)], key=["n"])(Fake())
    kernel = triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})(tuned)
    with pytest.raises(KeyError):
        kernel[(1,)](None, 128)  # BLOCK comes from the tuner, below the heuristic
    kernel2 = triton.autotune([triton.Config({"BLOCK": 64}, num_warps=8)], key=["n"])(
        triton.heuristics({"EVEN": lambda args: args["n"] % 64 == 0})(Fake()))
    kernel2[(1,)](None, 128)
    assert seen["BLOCK"] == 64 and seen["EVEN"] is True and seen["num_warps"] == 8
