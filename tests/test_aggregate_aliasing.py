"""Aliasing among aggregate objects that a dynamic if/else or a loop rebuilds:
names sharing one object on every path still share it afterwards (checked in
the interpreter and in the compiled IR), and sharing that depends on the
run-time path is a CompilationError at the construct's line."""
from types import SimpleNamespace as Plain

import tritium as triton
import tritium.language as tl
from aggregate_helpers import compile_error, compiled_stores, interpret, line_of


@tl.aggregate
class Cell:
    x: tl.float32
    tag: tl.constexpr


@tl.aggregate
class Holder:
    inner: Cell
    pair: tuple


def _same_store(kernel, offsets: list[int]) -> None:
    """The compiled kernel stores one and the same SSA value at `offsets`."""
    stores = compiled_stores(kernel, "*fp32 i32")
    values = {stores[i] for i in offsets}
    assert len(values) == 1, stores


# -- if/else ------------------------------------------------------------------

@triton.jit
def fresh_alias_if(out, c):
    if c > 0:
        a = Cell(1.0, 0)
        b = a
    else:
        a = Cell(2.0, 0)
        b = a
    tl.store(out + 1, a.x)
    b.x = 5.0
    tl.store(out, a.x)


def _plain_fresh_alias_if(c: int) -> list[float]:
    a = Plain(x=1.0) if c > 0 else Plain(x=2.0)
    b = a
    first = a.x
    b.x = 5.0
    return [a.x, first]


def test_fresh_object_shared_in_both_branches():
    for c in (1, -1):
        assert interpret(fresh_alias_if, 2, c) == _plain_fresh_alias_if(c)
    assert compiled_stores(fresh_alias_if, "*fp32 i32")[0] == 5.0


@triton.jit
def old_object_if(out, c):
    a = Cell(1.0, 0)
    b = a
    if c > 0:
        b = a
        a.x = 2.0
    else:
        a = b
        b.x = 3.0
    tl.store(out, a.x)
    tl.store(out + 1, b.x)
    b.x = 7.0
    tl.store(out + 2, a.x)


def test_pre_existing_object_shared_by_rebound_names():
    assert interpret(old_object_if, 3, 1) == [2.0, 2.0, 7.0]
    assert interpret(old_object_if, 3, -1) == [3.0, 3.0, 7.0]
    _same_store(old_object_if, [0, 1])
    assert compiled_stores(old_object_if, "*fp32 i32")[2] == 7.0


@triton.jit
def nested_if(out, c):
    h = Holder(Cell(0.0, 0), (0.0, 0.0))
    if c > 0:
        h.inner = Cell(1.0, 0)
        inner = h.inner
        t = (inner, Holder(inner, (1.0, 2.0)))
    else:
        h.inner = Cell(2.0, 0)
        inner = h.inner
        t = (inner, Holder(inner, (3.0, 4.0)))
    t[1].inner.x = 6.0
    tl.store(out, h.inner.x)
    tl.store(out + 1, t[0].x)
    inner.x = 8.0
    tl.store(out + 2, h.inner.x)
    tl.store(out + 3, t[1].pair[1])


def test_sharing_through_fields_and_tuples():
    assert interpret(nested_if, 4, 1) == [6.0, 6.0, 8.0, 2.0]
    assert interpret(nested_if, 4, -1) == [6.0, 6.0, 8.0, 4.0]
    stores = compiled_stores(nested_if, "*fp32 i32")
    assert [stores[0], stores[1], stores[2]] == [6.0, 6.0, 8.0]


@triton.jit
def ternary_alias(out, c):
    a = Cell(1.0, 0)
    b = a
    b = a if c > 0 else b
    b.x = 4.0
    tl.store(out, a.x)


def test_conditional_expression_keeps_the_object():
    assert interpret(ternary_alias, 1, 1) == [4.0]
    assert compiled_stores(ternary_alias, "*fp32 i32")[0] == 4.0


@triton.jit
def sharing_differs_if(out, c):
    if c > 0:
        a = Cell(1.0, 0)
        b = a
    else:
        a = Cell(2.0, 0)
        b = Cell(3.0, 0)
    b.x = 5.0
    tl.store(out, a.x)


