"""Reference semantics of @aggregate objects: each kernel is checked in the
interpreter and compiled (stored constants in the IR) against what plain
Python does with an ordinary class on the same code (`Plain` mirrors)."""
from types import SimpleNamespace as Plain

import tritium as triton
import tritium.language as tl
from aggregate_helpers import check_both, compiled_stores, interpret
from ir_util import canonical_text, ir_text, ops


@tl.aggregate
class Box:
    x: tl.float32
    tag: tl.constexpr

    def set(self, v):
        self.x = v


@triton.jit
def g(a, v):
    a.x = v


@triton.jit
def f(a, v):
    g(a, v + 1.0)
    a.x = a.x * 2.0


def _plain_f(a, v):
    a.x = v + 1.0
    a.x = a.x * 2.0


@triton.jit
def callee_mutation_kernel(out):
    a = Box(1.0, 0)
    f(a, 2.0)
    tl.store(out, a.x)
    a.set(7.0)
    tl.store(out + 1, a.x)


def test_mutation_through_nested_calls():
    p = Plain(x=1.0)
    _plain_f(p, 2.0)
    first = p.x
    p.x = 7.0
    check_both(callee_mutation_kernel, [first, p.x])


@triton.jit
def alias_kernel(out):
    a = Box(1.0, 0)
    b = a
    g(b, 3.0)
    tl.store(out, a.x)


def test_aliasing_sees_changes():
    p = Plain(x=1.0)
    q = p
    q.x = 3.0
    check_both(alias_kernel, [p.x])


@triton.jit
def rebind(a):
    a = Box(9.0, 1)
    a.x = 10.0


@triton.jit
def rebind_kernel(out):
    a = Box(1.0, 0)
    rebind(a)
    tl.store(out, a.x)


def test_rebinding_in_callee_leaves_caller_alone():
    check_both(rebind_kernel, [1.0])


@triton.jit
def both(a, b):
    a.x = 2.0
    b.x = b.x + 1.0
    a.x = a.x * 10.0


@triton.jit
def same_object_kernel(out):
    a = Box(0.0, 0)
    both(a, a)
    tl.store(out, a.x)


def test_same_object_twice_in_program_order():
    p = Plain(x=0.0)
    a, b = p, p
    a.x = 2.0
    b.x = b.x + 1.0
    a.x = a.x * 10.0
    check_both(same_object_kernel, [p.x])


@triton.jit
def tuple_kernel(out):
    a = Box(1.0, 0)
    t = (a, Box(2.0, 1))
    u = t
    t[0].x = 5.0
    u[1].set(6.0)
    tl.store(out, a.x)
    tl.store(out + 1, t[1].x)


def test_aggregates_inside_tuples():
    check_both(tuple_kernel, [5.0, 6.0])


@triton.jit
def make():
    return Box(4.0, 0)


@triton.jit
def temp_kernel(out):
    g(make(), 8.0)
    b = make()
    tl.store(out, b.x)


def test_mutating_a_temporary():
    check_both(temp_kernel, [4.0])


@tl.aggregate
class Pair:
    first: Box
    items: tuple
    count: int

    @triton.jit
    def __init__(self, v):
        self.first = Box(v, 0)
        self.items = (v, v + 1.0)
        self.count = 0

    def inc(self):
        self.count += 1
        self.first.x += 1.0


@triton.jit
def nested_kernel(out):
    p = Pair(1.0)
    inner = p.first
    p.inc()
    p.inc()
    tl.store(out, inner.x)
    tl.store(out + 1, p.count + 0.0)
    tl.store(out + 2, p.items[1])


def test_nested_aggregates_and_tuple_fields():
    assert interpret(nested_kernel, 3) == [3.0, 2.0, 2.0]
    ir_text(nested_kernel, "*fp32")


