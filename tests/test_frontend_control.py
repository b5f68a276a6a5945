"""Structured control flow: dynamic if/for/while with merged and
loop-carried values, static unrolling, and every early-return form."""
import tritium as triton
import tritium.language as tl
from ir_util import ir_text, ops


@triton.jit
def if_merge(x_ptr, n):
    a = tl.load(x_ptr)
    b = a * 2
    if n > 0:
        a = a + 1
        c = a
    else:
        a = a - 1
        c = b
        only_else = a
    tl.store(x_ptr, a + b + c)


def test_dynamic_if_merges_variables():
    text = ir_text(if_merge, "*fp32 i32")
    assert ops(text, "if") == 1
    # a and c are results; b is untouched; only_else does not leak
    assert "-> (f32, f32)" in text


@triton.jit
def nested_loops(x_ptr, n, m, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    count = 0
    for i in range(n):
        for j in tl.range(0, m, 2, num_stages=3, loop_unroll_factor=2):
            acc += tl.load(x_ptr + i * m + j + tl.arange(0, BLOCK))
            count += 1
    tl.store(x_ptr + tl.arange(0, BLOCK), acc / count)


def test_loop_carried_values_and_nesting():
    text = ir_text(nested_loops, "*fp32 i32 i32", BLOCK=32)
    assert ops(text, "for") == 2
    assert "^bb(%" in text and "tensor<32xf32>, i32)" in text


@triton.jit
def int64_bounds(x_ptr, n):
    for i in range(0, n, 1):
        tl.store(x_ptr + i, 0)


def test_range_bounds_promoted():
    text = ir_text(int64_bounds, "*i32 i64")
    assert '"for"' in text and "(i64, i64, i64)" in text


@triton.jit
def static_loop(x_ptr, N: tl.constexpr):
    acc = tl.load(x_ptr)
    for i in tl.static_range(N):
        acc = acc + i
    for v in (1, 2):
        acc = acc * v
    tl.store(x_ptr, acc)


def test_static_range_unrolls():
    text = ir_text(static_loop, "*i32", N=3)
    assert ops(text, "for") == 0 and ops(text, "add") == 3 and ops(text, "mul") == 2


@triton.jit
def while_loop(x_ptr, n):
    i = 0
    total = 0.0
    while i < n:
        total += tl.load(x_ptr + i)
        i += 1
    tl.store(x_ptr, total)


def test_while_loop():
    text = ir_text(while_loop, "*fp32 i32")
    assert ops(text, "while") == 1 and ops(text, "condition") == 1
    # carried in the order the body assigns them
    assert ": (f32, i32) -> (f32, i32)" in text


@triton.jit
def early_return_kernel(x_ptr, n):
    if n <= 0:
        return
    x = tl.load(x_ptr)
    if x > 0:
        tl.store(x_ptr, x * 2)
        return
    tl.store(x_ptr, -x)


def test_early_return_in_dynamic_if():
    text = ir_text(early_return_kernel, "*fp32 i32")
    assert ops(text, "if") == 2 and ops(text, "store") == 2
    assert ops(text, "return") == 1


@triton.jit
def static_return(x_ptr, FLAG: tl.constexpr):
    if FLAG:
        return
    tl.store(x_ptr, 1)


def test_return_after_static_condition():
    assert ops(ir_text(static_return, "*i32", FLAG=True), "store") == 0
    assert ops(ir_text(static_return, "*i32", FLAG=False), "store") == 1


@triton.jit
def sign(x):
    if x > 0:
        return 1.0
    elif x < 0:
        return -1.0
    return 0.0


@triton.jit
def min_max(a, b):
    if a < b:
        return a, b
    return b, a


@triton.jit
def returns_kernel(x_ptr):
    x = tl.load(x_ptr)
    lo, hi = min_max(x, x * 2)
    tl.store(x_ptr, sign(x) + lo + hi)


def test_returns_from_inlined_functions():
    text = ir_text(returns_kernel, "*fp32")
    assert ops(text, "if") == 3 and ops(text, "call") == 0
    assert "-> (f32, f32)" in text


@triton.jit
def max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def reduce_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    m = tl.reduce(x, 0, max_combine)
    s = tl.associative_scan(x, 0, max_combine)
    tl.store(x_ptr, m)
    tl.store(x_ptr + tl.arange(0, BLOCK), s)


def test_reduce_with_jit_combine_fn():
    text = ir_text(reduce_kernel, "*fp32", BLOCK=64)
    assert ops(text, "reduce") == 1 and ops(text, "scan") == 1
    assert ops(text, "max") == 2 and ops(text, "yield") == 2


@triton.jit
def assert_kernel(x_ptr, N: tl.constexpr):
    assert N > 1, "N too small"
    x = tl.load(x_ptr)
    assert x > 0, "x must be positive"
    tl.store(x_ptr, x)


def test_assert_statement():
    text = ir_text(assert_kernel, "*i32", N=4)
    assert ops(text, "store") == 1
