"""Mistakes with @aggregate objects are CompilationErrors naming the field
and pointing at the user's line."""
import pytest

import tritium as triton
import tritium.language as tl
from aggregate_helpers import State, compile_error, line_of
from ir_util import ir_text


@tl.aggregate
class Half:
    a: tl.tensor
    b: tl.tensor

    @triton.jit
    def __init__(self, a):
        self.a = a


@triton.jit
def unknown_field(out, n):
    s = State(1.0, 4)
    s.mm = 2.0


def test_unknown_field():
    e = compile_error(unknown_field)
    assert "no field 'mm'" in e.message and e.lineno == line_of(unknown_field, "s.mm =")


@triton.jit
def wrong_type(out, n):
    s = State(1.0, 4)
    s.m = n


def test_wrong_type_assigned():
    e = compile_error(wrong_type)
    assert "field 'm' of aggregate 'State' expects a fp32" in e.message
    assert e.lineno == line_of(wrong_type, "s.m = n")


@tl.aggregate
class Plain:
    x: tl.tensor
    block: tl.constexpr


@triton.jit
def runtime_into_constexpr(out, n):
    s = Plain(1.0, n)


def test_runtime_value_into_constexpr_field():
    e = compile_error(runtime_into_constexpr)
    assert "field 'block' of aggregate 'Plain' expects a constexpr" in e.message


@triton.jit
def unset_field(out, n):
    h = Half(tl.load(out))


def test_field_left_unset_by_init():
    e = compile_error(unset_field)
    assert "left field 'b'" in e.message and e.lineno == line_of(unset_field, "h = Half")


@triton.jit
def constexpr_in_loop(out, n):
    s = State(1.0, 4)
    for i in range(n):
        s.block = 8


def test_constexpr_field_changed_in_loop():
    e = compile_error(constexpr_in_loop)
    assert "constexpr field 'block'" in e.message and "loop" in e.message
    assert e.lineno == line_of(constexpr_in_loop, "s.block = 8")


@triton.jit
def set_block(s):
    s.block = 16


@triton.jit
def constexpr_in_branch(out, n):
    s = State(1.0, 4)
    if n > 0:
        set_block(s)


def test_constexpr_field_changed_in_dynamic_branch_via_call():
    e = compile_error(constexpr_in_branch)
    assert "constexpr field 'block'" in e.message and "runtime condition" in e.message
    assert e.lineno == line_of(set_block, "s.block = 16")
    assert any("called from" in note for note in e.notes)


@triton.jit
def constexpr_static_ok(out, n, FLAG: tl.constexpr):
    s = State(1.0, 4)
    if FLAG:
        s.block = 8
    for i in range(n):
        t = State(2.0, 2)
        t.block = 32          # created inside the loop: fine
    tl.store(out, s.m + s.block)


def test_constexpr_field_changes_allowed_when_static():
    text = ir_text(constexpr_static_ok, "*fp32 i32", FLAG=True)
    assert "value = 8.0" in text or "value = 8" in text


@triton.jit
def choose_object(out, n):
    a = State(1.0, 4)
    b = State(2.0, 4)
    c = a
    if n > 0:
        c = b
    c.m = 5.0


def test_choosing_between_objects_at_run_time_is_an_error():
    e = compile_error(choose_object)
    assert "different aggregate objects" in e.message


def test_bad_annotation_is_rejected_at_decoration():
    with pytest.raises(TypeError, match="unsupported annotation"):
        @tl.aggregate
        class Bad:
            x: dict


def test_reading_unset_field_and_unknown_method():
    @triton.jit
    def k(out, n):
        h = Half.__new__(Half)
        tl.store(out, h.a)

    e = compile_error(k)
    assert "read before it is set" in e.message or "Half" in e.message
