"""Result dtypes of binary operators, against Triton 3.x's promotion table
(`computation_type_impl` and the literal rules), written out by hand here so a
change in semantic/ cannot silently change them."""
from __future__ import annotations

import operator

import pytest

import tritium.language as tl
from tritium.language import semantic

from _recording_builder import recording

I1, I8, I16, I32, I64 = tl.int1, tl.int8, tl.int16, tl.int32, tl.int64
U8, U16, U32, U64 = tl.uint8, tl.uint16, tl.uint32, tl.uint64
F8A, F8B, F16, BF, F32, F64 = tl.float8e4nv, tl.float8e5, tl.float16, tl.bfloat16, tl.float32, tl.float64

# (a, b, result of a + b) for two tensors
TENSOR_ADD = [
    (I8, I8, I8), (I8, I16, I16), (I16, I8, I16), (I8, I32, I32), (I8, I64, I64), (I32, I64, I64),
    (I8, U8, U8), (U8, I8, U8), (I16, U8, I16), (U8, I16, I16), (I32, U32, U32), (I64, U32, I64),
    (U64, I64, U64), (U16, U32, U32), (I1, I1, I1), (I1, I8, I8), (I1, U8, U8), (I1, I64, I64),
    (I32, F16, F16), (I64, F16, F16), (I32, BF, F32), (I8, BF, F32), (I32, F32, F32), (I64, F64, F64),
    (F16, F16, F16), (F16, BF, F16), (BF, F16, F16), (BF, BF, BF), (F16, F32, F32), (BF, F32, F32),
    (F32, F64, F64), (F16, F64, F64), (F8A, F8A, F8A), (F8B, F8B, F8B), (F8A, F8B, F16), (F8B, F16, F16),
    (F8A, BF, F32), (F8A, F32, F32), (I1, F32, F32),
]

TENSOR_DIV = [
    (I32, I32, F32), (I8, I8, F32), (I64, I64, F32), (U32, U32, F32), (I8, I32, F32),
    (F16, F16, F32), (BF, BF, F32), (F16, F32, F32), (F32, F32, F32), (F64, F64, F64), (I32, F16, F32),
    (F32, F64, F64), (I32, F64, F64),
]

TENSOR_MOD = [(I32, I32, I32), (I8, I32, I32), (U8, U32, U32), (F16, F16, F32), (F32, F32, F32),
              (BF, BF, F32), (F64, F32, F64)]

TENSOR_FLOORDIV = [(I32, I32, I32), (I16, I32, I32), (I64, I8, I64), (U16, U8, U16)]

# (tensor dtype, Python literal, result of tensor + literal)
LITERAL_ADD = [
    (I8, 1, I8), (I16, -3, I16), (U8, 255, U8), (I32, 2 ** 31 - 1, I32), (I64, 2 ** 40, I64),
    (U32, 2 ** 31, U32), (U64, 2 ** 63, U64), (I8, 1.5, F32), (I64, 0.5, F32), (U8, 2.0, F32),
    (F16, 1.5, F16), (F16, 1, F16), (BF, 2, BF), (BF, 2.5, BF), (F32, 1e300, F32), (F64, 1.0, F64),
    (F8A, 1.0, F8A), (I1, 1, I32), (I1, True, I1), (I32, True, I32), (F16, True, F16), (I8, 1e300, F64),
]

LITERAL_DIV = [(F16, 2, F32), (F16, 2.0, F32), (BF, 2.0, F32), (F32, 2, F32), (I32, 2, F32), (I8, 2.0, F32),
               (F64, 2, F64)]


def _binop(fn, a, b):
    with recording() as bld:
        x = bld.value(tl.block_type(a, [16]))
        y = bld.value(tl.block_type(b, [16])) if isinstance(b, tl.dtype) else b
        return fn(x, y), bld


@pytest.mark.parametrize("a,b,expected", TENSOR_ADD)
def test_add_tensor_tensor(a, b, expected):
    r, bld = _binop(operator.add, a, b)
    assert r.dtype == expected and r.shape == (16,)
    assert bld.last().name == "add"


@pytest.mark.parametrize("a,b,expected", TENSOR_ADD)
@pytest.mark.parametrize("op", [operator.sub, operator.mul])
def test_sub_mul_follow_add(op, a, b, expected):
    assert _binop(op, a, b)[0].dtype == expected


@pytest.mark.parametrize("a,b,expected", TENSOR_DIV)
def test_truediv(a, b, expected):
    r, bld = _binop(operator.truediv, a, b)
    assert r.dtype == expected
    assert bld.last().name == "div"


@pytest.mark.parametrize("a,b,expected", TENSOR_MOD)
def test_mod(a, b, expected):
    r, bld = _binop(operator.mod, a, b)
    assert r.dtype == expected and bld.last().name == "rem"


@pytest.mark.parametrize("a,b,expected", TENSOR_FLOORDIV)
def test_floordiv_ints(a, b, expected):
    r, bld = _binop(operator.floordiv, a, b)
    assert r.dtype == expected and bld.last().name == "div"


