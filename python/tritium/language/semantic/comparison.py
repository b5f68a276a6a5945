"""Comparisons, min/max/clamp (with their NaN propagation flag) and `where`."""
from __future__ import annotations

from typing import Any

from .. import core
from ..dtypes import int1
from .casts import cast
from .emit import _arith, _op, with_element_ty
from .promotion import binary_operands, float_ternary_operands
from .scalars import to_tensor
from .shapes import broadcast_tensors


_CMP = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def compare(x: Any, y: Any, opname: str) -> "core.tensor":
    x, y = binary_operands(x, y, opname)
    if x.type.scalar.is_ptr():
        raise TypeError(f"cannot compare pointers with '{opname}'")
    return _op("cmp", [x, y], with_element_ty(x.type, int1), {"pred": _CMP[opname]})


def equal(x, y): return compare(x, y, "==")
def not_equal(x, y): return compare(x, y, "!=")
def less_than(x, y): return compare(x, y, "<")
def less_equal(x, y): return compare(x, y, "<=")
def greater_than(x, y): return compare(x, y, ">")
def greater_equal(x, y): return compare(x, y, ">=")


PROPAGATE_NAN_ALL = 0xFFFF


def _minmax(op: str, x: Any, y: Any, propagate_nan: Any) -> "core.tensor":
    x, y = binary_operands(x, y, op)
    sca = x.type.scalar
    if sca.is_floating():
        return _arith(op, x, y, {"propagate_nan": int(core._unwrap(propagate_nan) or 0) == PROPAGATE_NAN_ALL})
    if sca.is_int():
        return _arith(op, x, y)
    raise TypeError(f"{op}imum is not defined for {sca}")


def minimum(x: Any, y: Any, propagate_nan: Any = 0) -> "core.tensor":
    return _minmax("min", x, y, propagate_nan)


def maximum(x: Any, y: Any, propagate_nan: Any = 0) -> "core.tensor":
    return _minmax("max", x, y, propagate_nan)


def clamp(x: Any, lo: Any, hi: Any, propagate_nan: Any = 0) -> "core.tensor":
    x, lo, hi = float_ternary_operands(x, lo, hi, "clamp")
    pn = int(core._unwrap(propagate_nan) or 0) == PROPAGATE_NAN_ALL
    return _op("clamp", [x, lo, hi], x.type, {"propagate_nan": pn})


def where(cond: Any, x: Any, y: Any) -> "core.tensor":
    cond = to_tensor(cond)
    if not cond.type.scalar.is_int1():
        cond = cast(cond, int1)
    x, y = binary_operands(x, y, "where", True, True)
    if x.type.scalar != y.type.scalar:
        raise TypeError(f"where: incompatible value types {x.type.scalar} and {y.type.scalar}")
    cond, x, y = broadcast_tensors(cond, x, y, opname="where")
    return _op("select", [cond, x, y], x.type)
