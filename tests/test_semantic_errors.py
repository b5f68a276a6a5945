"""User mistakes give TypeError/ValueError with a message naming the problem;
plus the interpreter-only conversions and the constexpr protocol."""
from __future__ import annotations

import pytest

import tritium.language as tl
from tritium.language.builder import using_builder

from _recording_builder import recording

F32, F16, I32 = tl.float32, tl.float16, tl.int32


def blk(bld, shape, dt=F32):
    return bld.value(tl.block_type(dt, shape))


ERRORS = [
    (lambda b: blk(b, (128,)) + blk(b, (64,)), ValueError, r"incompatible shapes for '\+': \[128\] and \[64\]"),
    (lambda b: blk(b, (4, 8)) * blk(b, (8, 4)), ValueError, r"incompatible shapes for '\*'"),
    (lambda b: tl.arange(0, 100), ValueError, "tl.arange: range length 100 is not a power of two"),
    (lambda b: tl.arange(8, 8), ValueError, "must be greater than start"),
    (lambda b: tl.arange(0, 2 ** 33), ValueError, "int32"),
    (lambda b: tl.arange(0, b.value(I32)), TypeError, "constexpr"),
    (lambda b: tl.program_id(3), ValueError, "program_id axis must be 0, 1 or 2"),
    (lambda b: tl.num_programs(-1), ValueError, "num_programs axis"),
    (lambda b: tl.zeros((3, 4), F32), ValueError, "not a power of two"),
    (lambda b: tl.reshape(blk(b, (4, 8)), (16,)), ValueError, r"cannot reshape \[4, 8\]"),
    (lambda b: tl.permute(blk(b, (4, 8)), (0, 0)), ValueError, "permutation"),
    (lambda b: tl.trans(blk(b, (2, 4, 8))), ValueError, "2-D"),
    (lambda b: tl.split(blk(b, (4, 8))), ValueError, "last dimension must be 2"),
    (lambda b: tl.join(blk(b, (4,)), blk(b, (4,), I32)), TypeError, "same dtype"),
    (lambda b: tl.cat(blk(b, (4,)), blk(b, (4,))), ValueError, "can_reorder"),
    (lambda b: tl.broadcast_to(blk(b, (4,)), (2, 8)), ValueError, "rank mismatch"),
    (lambda b: tl.broadcast_to(blk(b, (1, 4)), (2, 8)), ValueError, "incompatible shapes"),
    (lambda b: tl.sum(blk(b, (4, 8)), 2), ValueError, "invalid reduction axis 2"),
    (lambda b: tl.cumsum(blk(b, (4,)), 1), ValueError, "invalid scan axis"),
    (lambda b: tl.reduce(blk(b, (4,)), 0, lambda x, y: (x, y)), TypeError, "returned 2 values, expected 1"),
    (lambda b: tl.reduce(blk(b, (4,)), 0, lambda x, y: (x + y).to(tl.float64)), TypeError, "expected fp32"),
    (lambda b: tl.exp(blk(b, (4,), F16)), ValueError, "tl.exp: expected dtype fp32 or fp64, got fp16"),
    (lambda b: tl.log(blk(b, (4,), I32)), ValueError, "tl.log: expected dtype"),
    (lambda b: tl.math.sqrt(blk(b, (4,), tl.bfloat16)), ValueError, "tl.sqrt"),
    (lambda b: tl.umulhi(blk(b, (4,), tl.int16), blk(b, (4,), tl.int16)), ValueError, "umulhi"),
    (lambda b: tl.fma(blk(b, (4,), I32), 1, 2), TypeError, "floating point"),
    (lambda b: tl.clamp(blk(b, (4,), I32), 0, 3), TypeError, "floating point"),
    (lambda b: tl.fdiv(blk(b, (4,), I32), 2.0), TypeError, "floating point"),
    (lambda b: blk(b, (4,)) ** 2, TypeError, r"'\*\*' is not supported"),
    (lambda b: blk(b, (4,)).to(F16, fp_downcast_rounding="rtp"), ValueError, "rounding mode"),
    (lambda b: blk(b, (4,), F16).to(F32, fp_downcast_rounding="rtz"), ValueError, "narrowing"),
    (lambda b: blk(b, (4,)).to("float16"), TypeError, "expected a dtype"),
    (lambda b: tl.load(blk(b, (4,))), TypeError, "tl.load: expected a pointer"),
    (lambda b: tl.load(b.value(tl.pointer_type(F32)), other=0.0), ValueError, "`other` needs a `mask`"),
    (lambda b: tl.load(b.value(tl.pointer_type(F32)), boundary_check=(0,)), ValueError, "block pointers"),
    (lambda b: tl.load(b.value(tl.pointer_type(F32)), padding_option="zero"), ValueError, "block pointers"),
    (lambda b: tl.load(b.value(tl.pointer_type(F32)), padding_option="ones"), ValueError, "padding_option"),
    (lambda b: tl.load(b.value(tl.pointer_type(F32)), cache_modifier=".wb"), ValueError, "cache_modifier"),
    (lambda b: tl.load(b.value(tl.pointer_type(F32)), eviction_policy="keep"), ValueError, "eviction_policy"),
    (lambda b: tl.load(b.value(tl.pointer_type(F32)) + tl.arange(0, 4), mask=tl.arange(0, 4)), TypeError,
     "mask must be boolean"),
    (lambda b: tl.store(b.value(tl.pointer_type(F32)), blk(b, (4,))), ValueError, "value cannot be a block"),
    (lambda b: tl.store(b.value(tl.pointer_type(F32)), 1.0, cache_modifier=".ca"), ValueError, "cache_modifier"),
    (lambda b: tl.store(b.value(tl.pointer_type(F32)) + tl.arange(0, 4), blk(b, (8, 4))), ValueError,
     "broadcast the pointer"),
    (lambda b: tl.store(b.value(tl.pointer_type(F32, const=True)), 1.0), TypeError, "constant pointer"),
    (lambda b: tl.atomic_add(b.value(tl.pointer_type(F32)), 1.0, sem="strong"), ValueError, "atomic sem"),
    (lambda b: tl.atomic_add(b.value(tl.pointer_type(F32)), 1.0, scope="world"), ValueError, "atomic scope"),
    (lambda b: tl.atomic_max(b.value(tl.pointer_type(F16)), 1.0), TypeError, "atomic_max does not support fp16"),
    (lambda b: tl.atomic_add(b.value(tl.pointer_type(tl.int8)), 1), TypeError, "does not support int8"),
    (lambda b: tl.atomic_and(b.value(tl.pointer_type(F32)), 1.0), TypeError, "integer element type"),
    (lambda b: tl.atomic_cas(b.value(tl.pointer_type(tl.int8)), 0, 1), TypeError, "16, 32 or 64-bit"),
    (lambda b: tl.dot(blk(b, (16, 32), F16), blk(b, (16, 32), F16)), ValueError, "inner dimensions 32 and 16"),
    (lambda b: tl.dot(blk(b, (16, 16), F16), blk(b, (16, 16), F32)), TypeError, "same dtype"),
    (lambda b: tl.dot(blk(b, (16,), F16), blk(b, (16, 16), F16)), ValueError, "2-D"),
    (lambda b: tl.dot(blk(b, (8, 16), F16), blk(b, (16, 16), F16)), ValueError, "M >= 16"),
    (lambda b: tl.dot(blk(b, (16, 16), F16), blk(b, (16, 16), F16), input_precision="bf16"), ValueError,
     "input_precision"),
    (lambda b: tl.dot(blk(b, (16, 16)), blk(b, (16, 16)), input_precision="ieee", allow_tf32=True), ValueError,
     "only one"),
    (lambda b: tl.dot(blk(b, (16, 16), F16), blk(b, (16, 16), F16), blk(b, (16, 16), F16)), TypeError,
     "accumulator"),
    (lambda b: tl.dot(blk(b, (16, 16), F16), blk(b, (16, 16), F16), out_dtype=tl.bfloat16), ValueError,
     "bfloat16"),
    (lambda b: tl.multiple_of(blk(b, (4, 4), I32), [8]), ValueError, "1 values given for a tensor of rank 2"),
    (lambda b: tl.max_contiguous(b.value(I32), [8]), ValueError, "rank 0"),
    (lambda b: tl.static_assert(False, "BLOCK too small"), ValueError, "static_assert failed: BLOCK too small"),
    (lambda b: tl.static_assert(b.value(tl.int1)), TypeError, "constexpr condition"),
    (lambda b: tl.device_print(3, blk(b, (4,))), TypeError, "prefix must be a string"),
    (lambda b: tl.where(blk(b, (4,), tl.int1), b.value(tl.pointer_type(F32)), 1), TypeError, "where"),
    (lambda b: tl.to_tensor("abc"), TypeError, "cannot convert"),
    (lambda b: bool(blk(b, (4,))), TypeError, "only known when the kernel runs"),
    (lambda b: int(b.value(I32)), TypeError, "only known when the kernel runs"),
    (lambda b: iter(tl.range(0, 4)).__next__(), TypeError, "interpreter"),
    (lambda b: tl.static_range(0, b.value(I32)), TypeError, "constexpr int"),
    (lambda b: -b.value(tl.pointer_type(F32)), TypeError, "pointers"),
]