@pytest.mark.parametrize("a,b", [(I8, U8), (I32, U32), (U64, I64)])
@pytest.mark.parametrize("op", [operator.truediv, operator.mod, operator.floordiv])
def test_div_mod_mixed_signedness_rejected(op, a, b):
    with pytest.raises(TypeError, match="different signedness"):
        _binop(op, a, b)


@pytest.mark.parametrize("a", [F16, F32, BF])
def test_floordiv_floats_rejected(a):
    with pytest.raises(TypeError, match="only defined for integers"):
        _binop(operator.floordiv, a, a)


@pytest.mark.parametrize("a,lit,expected", LITERAL_ADD)
def test_literal_add_both_sides(a, lit, expected):
    assert _binop(operator.add, a, lit)[0].dtype == expected
    assert _binop(lambda x, y: y + x, a, lit)[0].dtype == expected


@pytest.mark.parametrize("a,lit,expected", LITERAL_ADD)
def test_constexpr_behaves_like_literal(a, lit, expected):
    assert _binop(operator.add, a, tl.constexpr(lit))[0].dtype == expected
    assert _binop(lambda x, y: y * x, a, tl.constexpr(lit))[0].dtype == expected


@pytest.mark.parametrize("a,lit,expected", LITERAL_DIV)
def test_literal_div(a, lit, expected):
    assert _binop(operator.truediv, a, lit)[0].dtype == expected


def test_literal_is_materialised_in_the_tensor_type():
    r, bld = _binop(operator.add, I8, 3)
    const = bld.last("const")
    assert const.result_types == [I8] and const.attrs["value"] == 3
    assert [o.name for o in bld.ops] == ["const", "splat", "add"]


@pytest.mark.parametrize("a,lit", [(I8, 1000), (I8, -129), (U8, 256), (I32, 2 ** 31), (I32, 2 ** 40),
                                   (I16, 2 ** 63), (U32, 2 ** 32)])
def test_literal_out_of_range(a, lit):
    with pytest.raises(ValueError, match="out of range"):
        _binop(operator.add, a, lit)


@pytest.mark.parametrize("a", [U8, U16, U32, U64])
def test_negative_literal_with_unsigned(a):
    with pytest.raises(ValueError, match="unsigned"):
        _binop(operator.add, a, -1)


def test_scalar_tensor_is_not_a_literal():
    # a 0-d tensor (program_id) takes part in promotion like any tensor
    with recording() as bld:
        pid = tl.program_id(0)
        x = bld.value(tl.block_type(I8, [8]))
        assert (x + pid).dtype == I32
        assert (x + pid).shape == (8,)
        assert (pid * 2).dtype == I32 and (pid * 2).shape == ()
        assert (pid * 2.0).dtype == F32


@pytest.mark.parametrize("a,b,expected", [(I8, I8, I8), (I8, I32, I32), (I1, I1, I1), (U8, I8, U8),
                                          (I64, U32, I64)])
@pytest.mark.parametrize("op", [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift])
def test_bitwise(op, a, b, expected):
    assert _binop(op, a, b)[0].dtype == expected


@pytest.mark.parametrize("a,b", [(F32, I32), (I32, F16), (F32, F32)])
def test_bitwise_floats_rejected(a, b):
    with pytest.raises(TypeError, match="integer operands"):
        _binop(operator.and_, a, b)


@pytest.mark.parametrize("a,b,common", [(I8, I32, I32), (F16, F32, F32), (U8, I8, U8), (I32, I32, I32)])
@pytest.mark.parametrize("op,pred", [(operator.lt, "lt"), (operator.le, "le"), (operator.gt, "gt"),
                                     (operator.ge, "ge"), (operator.eq, "eq"), (operator.ne, "ne")])
def test_comparisons(op, pred, a, b, common):
    r, bld = _binop(op, a, b)
    assert r.dtype == I1 and r.shape == (16,)
    cmp = bld.last("cmp")
    assert cmp.attrs["pred"] == pred and cmp.operand_types[0].scalar == common


def test_compare_with_literal():
    r, bld = _binop(operator.lt, F16, 0.5)
    assert r.dtype == I1 and bld.last("cmp").operand_types[0].scalar == F16


@pytest.mark.parametrize("a,b,expected", [(I8, I16, I16), (F16, F32, F32), (U32, I32, U32)])
def test_minimum_maximum_where_promote(a, b, expected):
    assert _binop(tl.minimum, a, b)[0].dtype == expected
    assert _binop(tl.maximum, a, b)[0].dtype == expected
    with recording() as bld:
        c = bld.value(tl.block_type(I1, [16]))
        x = bld.value(tl.block_type(a, [16]))
        y = bld.value(tl.block_type(b, [16]))
        assert tl.where(c, x, y).dtype == expected


def test_maximum_propagate_nan_attr():
    r, bld = _binop(lambda x, y: tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL), F32, F32)
    assert bld.last("max").attrs == {"propagate_nan": True}
    r, bld = _binop(tl.minimum, F32, F32)
    assert bld.last("min").attrs == {"propagate_nan": False}
    r, bld = _binop(tl.minimum, I32, I32)
    assert bld.last("min").attrs == {}


