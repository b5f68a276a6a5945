"""Compiler hints written as statements, the way Triton's tutorials write
them (`tl.multiple_of(ptrs, [16, 16])` with the result unused: Triton marks
the value in place). The frontend rebinds the hinted name, so the accesses
after the statement see the hint; uses before it, and the name after a loop
or branch that only hinted it, keep the value they had."""
from __future__ import annotations

import numpy as np

import tritium
import tritium.language as tl
from test_codegen_axis import compile_ptx, widths


@tritium.jit
def statement_hint_copy(x_ptr, y_ptr, idx_ptr, HINT: tl.constexpr, BLOCK: tl.constexpr):
    # loaded offsets: nothing known about their alignment unless the user says so
    offs = tl.load(idx_ptr) + tl.arange(0, BLOCK)
    if HINT:
        tl.multiple_of(offs, 8)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def test_a_hint_statement_widens_the_accesses_after_it():
    sig = "*fp32, *fp32, *i32"
    hinted = compile_ptx(statement_hint_copy, sig, {"HINT": True, "BLOCK": 512}, aligned=("x_ptr", "y_ptr"))
    plain = compile_ptx(statement_hint_copy, sig, {"HINT": False, "BLOCK": 512}, aligned=("x_ptr", "y_ptr"))
    # (the offset itself is a scalar load)
    assert 4 in widths(hinted, "ld") and widths(hinted, "st") == {4}, hinted
    assert widths(plain, "ld") == {1} and widths(plain, "st") == {1}, plain


@tritium.jit
def hinted_in_loop(x_ptr, y_ptr, idx_ptr, n, BLOCK: tl.constexpr):
    offs = tl.load(idx_ptr) + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for _ in range(n):
        tl.multiple_of(offs, 4)      # rebinds `offs` in the body only
        acc += tl.load(x_ptr + offs)
    if n > 1:
        tl.max_contiguous(offs, 4)   # and in this branch only
    tl.store(y_ptr + offs, acc)      # the value from before the loop


def test_a_hint_in_a_loop_or_branch_stays_there():
    ptx = compile_ptx(hinted_in_loop, "*fp32, *fp32, *i32, i32", {"BLOCK": 512}, aligned=("x_ptr", "y_ptr"))
    assert 4 in widths(ptx, "ld"), ptx          # the loop's load
    assert widths(ptx, "st") == {1}, ptx        # the store after it: no hint
    x = np.arange(600, dtype=np.float32)
    y = np.zeros(600, dtype=np.float32)
    run = tritium.jit(interpret=True)(hinted_in_loop.fn)
    run[(1,)](x, y, np.array([8], dtype=np.int32), 3, BLOCK=512)
    np.testing.assert_array_equal(y[8:520], 3 * x[8:520])