@triton.jit
def loop_kernel(out, n):
    a = Box(0.0, 0)
    b = Box(5.0, 0)
    other = a
    for i in range(n):
        g(a, a.x + 1.0)
    j = 0
    while j < n:
        b.set(b.x * 2.0)
        j += 1
    tl.store(out, other.x)
    tl.store(out + 1, b.x)


def test_loops_carry_only_changed_fields():
    assert interpret(loop_kernel, 2, 3) == [3.0, 40.0]
    # the frontend carries every field the loop may touch; canonicalize keeps the changed ones
    raw = ir_text(loop_kernel, "*fp32 i32")
    raw_for = next(line for line in raw.splitlines() if '"for"(' in line)
    assert raw_for.count("%") > 5
    text = canonical_text(loop_kernel, "*fp32 i32")
    for_line = next(line for line in text.splitlines() if '"for"(' in line)
    assert for_line.count("%") == 5   # result + lb, ub, step + one carried field (a.x)
    while_line = next(line for line in text.splitlines() if '"while"(' in line)
    assert while_line.count("%") == 4  # result + b.x, j, and the result of j


@triton.jit
def if_kernel(out, c):
    a = Box(1.0, 0)
    b = a
    if c > 0:
        b.set(2.0)
    else:
        a.x = 3.0
    if c > 5:
        fresh = Box(10.0, 0)
    else:
        fresh = Box(20.0, 0)
    tl.store(out, b.x)
    tl.store(out + 1, fresh.x)


def test_if_else_merges_fields():
    assert interpret(if_kernel, 2, 1) == [2.0, 20.0]
    assert interpret(if_kernel, 2, -1) == [3.0, 20.0]
    assert interpret(if_kernel, 2, 7) == [2.0, 10.0]
    text = ir_text(if_kernel, "*fp32 i32")
    assert ops(text, "if") == 2


@triton.jit(noinline=True)
def far_set(a, v):
    a.x = v + 1.0


@triton.jit(noinline=True)
def far_read(a):
    return a.x * 3.0


@triton.jit
def noinline_kernel(out):
    a = Box(1.0, 0)
    b = a
    far_set(b, 4.0)
    tl.store(out, a.x)
    tl.store(out + 1, far_read(a))


def test_noinline_mutated_fields_come_back():
    assert interpret(noinline_kernel, 2) == [5.0, 15.0]
    text = ir_text(noinline_kernel, "*fp32")
    calls = [line for line in text.splitlines() if '"call"(' in line]
    assert len(calls) == 2
    assert calls[0].lstrip().startswith("%") and "-> f32" in calls[0]   # the changed field comes back
    assert "-> f32" in calls[1]                                        # far_read returns its value only
    stores = compiled_stores(noinline_kernel)
    assert isinstance(stores[0], str)  # a.x is the call's result, not the old constant


@triton.jit
def agg_return(v):
    return Box(v, 3)


@triton.jit
def returns_kernel(out):
    b = agg_return(2.5)
    tl.static_assert(b.tag == 3)
    tl.store(out, b.x)


def test_aggregate_returned_and_constexpr_field_readable():
    check_both(returns_kernel, [2.5])


@triton.jit(noinline=True)
def far_both(a, b):
    a.x = 2.0
    b.x = b.x + 1.0


@triton.jit
def noinline_alias_loop_kernel(out, n):
    a = Box(0.0, 0)
    far_both(a, a)
    tl.store(out, a.x)
    c = Box(1.0, 0)
    for i in range(n):
        far_set(c, c.x)
    tl.store(out + 1, c.x)


def test_noinline_same_object_and_inside_loop():
    assert interpret(noinline_alias_loop_kernel, 2, 3) == [3.0, 4.0]
    text = canonical_text(noinline_alias_loop_kernel, "*fp32 i32")
    assert text.count("func @far_both") == 1
    for_line = next(line for line in text.splitlines() if '"for"(' in line)
    assert for_line.lstrip().startswith("%")  # c.x is carried through the loop