def test_unary_ops_keep_type():
    with recording() as bld:
        x = bld.value(tl.block_type(I16, [4]))
        assert (-x).dtype == I16 and bld.last().name == "neg"
        assert (~x).dtype == I16 and bld.last().name == "not"
        assert (+x) is x
        f = bld.value(tl.block_type(BF, [4]))
        assert (-f).dtype == BF
        with pytest.raises(TypeError):
            ~f


# ----- literal typing and casts


@pytest.mark.parametrize("value,expected", [(True, I1), (0, I32), (-2 ** 31, I32), (2 ** 31 - 1, I32),
                                            (2 ** 31, U32), (2 ** 32 - 1, U32), (2 ** 32, I64), (-2 ** 31 - 1, I64),
                                            (2 ** 63, U64), (2 ** 64 - 1, U64), (1.0, F32), (0.0, F32),
                                            (float("inf"), F32), (float("nan"), F32), (1e300, F64),
                                            (1e-300, F64), (3.4e38, F32)])
def test_literal_types(value, expected):
    with recording():
        t = tl.to_tensor(value)
        assert t.dtype == expected and t.shape == ()


def test_literal_too_big():
    with recording(), pytest.raises(ValueError, match="64 bits"):
        tl.to_tensor(2 ** 64)


CASTS = [(I32, F32, "cast"), (F32, I32, "cast"), (F32, F16, "cast"), (F16, F32, "cast"), (I8, I64, "cast"),
         (U8, I32, "cast"), (I1, I32, "cast"), (F32, F8A, "cast"), (F8B, BF, "cast"), (I32, I1, "cmp"),
         (F32, I1, "cmp")]


@pytest.mark.parametrize("src,dst,op", CASTS)
def test_casts(src, dst, op):
    with recording() as bld:
        x = bld.value(tl.block_type(src, [8]))
        y = x.to(dst)
        assert y.dtype == dst and y.shape == (8,)
        assert bld.last().name == op


def test_cast_to_same_type_is_free():
    with recording() as bld:
        x = bld.value(tl.block_type(F32, [8]))
        assert x.to(F32) is x and bld.ops == []


def test_cast_rounding_attr():
    with recording() as bld:
        x = bld.value(tl.block_type(F32, [8]))
        x.to(F16, fp_downcast_rounding="rtz")
        assert bld.last("cast").attrs == {"rounding": "rtz"}
        x.to(BF)
        assert bld.last("cast").attrs == {}


def test_bitcast():
    with recording() as bld:
        x = bld.value(tl.block_type(F32, [8]))
        y = x.to(U32, bitcast=True)
        assert y.dtype == U32 and bld.last().name == "bitcast"
        with pytest.raises(ValueError, match="bitcast"):
            x.to(F16, bitcast=True)


def test_pointer_casts():
    with recording() as bld:
        p = bld.value(tl.pointer_type(F32))
        assert p.to(I64).dtype == I64 and bld.last().name == "ptr_to_int"
        assert p.to(tl.pointer_type(I32)).dtype == tl.pointer_type(I32) and bld.last().name == "bitcast"
        i = bld.value(I32)
        q = i.to(tl.pointer_type(F16))
        assert q.dtype == tl.pointer_type(F16) and bld.names()[-2:] == ["cast", "int_to_ptr"]
        with pytest.raises(TypeError, match="64-bit"):
            p.to(I32)


# ----- pointer arithmetic


def test_pointer_arithmetic():
    with recording() as bld:
        p = bld.value(tl.pointer_type(F16))
        offs = tl.arange(0, 64)
        q = p + offs
        assert q.dtype == tl.pointer_type(F16) and q.shape == (64,)
        assert bld.last().name == "addptr"
        assert (offs + p).dtype == tl.pointer_type(F16)
        r = q - 1
        assert r.dtype == tl.pointer_type(F16) and bld.names()[-2:] == ["neg", "addptr"]
        # unsigned offsets are widened so addptr reads them as non-negative
        u = bld.value(tl.block_type(U32, [64]))
        p + u
        assert bld.last("addptr").operand_types[1].scalar == I64


@pytest.mark.parametrize("fn,match", [(lambda p, q: p + q, "two pointers"), (lambda p, q: p - q, "invalid"),
                                      (lambda p, q: p * 2, "invalid"), (lambda p, q: p + 1.0, "invalid"),
                                      (lambda p, q: 1 - p, "invalid")])
def test_bad_pointer_arithmetic(fn, match):
    with recording() as bld:
        p = bld.value(tl.pointer_type(F16))
        q = bld.value(tl.pointer_type(F16))
        with pytest.raises(TypeError, match=match):
            fn(p, q)


def test_integer_promote_is_exported():
    assert semantic.integer_promote(I8, U8) == U8
    assert semantic.integer_promote(I64, U32) == I64
