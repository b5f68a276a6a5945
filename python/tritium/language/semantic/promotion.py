"""Binary-op promotion (Triton's table): the element type two operands compute
in, literal adoption, signedness and range checks, then conversion and
broadcasting of both operands."""
from __future__ import annotations

from typing import Any

from .. import core
from ..dtypes import dtype, float16, float64, float32, bfloat16
from .casts import cast
from .scalars import _is_py_scalar, constant, int_range, literal_type, to_tensor
from .shapes import broadcast_pair, broadcast_tensors


def _kind(ty: dtype) -> int:
    if ty.is_int1():
        return 0
    if ty.is_int():
        return 1
    return 2


def integer_promote(a: dtype, b: dtype) -> dtype:
    """C's usual arithmetic conversions on two integer types."""
    ar, br = a.int_bitwidth, b.int_bitwidth
    asn, bsn = a.int_signedness, b.int_signedness
    if asn == bsn:
        return a if ar > br else b
    if asn == "unsigned":
        return a if ar >= br else b
    return b if br >= ar else a


def computation_type(a: dtype, a_lit: bool, b: dtype, b_lit: bool, div_or_mod: bool, opname: str = "") -> dtype:
    """The element type a binary arithmetic op computes in (Triton's table)."""
    if a_lit != b_lit:
        lit, ten = (a, b) if a_lit else (b, a)
        # a literal of a lower or equal kind (bool < int < float) adopts the tensor's type
        if _kind(lit) <= _kind(ten):
            if div_or_mod and ten in (float16, bfloat16):
                return float32
            return ten
    if a.is_fp64() or b.is_fp64():
        return float64
    if a.is_fp32() or b.is_fp32():
        return float32
    if a.is_fp16() or b.is_fp16():
        return float32 if div_or_mod else float16
    if a.is_bf16() and b.is_bf16():
        return float32 if div_or_mod else bfloat16
    if a.is_bf16() or b.is_bf16():
        return float32
    if a.is_fp8() and b.is_fp8():
        return a if a == b else float16
    if not a.is_int() or not b.is_int():
        raise TypeError(f"invalid operand types for '{opname}': {a} and {b}")
    if div_or_mod and a.int_signedness != b.int_signedness:
        raise TypeError(f"cannot use '{opname}' with {a} and {b}: they have different signedness; "
                        f"cast them to the same signedness first")
    return integer_promote(a, b)


def _check_ptr(a: dtype, b: dtype, allow_a: bool, opname: str) -> None:
    if a.is_ptr():
        if not allow_a or (b.is_ptr() and a != b) or b.is_floating():
            raise TypeError(f"invalid operands for '{opname}': {a} and {b}")


def binary_operands(lhs: Any, rhs: Any, opname: str, allow_lhs_ptr: bool = False, allow_rhs_ptr: bool = False,
                    arithmetic_check: bool = True, div_or_mod: bool = False):
    """Convert, promote and broadcast the two operands of a binary op."""
    lhs, rhs = core._unwrap(lhs), core._unwrap(rhs)
    lhs_lit, rhs_lit = _is_py_scalar(lhs), _is_py_scalar(rhs)
    lhs_val, rhs_val = lhs, rhs
    lt = literal_type(lhs) if lhs_lit else to_tensor(lhs).type.scalar
    rt = literal_type(rhs) if rhs_lit else to_tensor(rhs).type.scalar
    _check_ptr(lt, rt, allow_lhs_ptr, opname)
    _check_ptr(rt, lt, allow_rhs_ptr, opname)
    if arithmetic_check and not lt.is_ptr() and not rt.is_ptr():
        ret = computation_type(lt, lhs_lit, rt, rhs_lit, div_or_mod, opname)
        for lit, val in ((lhs_lit, lhs_val), (rhs_lit, rhs_val)):
            if not lit:
                continue
            if ret.is_int_unsigned() and val < 0:
                raise ValueError(f"cannot apply '{opname}' to an unsigned {ret} tensor and the negative "
                                 f"scalar {val}; cast one of them explicitly")
            if ret.is_int() and not isinstance(val, float):
                lo, hi = int_range(ret)
                if not lo <= val <= hi:
                    raise ValueError(f"scalar {val} is out of range for type {ret} in '{opname}'")
        lhs = constant(lhs_val, ret) if lhs_lit else cast(to_tensor(lhs), ret)
        rhs = constant(rhs_val, ret) if rhs_lit else cast(to_tensor(rhs), ret)
    else:
        lhs, rhs = to_tensor(lhs), to_tensor(rhs)
    return broadcast_pair(lhs, rhs, opname)


def float_ternary_operands(x: Any, a: Any, b: Any, opname: str) -> list:
    """The operands of a floating-point op on three values (`clamp`, `fma`):
    `a` promoted with `b`, then `x` with each, all broadcast to one shape."""
    a, b = binary_operands(a, b, opname)
    x, a = binary_operands(x, a, opname)
    x, b = binary_operands(x, b, opname)
    x, a, b = broadcast_tensors(x, a, b, opname=opname)
    if not x.type.scalar.is_floating():
        raise TypeError(f"{opname} is only defined for floating point, got {x.type.scalar}")
    return [x, a, b]