def test_sharing_that_differs_between_branches_is_an_error():
    # Python: a.x is 5.0 when c > 0 but 2.0 otherwise; compiled code cannot choose
    assert interpret(sharing_differs_if, 1, 1) == [5.0]
    assert interpret(sharing_differs_if, 1, -1) == [2.0]
    e = compile_error(sharing_differs_if)
    assert "'b' and 'a'" in e.message or "'a' and 'b'" in e.message
    assert "then-branch" in e.message and "else-branch" in e.message
    assert e.lineno == line_of(sharing_differs_if, "if c > 0")


@triton.jit
def field_sharing_differs(out, c):
    h = Holder(Cell(0.0, 0), (0.0, 0.0))
    b = Cell(0.0, 0)
    if c > 0:
        b = Cell(1.0, 0)
        h.inner = b
    else:
        b = Cell(1.0, 0)
        h.inner = Cell(1.0, 0)
    tl.store(out, h.inner.x)


def test_sharing_with_a_field_that_differs_is_an_error():
    e = compile_error(field_sharing_differs)
    assert "'h.inner'" in e.message and "'b'" in e.message
    assert e.lineno == line_of(field_sharing_differs, "if c > 0")


# -- loops --------------------------------------------------------------------

@triton.jit
def for_alias(out, n):
    a = Cell(0.0, 0)
    b = a
    for i in range(n):
        b.x = b.x + 1.0
        a = Cell(a.x * 2.0, 0)
        b = a
    tl.store(out, a.x)
    tl.store(out + 1, b.x)
    b.x = 9.0
    tl.store(out + 2, a.x)


def _plain_loop(n: int) -> list[float]:
    a = Plain(x=0.0)
    b = a
    for _ in range(n):
        b.x = b.x + 1.0
        a = Plain(x=a.x * 2.0)
        b = a
    first = [a.x, b.x]
    b.x = 9.0
    return first + [a.x]


def test_for_loop_keeps_shared_fresh_objects():
    for n in (0, 1, 3):
        assert interpret(for_alias, 3, n) == _plain_loop(n)
    _same_store(for_alias, [0, 1])
    assert compiled_stores(for_alias, "*fp32 i32")[2] == 9.0


@triton.jit
def while_alias(out, n):
    t = (Cell(1.0, 0), 0)
    u = t
    j = 0
    while j < n:
        u[0].x = u[0].x + 2.0
        t = (Cell(t[0].x, 0), j)
        u = t
        j += 1
    tl.store(out, t[0].x)
    tl.store(out + 1, u[0].x)
    u[0].x = 4.0
    tl.store(out + 2, t[0].x)


def test_while_loop_keeps_sharing_through_tuples():
    assert interpret(while_alias, 3, 3) == [7.0, 7.0, 4.0]
    _same_store(while_alias, [0, 1])
    assert compiled_stores(while_alias, "*fp32 i32")[2] == 4.0


@triton.jit
def loop_sharing_breaks(out, n):
    a = Cell(0.0, 0)
    b = a
    for i in range(n):
        a = Cell(a.x + 1.0, 0)
        b = Cell(0.0, 0)
    tl.store(out, a.x)


def test_loop_that_breaks_sharing_is_an_error():
    e = compile_error(loop_sharing_breaks)
    assert "'b' and 'a'" in e.message or "'a' and 'b'" in e.message
    assert "before the loop" in e.message and "end of a loop iteration" in e.message
    assert e.lineno == line_of(loop_sharing_breaks, "for i in range(n)")


@triton.jit
def loop_sharing_starts(out, n):
    a = Cell(0.0, 0)
    b = Cell(0.0, 0)
    j = 0
    while j < n:
        a = Cell(a.x + 1.0, 0)
        b = a
        j += 1
    tl.store(out, b.x)


def test_loop_that_starts_sharing_is_an_error():
    e = compile_error(loop_sharing_starts)
    assert "before the loop" in e.message
    assert e.lineno == line_of(loop_sharing_starts, "while j < n")
