"""The interpreter refuses what the compiler refuses for aggregates: a
constexpr field of an object made before a runtime loop or branch changed
inside it is a CompilationError at the user's line; kernels the compiler
accepts (object made inside the construct, compile-time loops and branches,
an unchanged value) still run. Every kernel is checked against both."""
import inspect

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import CompilationError
from tritium.interpreter import run_grid
from aggregate_helpers import State, line_of
from ir_util import ir_text


@triton.jit
def in_range_loop(out, n):
    s = State(1.0, 4)
    for i in range(n):
        s.block = 8
    tl.store(out, s.m)


@triton.jit
def in_tl_range_loop(out, n):
    s = State(1.0, 4)
    for i in tl.range(0, n, 1):
        s.block = 8
    tl.store(out, s.m)


@triton.jit
def in_constant_range_loop(out, n):
    # `range` with constant bounds is still a runtime loop for the compiler
    s = State(1.0, 4)
    for i in range(2):
        s.block = 8
    tl.store(out, s.m)


@triton.jit
def in_while_loop(out, n):
    s = State(1.0, 4)
    i = 0
    while i < n:
        s.block = 8
        i += 1
    tl.store(out, s.m)


@triton.jit
def set_block(s):
    s.block = 16


@triton.jit
def in_branch_via_call(out, n):
    s = State(1.0, 4)
    if n > 0:
        set_block(s)
    tl.store(out, s.m)


@triton.jit
def in_else_branch(out, n):
    s = State(1.0, 4)
    if n > 0:
        s.m = 2.0
    else:
        s.block = 2
    tl.store(out, s.m)


@triton.jit
def made_inside_loop(out, n):
    for i in range(n):
        s = State(1.0, 4)
        s.block = 8
        tl.store(out, s.m + s.block)


@triton.jit
def made_inside_branch(out, n):
    if n > 0:
        s = State(1.0, 4)
        set_block(s)
        tl.store(out, s.m + s.block)


@triton.jit
def static_loop_and_branch(out, n, FLAG: tl.constexpr):
    s = State(1.0, 4)
    for i in tl.static_range(2):
        s.block = s.block * 2
    if FLAG:
        s.block = 32
    for k in (1, 2):
        s.block = s.block + k
    tl.store(out, s.m + s.block)


@triton.jit
def same_value_in_loop(out, n):
    s = State(1.0, 4)
    for i in range(n):
        s.block = 4
        s.m = s.m + 1.0
    tl.store(out, s.m)


@triton.jit
def changed_outside_loops(out, n):
    s = State(1.0, 4)
    s.block = 8
    for i in range(n):
        s.m = s.m + s.block
    tl.store(out, s.m)


def _interpret(kernel, n=3, **constexprs) -> float:
    out = np.zeros(1, np.float32)
    run_grid(kernel, (1,), [out, n], kwargs=constexprs)
    return float(out[0])


REJECTED = [
    (in_range_loop, in_range_loop, "s.block = 8", "a loop", 3),
    (in_tl_range_loop, in_tl_range_loop, "s.block = 8", "a loop", 3),
    (in_constant_range_loop, in_constant_range_loop, "s.block = 8", "a loop", 3),
    (in_while_loop, in_while_loop, "s.block = 8", "a loop", 3),
    (in_branch_via_call, set_block, "s.block = 16", "a branch on a runtime condition", 3),
    # the interpreter sees only the path it runs: n = 0 takes the else branch
    (in_else_branch, in_else_branch, "s.block = 2", "a branch on a runtime condition", 0),
]


@pytest.mark.parametrize("kernel,where,text,what,n", REJECTED, ids=[k.__name__ for k, *_ in REJECTED])
def test_interpreter_rejects_what_the_compiler_rejects(kernel, where, text, what, n):
    with pytest.raises(CompilationError) as compiled:
        ir_text(kernel, "*fp32 i32")
    with pytest.raises(CompilationError) as interpreted:
        _interpret(kernel, n)
    e = interpreted.value
    assert f"cannot change inside {what}" in e.message and "constexpr field 'block' of aggregate 'State'" in e.message
    assert e.message == compiled.value.message
    assert e.filename == inspect.getsourcefile(where.fn) and e.lineno == line_of(where, text)
    assert e.lineno == compiled.value.lineno


def test_call_site_is_noted():
    with pytest.raises(CompilationError) as info:
        _interpret(in_branch_via_call)
    assert any("'set_block' called from" in note and f":{line_of(in_branch_via_call, 'set_block(s)')}" in note
               for note in info.value.notes)


@pytest.mark.parametrize("kernel,expected", [
    (made_inside_loop, 9.0), (made_inside_branch, 17.0), (same_value_in_loop, 4.0), (changed_outside_loops, 25.0),
])
def test_accepted_kernels_still_run(kernel, expected):
    ir_text(kernel, "*fp32 i32")  # the compiler accepts it too
    assert _interpret(kernel) == expected


@pytest.mark.parametrize("flag", [True, False])
def test_compile_time_loops_and_branches_may_change_it(flag):
    ir_text(static_loop_and_branch, "*fp32 i32", FLAG=flag)
    assert _interpret(static_loop_and_branch, FLAG=flag) == (1.0 + 35 if flag else 1.0 + 19)


def test_a_loop_around_the_launch_is_not_the_kernels():
    for n in range(2):
        assert _interpret(changed_outside_loops, n) == 1.0 + 8 * n
