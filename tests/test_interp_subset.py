"""The interpreter refuses what the compiler refuses (issue #18 item 8, #15
item 2): both run language/python_subset.py, so each kernel here fails the
same way, at the same line, whether it is interpreted or compiled; and
`assert` on a tensor is a device assert in both."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.compiler.errors import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct
from tritium.interpreter import DeviceAssertionError, run_grid
from tritium.language.python_subset import KERNEL_BUILTINS

LIST = [1, 2]
SCALE = tl.constexpr(3)


def plain(x):
    return x


@triton.jit
def _while_else(x_ptr):
    i = 0
    while i < 2:
        i += 1
    else:
        i = 5
    tl.store(x_ptr, i)


@triton.jit
def _try(x_ptr):
    try:
        tl.store(x_ptr, 1)
    except Exception:
        pass


@triton.jit
def _lambda(x_ptr):
    f = lambda v: v + 1  # noqa: E731
    tl.store(x_ptr, f(1))


@triton.jit
def _plain_call(x_ptr):
    tl.store(x_ptr, plain(1))


@triton.jit
def _list_global(x_ptr):
    tl.store(x_ptr, LIST[0])


@triton.jit
def _yield(x_ptr):
    tl.store(x_ptr, 1)
    yield 1


@triton.jit
def _python_builtin(x_ptr):
    tl.store(x_ptr, sum((1, 2)))


@triton.jit
def _break(x_ptr):
    for i in range(3):
        break
    tl.store(x_ptr, 1)


@triton.jit
def _import(x_ptr):
    import math
    tl.store(x_ptr, 1)


@triton.jit
def _nested_def(x_ptr):
    def g():
        return 1
    tl.store(x_ptr, 1)


@triton.jit
def _return_in_loop(x_ptr):
    for i in range(3):
        return
    tl.store(x_ptr, 1)


@triton.jit
def _chained(x_ptr, n):
    if 0 < n < 4:
        tl.store(x_ptr, 1)


@triton.jit
def _bad_helper(x):
    return [v for v in (x,)]


@triton.jit
def _calls_bad_helper_on_a_dead_path(x_ptr, n):
    # the compiler compiles both branches of a runtime `if`, so the helper is
    # refused even though no program takes this branch
    if n > 100:
        tl.store(x_ptr, _bad_helper(n))


def _closure_over(value):
    @triton.jit
    def k(x_ptr):
        tl.store(x_ptr, value[0])
    return k


REFUSED = [
    (_while_else, (), UnsupportedLanguageConstruct, "'while ... else' is not supported in kernels", "while i < 2:"),
    (_try, (), UnsupportedLanguageConstruct, "'try' is not supported in kernels", "try:"),
    (_lambda, (), UnsupportedLanguageConstruct, "'lambda' is not supported in kernels", "lambda v"),
    (_plain_call, (), CompilationError, "cannot access global variable 'plain'", "plain(1)"),
    (_list_global, (), CompilationError, "cannot access global variable 'LIST'", "LIST[0]"),
    (_closure_over([3]), (), CompilationError, "cannot access closure variable 'value' \\(list\\)", "value[0]"),
    (_yield, (), UnsupportedLanguageConstruct, "'yield' is not supported in kernels", "yield 1"),
    (_python_builtin, (), CompilationError, "the Python builtin 'sum' cannot be used in kernels", "sum((1, 2))"),
    (_break, (), UnsupportedLanguageConstruct, "'break' is not supported in kernels", "break"),
    (_import, (), UnsupportedLanguageConstruct, "'import' is not supported in kernels", "import math"),
    (_nested_def, (), UnsupportedLanguageConstruct, "'def' is not supported in kernels", "def g():"),
    (_return_in_loop, (), UnsupportedLanguageConstruct, "'return' inside a loop", "return"),
    (_chained, (3,), UnsupportedLanguageConstruct, "chained comparisons", "0 < n < 4"),
    (_calls_bad_helper_on_a_dead_path, (3,), UnsupportedLanguageConstruct,
     "'list comprehension' is not supported in kernels", "[v for v in (x,)]"),
]


def _where(err: CompilationError) -> tuple:
    return (err.filename, err.lineno, err.col_offset, err.src_line)


@pytest.mark.parametrize("kernel,args,cls,message,snippet", REFUSED, ids=lambda v: getattr(v, "__name__", None))
def test_interpreter_and_compiler_refuse_alike(kernel, args, cls, message, snippet):
    x = np.zeros(4, np.int32)
    with pytest.raises(cls, match=message) as compiled:
        kernel.compile_ir(x, *args)
    with pytest.raises(cls, match=message) as interpreted:
        run_grid(kernel, (1,), (x, *args))
    assert type(compiled.value) is type(interpreted.value)
    assert _where(compiled.value) == _where(interpreted.value)
    err = interpreted.value
    assert err.filename == __file__ and snippet in err.src_line
    # the caret points into the offending construct
    assert str(err).splitlines()[2] == " " * err.col_offset + "^"
    assert (x == 0).all(), "a refused kernel must not run at all"


def test_closure_cells_follow_the_globals_rule():
    # a number captured by a factory is fine in both; a list is refused in both (above)
    x = np.zeros(4, np.int32)
    k = _closure_over((7,))
    k.compile_ir(x)
    run_grid(k, (1,), (x,))
    assert x[0] == 7


@triton.jit
def _reads_constexpr_global(x_ptr):
    tl.store(x_ptr, SCALE * 2)


def test_allowed_globals_and_builtins_run():
    x = np.zeros(4, np.int32)
    _reads_constexpr_global.compile_ir(x)
    run_grid(_reads_constexpr_global, (1,), (x,))
    assert x[0] == 6


def test_the_compilers_builtins_are_the_shared_list():
    from tritium.compiler.scope import BUILTINS
    assert set(BUILTINS) == KERNEL_BUILTINS


@triton.jit
def _debugs(x_ptr):
    breakpoint()
    tl.store(x_ptr, 1)


@triton.jit
def _imports_pdb(x_ptr):
    import pdb
    tl.store(x_ptr, 1)


def test_importing_a_debugger_works_only_in_the_interpreter():
    x = np.zeros(4, np.int32)
    run_grid(_imports_pdb, (1,), (x,))
    assert x[0] == 1
    with pytest.raises(CompilationError, match="importing a debugger only works in the interpreter"):
        _imports_pdb.compile_ir(x)


def test_breakpoint_runs_only_in_the_interpreter(monkeypatch):
    hits = []
    monkeypatch.setattr("sys.breakpointhook", lambda *a, **k: hits.append(1))
    x = np.zeros(4, np.int32)
    run_grid(_debugs, (2,), (x,))
    assert hits == [1, 1] and x[0] == 1
    with pytest.raises(CompilationError, match=r"'breakpoint\(\)' only works in the interpreter"):
        _debugs.compile_ir(x)


# -- assert ----------------------------------------------------------------------

@triton.jit
def _asserts(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    assert offs < n, "oops"
    tl.store(x_ptr + offs, offs)


def test_assert_on_a_tensor_is_a_device_assert():
    x = np.zeros(8, np.int32)
    run_grid(_asserts, (1,), (x, 8), kwargs={"BLOCK": 8})
    assert x.tolist() == list(range(8))
    line = _asserts.fn.__code__.co_firstlineno + 3
    with pytest.raises(DeviceAssertionError,
                       match=rf"^{re.escape(__file__)}:{line}:4: error: device assertion failed in program "
                             r"\(0, 0, 0\) at lane\(s\) \[\(6,\), \(7,\)\]: oops"):
        run_grid(_asserts, (1,), (x, 6), kwargs={"BLOCK": 8})
    # the compiler makes it a device assert too (kept in debug mode)
    ir = _asserts.ir_text(x, 8, BLOCK=8, debug=True)
    assert '"oops"' in ir and "assert" in ir


@triton.jit
def _static_assert_fails(x_ptr, BLOCK: tl.constexpr):
    assert BLOCK > 8, "BLOCK too small"
    tl.store(x_ptr, BLOCK)


def test_assert_on_a_constexpr_is_a_static_assertion_in_both():
    x = np.zeros(4, np.int32)
    with pytest.raises(CompileTimeAssertionFailure, match="static assertion failed: BLOCK too small") as c:
        _static_assert_fails.compile_ir(x, BLOCK=4)
    with pytest.raises(CompileTimeAssertionFailure, match="static assertion failed: BLOCK too small") as i:
        run_grid(_static_assert_fails, (1,), (x,), kwargs={"BLOCK": 4})
    assert _where(c.value) == _where(i.value)
    run_grid(_static_assert_fails, (1,), (x,), kwargs={"BLOCK": 16})
    assert x[0] == 16


@triton.jit
def _scalar_assert(x_ptr, n):
    assert n > 0
    tl.store(x_ptr, n)


def test_assert_on_a_runtime_scalar():
    x = np.zeros(4, np.int32)
    run_grid(_scalar_assert, (1,), (x, 5))
    with pytest.raises(DeviceAssertionError, match="device assertion failed"):
        run_grid(_scalar_assert, (1,), (x, -1))


# -- calls -------------------------------------------------------------------------

@triton.jit
def _two(a, b):
    return a + b


@triton.jit
def _too_many(x_ptr):
    tl.store(x_ptr, _two(1, 2, 3))


def test_helper_arity_errors_name_the_helper():
    x = np.zeros(4, np.int32)
    with pytest.raises(CompilationError, match=r"_two\(\) takes 2 arguments but 3 were given") as err:
        run_grid(_too_many, (1,), (x,))
    assert err.value.lineno == _too_many.fn.__code__.co_firstlineno + 2
    with pytest.raises(CompilationError, match=r"_two\(\) takes 2 arguments but 3 were given"):
        _too_many.compile_ir(x)


@triton.jit
def _recursive(n):
    return _recursive(n)


@triton.jit
def _calls_recursive(x_ptr):
    tl.store(x_ptr, _recursive(1))


def test_recursion_is_refused_in_both():
    x = np.zeros(4, np.int32)
    with pytest.raises(UnsupportedLanguageConstruct, match="recursive call to '_recursive'"):
        run_grid(_calls_recursive, (1,), (x,))
    with pytest.raises(UnsupportedLanguageConstruct, match="recursive call to '_recursive'"):
        _calls_recursive.compile_ir(x)


def test_a_global_rebound_between_launches_is_checked_again(monkeypatch):
    x = np.zeros(4, np.int32)
    run_grid(_reads_constexpr_global, (1,), (x,))
    monkeypatch.setitem(globals(), "SCALE", [3])
    with pytest.raises(CompilationError, match="cannot access global variable 'SCALE'"):
        run_grid(_reads_constexpr_global, (1,), (x,))


# -- launch options ------------------------------------------------------------------

@triton.jit
def _store_one(x_ptr):
    tl.store(x_ptr, 1)


@pytest.mark.parametrize("num_warps", [0, 3, -1, 64, 2.0, True])
def test_interpreter_refuses_num_warps_the_compiler_refuses(num_warps, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    x = np.zeros(4, np.int32)
    with pytest.raises(ValueError, match=r"num_warps must be a power of two from 1 to 32, got"):
        _store_one[(1,)](x, num_warps=num_warps)
    assert x[0] == 0
    for ok in (1, 2, 4, 8, 32):
        _store_one[(1,)](x, num_warps=ok)
