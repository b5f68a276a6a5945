"""Shared pieces of the aggregate tests: the `State` aggregate several of
them build, the line of a kernel's source text and the CompilationError a
kernel raises, running a kernel in the interpreter, compiling it to verified
IR, and reading back which constants the compiled kernel stores at which
offsets of its first pointer argument (straight-line stores), so compiled
semantics can be compared with plain Python."""
import inspect
import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from ir_util import ir_text
from tritium import CompilationError
from tritium.interpreter.runner import run_grid

_CONST = re.compile(r'^\s*(%\d+) = "const"\(\) \{value = ([^}]+)\}')
_ADDPTR = re.compile(r'^\s*(%\d+) = "addptr"\(%0, (%\d+)\)')
_STORE = re.compile(r'^\s*"store"\((%\d+), (%\d+)\)')
_ARITH = re.compile(r'^\s*(%\d+) = "(add|sub|mul)"\((%\d+), (%\d+)\)')
_FOLD = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}


@tl.aggregate
class State:
    m: tl.float32
    block: tl.constexpr

    @triton.jit
    def __init__(self, m, block: tl.constexpr):
        self.m = m
        self.block = block


def line_of(fn, text: str) -> int:
    """The source line of `fn` (a @jit function) that contains `text`."""
    lines, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def compile_error(kernel, signature: str = "*fp32 i32") -> CompilationError:
    """The CompilationError compiling `kernel` for `signature` raises."""
    with pytest.raises(CompilationError) as info:
        ir_text(kernel, signature)
    return info.value


def interpret(kernel, n: int, *args) -> list:
    out = np.zeros(n, np.float32)
    run_grid(kernel, (1,), [out, *args])
    return [float(v) for v in out]


def compiled_stores(kernel, signature: str = "*fp32", **constexprs) -> dict[int, float]:
    """offset → value stored there by the kernel's top-level stores: a number
    when it folds from constants, else the SSA name."""
    text = ir_text(kernel, signature, **constexprs)
    consts, ptrs, stores = {}, {"%0": 0}, {}
    for line in text.splitlines():
        if m := _CONST.match(line):
            consts[m[1]] = float(m[2])
        elif (m := _ARITH.match(line)) and m[3] in consts and m[4] in consts:
            consts[m[1]] = _FOLD[m[2]](consts[m[3]], consts[m[4]])  # straight-line arithmetic on constants
        elif m := _ADDPTR.match(line):
            ptrs[m[1]] = int(consts[m[2]])
        elif (m := _STORE.match(line)) and m[1] in ptrs:
            stores[ptrs[m[1]]] = consts[m[2]] if m[2] in consts else m[2]
    return stores


def check_both(kernel, expected: list[float]) -> None:
    """The interpreter and the compiled IR both produce `expected`."""
    assert interpret(kernel, len(expected)) == expected
    stores = compiled_stores(kernel)
    assert [stores.get(i) for i in range(len(expected))] == expected