@pytest.mark.parametrize("fn,exc,match", ERRORS)
def test_user_errors(fn, exc, match):
    with recording() as bld:
        with pytest.raises(exc, match=match):
            fn(bld)


def test_static_assert_failure_is_a_value_error():
    assert issubclass(tl.CompileTimeAssertionFailure, ValueError)
    with recording():
        tl.static_assert(True)
        tl.static_assert(tl.constexpr(1) == 1, "fine")


def test_builtins_are_marked():
    for name in ("load", "store", "arange", "sum", "max", "exp", "rand", "dot", "where", "reduce", "cdiv",
                 "static_assert", "device_print", "flip", "atomic_add", "umulhi"):
        assert getattr(getattr(tl, name), "__triton_builtin__", False), name
    assert tl.math.exp.__triton_builtin__


def test_no_builder_outside_kernel():
    with pytest.raises(RuntimeError, match="inside a @jit kernel"):
        tl.arange(0, 4)


# ----- constexpr


def test_constexpr_protocol():
    c = tl.constexpr(8)
    assert c.value == 8 and tl.constexpr(c).value == 8
    assert isinstance(c + 1, tl.constexpr) and (c + 1).value == 9
    assert (2 * c).value == 16 and (c // 3).value == 2 and (c % 3).value == 2 and (c ** 2).value == 64
    assert (c >> 1).value == 4 and (1 << c).value == 256 and (-c).value == -8 and (~c).value == -9
    assert (c == 8).value is True and (c < 4).value is False
    assert bool(c) and not bool(tl.constexpr(0))
    assert list(range(tl.constexpr(3))) == [0, 1, 2]
    assert [1, 2, 3][tl.constexpr(1)] == 2
    assert repr(c) == "constexpr[8]"
    assert tl.constexpr(len)([1, 2]) == 2
    assert tl.constexpr((1, 2))[0].value == 1
    assert tl.constexpr(True).logical_and(False).value is False
    assert hash(c) == hash(8)


def test_constexpr_with_tensor_defers_to_tensor():
    with recording() as bld:
        x = bld.value(tl.block_type(tl.int8, [4]))
        r = tl.constexpr(3) + x
        assert isinstance(r, tl.tensor) and r.dtype == tl.int8


def test_cdiv_on_constexprs_and_tensors():
    assert tl.cdiv(10, 4).value == 3
    assert tl.cdiv(tl.constexpr(16), tl.constexpr(4)).value == 4
    with recording() as bld:
        r = tl.cdiv(bld.value(I32), 64)
        assert r.dtype == I32 and bld.last().name == "div"


# ----- interpreter-only conversions


def test_interpreter_conversions():
    from tritium.interpreter import NumpyBuilder
    b = NumpyBuilder()
    with using_builder(b):
        t = tl.to_tensor(5)
        assert int(t) == 5 and [10, 20, 30, 40, 50, 60][t] == 60 and float(t) == 5.0
        assert bool(tl.to_tensor(True)) and not bool(tl.to_tensor(0))
        with pytest.raises(TypeError, match="index"):
            [1][tl.to_tensor(0.0)]
        it = list(tl.range(0, 6, 2))
        assert [int(i) for i in it] == [0, 2, 4] and all(i.dtype == I32 for i in it)
        assert list(tl.range(3)) and [int(i) for i in tl.range(3)] == [0, 1, 2]
        assert [i for i in tl.static_range(1, 7, 3)] == [1, 4]


def test_range_options_recorded():
    r = tl.range(0, 10, 2, num_stages=3, loop_unroll_factor=2, flatten=True)
    assert (r.start, r.end, r.step, r.num_stages, r.loop_unroll_factor, r.flatten) == (0, 10, 2, 3, 2, True)
    with recording() as bld:
        assert tl.range(0, 2 ** 40).iv_dtype() == tl.int64
        assert tl.range(0, bld.value(tl.int16)).iv_dtype() == I32
