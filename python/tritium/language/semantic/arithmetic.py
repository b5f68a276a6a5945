"""Arithmetic, bitwise and logical operators, including pointer arithmetic
(`ptr + int` becomes `addptr`)."""
from __future__ import annotations

from typing import Any

from .. import core
from ..dtypes import float32, int1, int64
from .casts import bitcast, cast
from .elementwise import _check_float
from .emit import _arith, _op
from .promotion import binary_operands
from .scalars import to_tensor


def add(x: Any, y: Any) -> "core.tensor":
    x, y = binary_operands(x, y, "+", True, True)
    if x.type.scalar.is_ptr() and y.type.scalar.is_ptr():
        raise TypeError("cannot add two pointers")
    if y.type.scalar.is_ptr():
        x, y = y, x
    if x.type.scalar.is_ptr():
        return _addptr(x, y)
    return _arith("add", x, y)


def _addptr(ptr: "core.tensor", off: "core.tensor") -> "core.tensor":
    if not off.type.scalar.is_int():
        raise TypeError(f"pointer offset must be an integer, got {off.type.scalar}")
    if off.type.scalar.is_int_unsigned() and off.type.scalar.int_bitwidth < 64 or off.type.scalar.is_int1():
        # addptr reads offsets as signed: widen unsigned ones so they stay positive
        off = cast(off, int64)
    return _op("addptr", [ptr, off], ptr.type)


def sub(x: Any, y: Any) -> "core.tensor":
    x, y = binary_operands(x, y, "-", True, False)
    if x.type.scalar.is_ptr():
        if y.type.scalar.is_int_unsigned() or y.type.scalar.is_int1():
            y = cast(y, int64)
        return _addptr(x, minus(y))
    return _arith("sub", x, y)


def mul(x: Any, y: Any) -> "core.tensor":
    x, y = binary_operands(x, y, "*")
    return _arith("mul", x, y)


def truediv(x: Any, y: Any) -> "core.tensor":
    x, y = binary_operands(x, y, "/", div_or_mod=True)
    if x.type.scalar.is_int():
        x, y = cast(x, float32), cast(y, float32)
    return _arith("div", x, y)


def floordiv(x: Any, y: Any) -> "core.tensor":
    x, y = binary_operands(x, y, "//", div_or_mod=True)
    if not x.type.scalar.is_int():
        raise TypeError(f"'//' is only defined for integers, got {x.type.scalar}")
    return _arith("div", x, y)


def mod(x: Any, y: Any) -> "core.tensor":
    x, y = binary_operands(x, y, "%", div_or_mod=True)
    return _arith("rem", x, y)


def fdiv(x: Any, y: Any, ieee_rounding: bool = False) -> "core.tensor":
    x, y = to_tensor(x), to_tensor(y)
    if not x.type.scalar.is_floating() or not y.type.scalar.is_floating():
        raise TypeError(f"fdiv: both operands must be floating point, got {x.type.scalar} and {y.type.scalar}")
    x, y = binary_operands(x, y, "fdiv")
    return _arith("div_rn" if ieee_rounding else "div", x, y)


def div_rn(x: Any, y: Any) -> "core.tensor":
    x, y = binary_operands(x, y, "div_rn")
    _check_float(x, "div_rn", ("fp32", "fp64"))
    return _arith("div_rn", x, y)


def _bitwise_operands(x: Any, y: Any, opname: str):
    x, y = binary_operands(x, y, opname)
    if not x.type.scalar.is_int() or not y.type.scalar.is_int():
        raise TypeError(f"'{opname}' needs integer operands, got {x.type.scalar} and {y.type.scalar}")
    return x, y


def and_(x: Any, y: Any) -> "core.tensor":
    return _arith("and", *_bitwise_operands(x, y, "&"))


def or_(x: Any, y: Any) -> "core.tensor":
    return _arith("or", *_bitwise_operands(x, y, "|"))


def xor_(x: Any, y: Any) -> "core.tensor":
    return _arith("xor", *_bitwise_operands(x, y, "^"))


def shl(x: Any, y: Any) -> "core.tensor":
    return _arith("shl", *_bitwise_operands(x, y, "<<"))


def shr(x: Any, y: Any) -> "core.tensor":
    # `shr` is arithmetic for signed and logical for unsigned types, as Triton's `>>`
    return _arith("shr", *_bitwise_operands(x, y, ">>"))


def _to_bool(x: Any, opname: str) -> "core.tensor":
    x = to_tensor(x)
    if not x.type.scalar.is_int1():
        x = bitcast(x, int1)
    return x


def logical_and(x: Any, y: Any) -> "core.tensor":
    return and_(_to_bool(x, "and"), _to_bool(y, "and"))


def logical_or(x: Any, y: Any) -> "core.tensor":
    return or_(_to_bool(x, "or"), _to_bool(y, "or"))


def not_(x: Any) -> "core.tensor":
    return invert(_to_bool(x, "not"))


def minus(x: Any) -> "core.tensor":
    x = to_tensor(x)
    if x.type.scalar.is_ptr():
        raise TypeError(f"unary '-' is not defined for pointers ({x.type.scalar})")
    return _op("neg", [x], x.type)


def plus(x: Any) -> "core.tensor":
    x = to_tensor(x)
    if x.type.scalar.is_ptr():
        raise TypeError(f"unary '+' is not defined for pointers ({x.type.scalar})")
    return x


def invert(x: Any) -> "core.tensor":
    x = to_tensor(x)
    if x.type.scalar.is_ptr() or x.type.scalar.is_floating():
        raise TypeError(f"'~' needs an integer operand, got {x.type.scalar}")
    return _op("not", [x], x.type)
