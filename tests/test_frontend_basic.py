"""Frontend basics: arguments, arithmetic, constexpr evaluation, names and
builtins, all compiled to IR and checked by the Rust verifier."""
import pytest

import tritium as triton
import tritium.language as tl
from tritium import _core
from ir_util import ir_text, ops
from kernels.vector_add import add_kernel

GLOBAL_BLOCK = tl.constexpr(64)


def test_vector_add_ir():
    text = ir_text(add_kernel, "*fp32 *fp32 *fp32 i32", BLOCK_SIZE=128)
    assert "func @add_kernel(%0: ptr<f32>, %1: ptr<f32>, %2: ptr<f32>, %3: i32) attributes {kernel}" in text
    assert '"arange"() {end = 128, start = 0}' in text
    assert ops(text, "load") == 2 and ops(text, "store") == 1 and ops(text, "addptr") == 3
    assert "tensor<128xf32>" in text


def test_locations_are_file_lines():
    import inspect
    text = ir_text(add_kernel, "*fp16 *fp16 *fp16 i32", BLOCK_SIZE=32)
    first = inspect.getsourcelines(add_kernel.fn)[1]
    # `pid = tl.program_id(axis=0)` is the third line of the decorated source
    path = inspect.getsourcefile(add_kernel.fn)
    assert f'{path}":{first + 2}:10)' in text.replace("loc(\"", "")


def test_compile_from_example_args():
    import numpy as np
    x = np.zeros(16, dtype=np.float16)
    data = add_kernel.compile_ir(x, x, x, 16, BLOCK_SIZE=16)
    text = _core.to_text(data)
    assert "%0: ptr<f16>" in text and "%3: i32" in text


def test_int_args_typed_by_value():
    import numpy as np
    x = np.zeros(4, dtype=np.float32)
    text = _core.to_text(add_kernel.compile_ir(x, x, x, 2 ** 40, BLOCK_SIZE=4))
    assert "%3: i64" in text


@triton.jit
def constexpr_math(out_ptr, N: tl.constexpr):
    HALF = N // 2
    M: tl.constexpr = HALF * 2 + 1 - 1
    if M == N:
        tl.store(out_ptr + tl.arange(0, HALF), tl.full((HALF,), 1.0, tl.float32))
    else:
        tl.store(out_ptr, 0.0)


def test_constexpr_arithmetic_and_static_if():
    text = ir_text(constexpr_math, "*fp32", N=16)
    assert "tensor<8xf32>" in text
    assert ops(text, "if") == 0 and ops(text, "store") == 1


@triton.jit
def uses_global(out_ptr):
    tl.store(out_ptr + tl.arange(0, GLOBAL_BLOCK), tl.zeros((GLOBAL_BLOCK,), tl.int32))


def test_constexpr_global():
    assert "tensor<64xi32>" in ir_text(uses_global, "*i32")


def make_closure_kernel(width):
    @triton.jit
    def closure_kernel(out_ptr):
        tl.store(out_ptr + tl.arange(0, width), tl.zeros((width,), tl.float16))
    return closure_kernel


def test_closure_values():
    assert "tensor<32xf16>" in ir_text(make_closure_kernel(32), "*fp16")


@triton.jit
def builtins_kernel(out_ptr, n, A: tl.constexpr, B: tl.constexpr):
    small = min(A, B)
    big = max(A, B)
    t = (A, B, 4)
    total = len(t) + int(2.7) + abs(-1)
    for k, v in enumerate(t):
        if k == 0:
            tl.static_assert(v == A)
    m = max(n, 3)
    tl.store(out_ptr + tl.arange(0, small), tl.zeros((small,), tl.int32) + big + total + m)


def test_python_builtins():
    text = ir_text(builtins_kernel, "*i32 i32", A=8, B=16)
    assert "tensor<8xi32>" in text
    assert '"max"(' in text  # max(n, 3) with a runtime n is tl.maximum
    assert "value = 16" in text and "value = 6" in text


@triton.jit
def tuple_kernel(out_ptr, SHAPE: tl.constexpr):
    a, b = SHAPE
    pair = (tl.arange(0, a), tl.arange(0, b))
    x = pair[0][:, None] * b + pair[1][None, :]
    tl.store(out_ptr + x, x.to(tl.float32))


def test_tuples_and_subscripts():
    text = ir_text(tuple_kernel, "*fp32", SHAPE=(4, 8))
    assert "tensor<4x8xi32>" in text and ops(text, "expand_dims") == 2
    assert '"cast"' in text


@triton.jit
def attr_kernel(x_ptr, out_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs[:, None] * 16 + offs[None, :])
    y = x.T
    if x.dtype == tl.float16:
        y = y.to(tl.float32)
    tl.store(out_ptr + offs[:, None] * 16 + offs[None, :], y)


def test_attributes_methods_and_dtype_checks():
    text = ir_text(attr_kernel, "*fp16 *fp32")
    assert '"permute"' in text and '"cast"' in text and ops(text, "if") == 0


@triton.jit
def ternary_kernel(out_ptr, n, FLAG: tl.constexpr):
    v = 1.0 if FLAG else 2
    w = n * 2 if n > 4 else n + 1
    tl.store(out_ptr, v + w)


def test_ternaries():
    text = ir_text(ternary_kernel, "*fp32 i32", FLAG=True)
    assert ops(text, "if") == 1
    assert "value = 1.0" in text and "value = 2.0" not in text


@triton.jit
def fstring_kernel(x_ptr, N: tl.constexpr):
    tl.static_assert(N > 0, f"N={N} must be positive")
    tl.device_assert(tl.load(x_ptr) > 0, f"value must be positive for N={N}")


def test_fstring_messages():
    text = ir_text(fstring_kernel, "*i32", N=4)
    assert "value must be positive for N=4" in text or ops(text, "assert") == 0


def test_signature_dict_and_defaults():
    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr = 8):
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.zeros((BLOCK,), tl.float32), mask=tl.arange(0, BLOCK) < n)

    text = ir_text(k, {"x_ptr": "*fp32", "n": "i64"})
    assert "tensor<8xf32>" in text and "%1: i64" in text


def test_encoder_tables_and_header():
    data = add_kernel.compile_ir(signature="*fp32 *fp32 *fp32 i32", constexprs={"BLOCK_SIZE": 128})
    assert data[:4] == b"TRIR" and data[4] == _core.FORMAT_VERSION
    # the Rust codec decodes exactly what we encoded
    assert _core.to_text(_core.roundtrip(data)) == _core.to_text(data)
    assert _core.roundtrip(_core.roundtrip(data)) == _core.roundtrip(data)
