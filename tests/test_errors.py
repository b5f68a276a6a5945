"""Compile errors: each kind points at the kernel's own file:line:col, shows
the source line with a caret, says what is wrong, and carries no chained
internal traceback."""
import pytest

import tritium as triton
import tritium.language as tl
from frontend_helpers import bad_add
from tritium.compiler import CompilationError
from tritium.compiler.errors import CompilationError as CE2

NOT_CONSTEXPR = 5


def line_of(marker: str) -> int:
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith("# " + marker):
                return i
    raise AssertionError(marker)


def compile_error(kernel, signature, **constexprs) -> CompilationError:
    with pytest.raises(CompilationError) as info:
        kernel.compile_ir(signature=signature, constexprs=constexprs)
    err = info.value
    assert err.__cause__ is None and err.__context__ is None
    return err


def check(err: CompilationError, marker: str, message: str, caret_under: str | None = None):
    line = line_of(marker)
    assert err.filename == __file__ and err.lineno == line, str(err)
    assert message in err.message, err.message
    text = str(err).splitlines()
    assert text[0] == f"{__file__}:{line}:{err.col_offset}: error: {err.message}"
    assert text[1] == err.src_line and err.src_line.rstrip().endswith("# " + marker)
    assert text[2] == " " * err.col_offset + "^"
    if caret_under is not None:
        assert err.src_line[err.col_offset:].startswith(caret_under), (err.src_line, err.col_offset)


def test_exported_everywhere():
    assert CompilationError is CE2 is triton.CompilationError


@triton.jit
def shape_mismatch(x_ptr):
    z = tl.arange(0, 128) + tl.arange(0, 64)  # shape
    tl.store(x_ptr + z, 1)


def test_shape_mismatch():
    err = compile_error(shape_mismatch, "*i32")
    check(err, "shape", "128", caret_under="tl.arange(0, 128) +")
    assert "64" in err.message


@triton.jit
def runtime_arange(x_ptr, n):
    offs = tl.arange(0, n)  # arange
    tl.store(x_ptr + offs, 0)


def test_non_constexpr_arange_end():
    err = compile_error(runtime_arange, "*i32 i32")
    check(err, "arange", "constexpr")


@triton.jit
def runtime_static_range(x_ptr, n):
    for i in tl.static_range(n):  # static_range
        tl.store(x_ptr + i, 0)


def test_static_range_needs_constexpr():
    check(compile_error(runtime_static_range, "*i32 i32"), "static_range", "static_range's end must be a constexpr")


@triton.jit
def uses_break(x_ptr, n):
    for i in range(n):
        break  # break


@triton.jit
def uses_continue(x_ptr, n):
    for i in range(n):
        continue  # continue


@triton.jit
def uses_with(x_ptr):
    with open("x"):  # with
        pass


@triton.jit
def uses_lambda(x_ptr):
    f = lambda v: v  # lambda


@pytest.mark.parametrize("kernel,marker,message", [
    (uses_break, "break", "'break' is not supported in kernels"),
    (uses_continue, "continue", "'continue' is not supported in kernels"),
    (uses_with, "with", "'with' is not supported in kernels"),
    (uses_lambda, "lambda", "'lambda' is not supported in kernels"),
])
def test_unsupported_constructs(kernel, marker, message):
    sig = "*i32 i32" if kernel in (uses_break, uses_continue) else "*i32"
    check(compile_error(kernel, sig), marker, message)


@triton.jit
def undefined_name(x_ptr):
    tl.store(x_ptr, foo)  # undefined


def test_undefined_name():
    check(compile_error(undefined_name, "*i32"), "undefined", "name 'foo' is not defined", caret_under="foo")


@triton.jit
def plain_global(x_ptr):
    tl.store(x_ptr, NOT_CONSTEXPR)  # global


def test_non_constexpr_global():
    check(compile_error(plain_global, "*i32"), "global", "cannot access global variable 'NOT_CONSTEXPR'")


@triton.jit
def two_args(a, b):
    return a + b


@triton.jit
def wrong_call_arity(x_ptr):
    tl.store(x_ptr, two_args(1, 2, 3))  # arity


def test_wrong_argument_count_for_jit_call():
    check(compile_error(wrong_call_arity, "*i32"), "arity", "two_args() takes 2 arguments but 3 were given")


@triton.jit
def if_type_mismatch(x_ptr, n):
    v = tl.load(x_ptr)
    if n > 0:  # iftypes
        v = v.to(tl.float16)
    tl.store(x_ptr, v)


def test_if_branches_disagree_on_type():
    err = compile_error(if_type_mismatch, "*fp32 i32")
    check(err, "iftypes", "'v' has type fp16 in the then-branch but fp32 in the else-branch")


@triton.jit
def loop_type_change(x_ptr, n):
    acc = 0
    for i in range(n):  # looptype
        acc = acc + tl.load(x_ptr + i)
    tl.store(x_ptr, acc)


def test_loop_carried_type_change():
    err = compile_error(loop_type_change, "*fp32 i32")
    check(err, "looptype", "loop-carried variable 'acc' has type int32 before the loop but fp32")


@triton.jit
def calls_bad_helper(x_ptr):
    a = tl.arange(0, 16)
    b = tl.arange(0, 32)
    tl.store(x_ptr + a, bad_add(a, b))  # callsite


def test_error_inside_inlined_callee_points_at_callee():
    err = compile_error(calls_bad_helper, "*i32")
    import frontend_helpers
    assert err.filename == frontend_helpers.__file__
    assert err.src_line.strip() == "return x + y"
    assert f"called from {__file__}:{line_of('callsite')}" in str(err)
    assert err.__cause__ is None and err.__context__ is None


@triton.jit
def kernel_returns_value(x_ptr):
    return tl.load(x_ptr)  # retval


def test_kernel_must_not_return_a_value():
    check(compile_error(kernel_returns_value, "*i32"), "retval", "must not return a value")


@triton.jit
def return_in_loop(x_ptr, n):
    for i in range(n):
        return  # loopret


def test_return_inside_loop():
    check(compile_error(return_in_loop, "*i32 i32"), "loopret", "'return' inside a loop is not supported")


@triton.jit
def failing_static_assert(x_ptr, N: tl.constexpr):
    assert N > 4, "N must exceed 4"  # sassert


def test_static_assert_statement():
    check(compile_error(failing_static_assert, "*i32", N=2), "sassert", "N must exceed 4")


@triton.jit
def tensor_if_condition(x_ptr):
    v = tl.load(x_ptr + tl.arange(0, 8))
    if v > 0:  # blockcond
        tl.store(x_ptr, 1)


def test_block_if_condition():
    check(compile_error(tensor_if_condition, "*i32"), "blockcond", "if condition must be a scalar")


def test_error_survives_pickling():
    import pickle
    err = compile_error(undefined_name, "*i32")
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err) and again.lineno == err.lineno
