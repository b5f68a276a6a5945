"""Casts between element types: `bitcast` (same width, bits kept) and `cast`
(value conversion, pointer<->int64, optional float rounding mode)."""
from __future__ import annotations

from typing import Any

from .. import core
from ..dtypes import dtype, int1, int64
from .emit import _op, with_element_ty
from .scalars import constant, to_tensor
from .shapes import broadcast_pair


def bitcast(x: Any, dst: dtype) -> "core.tensor":
    x = to_tensor(x)
    dst = dst.scalar
    src = x.type.scalar
    if src == dst:
        return x
    if src.is_ptr() or dst.is_ptr():
        return cast(x, dst)
    if src.primitive_bitwidth != dst.primitive_bitwidth:
        raise ValueError(f"cannot bitcast {src} ({src.primitive_bitwidth} bits) to {dst} "
                         f"({dst.primitive_bitwidth} bits)")
    return _op("bitcast", [x], with_element_ty(x.type, dst))


def _nonzero(x: "core.tensor") -> "core.tensor":
    """`x != 0` in x's own element type: what a cast to bool means. Emitted
    here because comparison.not_equal promotes through `cast`; two operands
    of one type need no promotion, only the broadcast of the zero."""
    x, zero = broadcast_pair(x, constant(0, x.type.scalar), "!=")
    return _op("cmp", [x, zero], with_element_ty(x.type, int1), {"pred": "ne"})


def cast(x: Any, dst: dtype, fp_downcast_rounding: str | None = None) -> "core.tensor":
    x = to_tensor(x)
    if not isinstance(dst, dtype):
        raise TypeError(f"cast target must be a dtype, got {dst!r}")
    src, dst = x.type.scalar, dst.scalar
    if src == dst:
        if fp_downcast_rounding is not None:
            raise ValueError("fp_downcast_rounding is only valid for narrowing float casts")
        return x
    out_ty = with_element_ty(x.type, dst)
    narrowing = src.is_floating() and dst.is_floating() and dst.primitive_bitwidth < src.primitive_bitwidth
    if fp_downcast_rounding is not None:
        if fp_downcast_rounding not in ("rtne", "rtz"):
            raise ValueError(f"invalid rounding mode {fp_downcast_rounding!r}: expected 'rtne' or 'rtz'")
        if not narrowing:
            raise ValueError(f"fp_downcast_rounding is only valid for narrowing float casts, not {src} to {dst}")
    if dst.is_int1() and (src.is_int() or src.is_floating()):
        return _nonzero(x)
    if src.is_ptr() and dst.is_int():
        if dst.is_int1():
            return _nonzero(_op("ptr_to_int", [x], with_element_ty(x.type, int64)))
        if dst.int_bitwidth != 64:
            raise TypeError(f"cannot cast pointer {src} to {dst}: only 64-bit integers hold pointers")
        as_i64 = _op("ptr_to_int", [x], with_element_ty(x.type, int64))
        return as_i64 if dst == int64 else _op("bitcast", [as_i64], out_ty)
    if src.is_int() and dst.is_ptr():
        if src != int64:
            x = cast(x, int64)
        return _op("int_to_ptr", [x], out_ty)
    if src.is_ptr() and dst.is_ptr():
        return _op("bitcast", [x], out_ty)
    if src.is_ptr() or dst.is_ptr() or not (src.is_int() or src.is_floating()) \
            or not (dst.is_int() or dst.is_floating()):
        raise TypeError(f"cannot cast {src} to {dst}")
    attrs = {"rounding": fp_downcast_rounding} if fp_downcast_rounding is not None else {}
    return _op("cast", [x], out_ty, attrs)
