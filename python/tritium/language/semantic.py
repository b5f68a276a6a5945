"""Type and shape rules of the kernel language, decided once.

Every builtin and tensor operator lands here: promotion, broadcasting, casts and
argument checks follow Triton's rules so existing kernels type-check the same
way; the result is a call to the current builder with an op of docs/ir.md. The
compiler and the interpreter share this module, so they cannot disagree.
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

from . import core
from .builder import current_builder
from .dtypes import (block_type, dtype, float16, float32, float64, bfloat16, int1, int8, int32, int64,
                     pointer_type, uint32, uint64)

# ---------------------------------------------------------------------------
# op creation helpers
# ---------------------------------------------------------------------------


def _op(op: str, operands: Sequence["core.tensor"], ty: dtype, attrs: dict | None = None) -> "core.tensor":
    handles = current_builder().create(op, [o.handle for o in operands], [ty], attrs or {})
    return core.tensor(handles[0], ty)


def _op_void(op: str, operands: Sequence["core.tensor"], attrs: dict | None = None) -> None:
    current_builder().create(op, [o.handle for o in operands], [], attrs or {})


def with_element_ty(ty: dtype, elem: dtype) -> dtype:
    return block_type(elem, ty.shape) if ty.is_block() else elem


def _shape(ty: dtype) -> tuple:
    return ty.shape if ty.is_block() else ()


def _fmt_shape(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _tyname(ty: dtype) -> str:
    return str(ty.scalar) if not ty.is_block() else f"{_fmt_shape(ty.shape)} {ty.scalar}"


# ---------------------------------------------------------------------------
# constants and Python scalars
# ---------------------------------------------------------------------------

_MIN_F32 = 2.0 ** -126
_MAX_F32 = (2 - 2.0 ** -23) * 2.0 ** 127


def literal_type(x: Any) -> dtype:
    """The dtype a Python literal (or constexpr) takes inside a kernel."""
    if isinstance(x, core.constexpr):
        x = x.value
    if isinstance(x, bool):
        return int1
    if isinstance(x, int):
        if -2 ** 31 <= x < 2 ** 31:
            return int32
        if 2 ** 31 <= x < 2 ** 32:
            return uint32
        if -2 ** 63 <= x < 2 ** 63:
            return int64
        if 2 ** 63 <= x < 2 ** 64:
            return uint64
        raise ValueError(f"integer literal {x} does not fit in 64 bits")
    if isinstance(x, float):
        a = abs(x)
        if a == float("inf") or a == 0.0 or x != x or _MIN_F32 <= a <= _MAX_F32:
            return float32
        return float64
    raise TypeError(f"cannot use {x!r} of type {type(x).__name__} as a kernel value")


def int_range(ty: dtype) -> tuple[int, int]:
    bits = ty.int_bitwidth
    if ty.is_int1():
        return 0, 1
    if ty.is_int_signed():
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def constant(value: Any, ty: dtype) -> "core.tensor":
    """A `const` op of scalar or block type `ty` holding `value`."""
    sca = ty.scalar
    if sca.is_floating():
        value = float(value)
    elif sca.is_int1():
        value = bool(value)
    elif sca.is_int():
        if isinstance(value, float):
            value = int(value)
        value = int(value)
        lo, hi = int_range(sca)
        if not lo <= value <= hi:
            raise ValueError(f"constant {value} is out of range for {sca}")
    else:
        raise TypeError(f"cannot make a constant of type {ty}")
    return _op("const", [], ty, {"value": value})


def to_tensor(x: Any) -> "core.tensor":
    if isinstance(x, core.tensor):
        return x
    if isinstance(x, core.constexpr):
        x = x.value
    if isinstance(x, core.tensor):
        return x
    if isinstance(x, (bool, int, float)):
        return constant(x, literal_type(x))
    if hasattr(x, "dtype") and hasattr(x, "item") and getattr(x, "ndim", 1) == 0:
        # NumPy scalars reach here from the interpreter's host values
        return to_tensor(x.item())
    raise TypeError(f"cannot convert {x!r} of type {type(x).__name__} to a tensor")


def _is_py_scalar(x: Any) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, core.tensor)


# ---------------------------------------------------------------------------
# promotion
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# broadcasting
# ---------------------------------------------------------------------------


def broadcast_shapes(a: tuple, b: tuple, opname: str = "broadcast") -> tuple:
    if len(a) < len(b):
        a = (1,) * (len(b) - len(a)) + tuple(a)
    elif len(b) < len(a):
        b = (1,) * (len(a) - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ValueError(f"incompatible shapes for '{opname}': {_fmt_shape(a)} and {_fmt_shape(b)}")
    return tuple(out)


def splat(x: "core.tensor", shape: Sequence[int]) -> "core.tensor":
    if x.type.is_block():
        raise ValueError("cannot splat a block tensor")
    if len(shape) == 0:
        return x
    return _op("splat", [x], block_type(x.type, shape))


def broadcast_to_shape(x: "core.tensor", shape: Sequence[int], opname: str = "broadcast_to") -> "core.tensor":
    """Broadcast `x` to `shape`; lower ranks are aligned on the right."""
    shape = tuple(shape)
    if not x.type.is_block():
        return splat(x, shape)
    src = x.type.shape
    if len(src) > len(shape):
        raise ValueError(f"cannot broadcast shape {_fmt_shape(src)} to {_fmt_shape(shape)} in '{opname}'")
    while len(x.type.shape) < len(shape):
        x = expand_dims(x, 0)
    src = x.type.shape
    if src == shape:
        return x
    for s, d in zip(src, shape):
        if s != d and s != 1:
            raise ValueError(f"incompatible shapes for '{opname}': {_fmt_shape(src)} and {_fmt_shape(shape)}")
    return _op("broadcast", [x], block_type(x.type.scalar, shape))


def broadcast_pair(a: "core.tensor", b: "core.tensor", opname: str = "broadcast"):
    sa, sb = _shape(a.type), _shape(b.type)
    if sa == sb:
        return a, b
    shape = broadcast_shapes(sa, sb, opname)
    return broadcast_to_shape(a, shape, opname), broadcast_to_shape(b, shape, opname)


def broadcast_tensors(*xs: "core.tensor", opname: str = "broadcast") -> list:
    shape: tuple = ()
    for x in xs:
        shape = broadcast_shapes(shape, _shape(x.type), opname)
    return [broadcast_to_shape(x, shape, opname) for x in xs]


def broadcast_to(x: "core.tensor", shape: Sequence[int]) -> "core.tensor":
    """`tl.broadcast_to`: ranks must match (a scalar may be splatted)."""
    shape = check_shape(shape, "broadcast_to")
    if x.type.is_block() and len(x.type.shape) != len(shape):
        raise ValueError(f"broadcast_to: rank mismatch between {_fmt_shape(x.type.shape)} and {_fmt_shape(shape)}")
    return broadcast_to_shape(x, shape, "broadcast_to")


def check_shape(shape: Sequence[Any], what: str) -> tuple:
    out = []
    for i, s in enumerate(shape):
        s = core._unwrap(s)
        if isinstance(s, core.tensor) or not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"{what}: shape element {i} must be a constexpr int, got {s!r}")
        if s <= 0 or s & (s - 1):
            raise ValueError(f"{what}: shape element {i} is {s}, which is not a power of two")
        out.append(s)
    return tuple(out)


# ---------------------------------------------------------------------------
# arithmetic
# ---------------------------------------------------------------------------


def _arith(op: str, a: "core.tensor", b: "core.tensor", attrs: dict | None = None) -> "core.tensor":
    return _op(op, [a, b], a.type, attrs)


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
    lo, hi = binary_operands(lo, hi, "clamp")
    x, lo = binary_operands(x, lo, "clamp")
    x, hi = binary_operands(x, hi, "clamp")
    x, lo, hi = broadcast_tensors(x, lo, hi, opname="clamp")
    if not x.type.scalar.is_floating():
        raise TypeError(f"clamp is only defined for floating point, got {x.type.scalar}")
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


def umulhi(x: Any, y: Any) -> "core.tensor":
    x, y = binary_operands(x, y, "umulhi")
    if x.type.scalar.name not in ("int32", "int64", "uint32", "uint64"):
        raise ValueError(f"umulhi: expected dtype int32, int64, uint32 or uint64, got {x.type.scalar}")
    return _arith("umulhi", x, y)


def fma(x: Any, y: Any, z: Any) -> "core.tensor":
    x, y = binary_operands(x, y, "fma")
    z, x = binary_operands(z, x, "fma")
    z, y = binary_operands(z, y, "fma")
    x, y, z = broadcast_tensors(x, y, z, opname="fma")
    if not x.type.scalar.is_floating():
        raise TypeError(f"fma is only defined for floating point, got {x.type.scalar}")
    return _op("fma", [x, y, z], x.type)


def _check_float(x: "core.tensor", name: str, allowed: Sequence[str]) -> None:
    if x.type.scalar.name not in allowed:
        raise ValueError(f"tl.{name}: expected dtype {' or '.join(allowed)}, got {x.type.scalar}")


_MATH_DTYPES = ("fp32", "fp64")


def unary_math(op: str, x: Any, allowed: Sequence[str] = _MATH_DTYPES) -> "core.tensor":
    """exp, log, sqrt, ...: float-only, like Triton (libdevice's contract); no implicit upcast."""
    x = to_tensor(x)
    _check_float(x, op, allowed)
    return _op(op, [x], x.type)


def abs_(x: Any) -> "core.tensor":
    x = to_tensor(x)
    sca = x.type.scalar
    if sca.is_int_unsigned() or sca.is_int1():
        return x
    if sca.is_floating() or sca.is_int():
        return _op("abs", [x], x.type)
    raise TypeError(f"abs is not defined for {sca}")


# ---------------------------------------------------------------------------
# casts
# ---------------------------------------------------------------------------


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
        return not_equal(x, constant(0, src))
    if src.is_ptr() and dst.is_int():
        if dst.is_int1():
            return not_equal(_op("ptr_to_int", [x], with_element_ty(x.type, int64)), constant(0, int64))
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


# ---------------------------------------------------------------------------
# creation and ids
# ---------------------------------------------------------------------------


def program_id(axis: int) -> "core.tensor":
    if axis not in (0, 1, 2):
        raise ValueError(f"program_id axis must be 0, 1 or 2, got {axis}")
    return _op("program_id", [], int32, {"axis": axis})


def num_programs(axis: int) -> "core.tensor":
    if axis not in (0, 1, 2):
        raise ValueError(f"num_programs axis must be 0, 1 or 2, got {axis}")
    return _op("num_programs", [], int32, {"axis": axis})


def arange(start: Any, end: Any) -> "core.tensor":
    start, end = core._unwrap(start), core._unwrap(end)
    if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool) or isinstance(end, bool):
        raise TypeError("tl.arange: start and end must be constexpr ints")
    if not (-2 ** 31 <= start < 2 ** 31 and -2 ** 31 <= end < 2 ** 31):
        raise ValueError(f"tl.arange: range [{start}, {end}) must fit in int32")
    if end <= start:
        raise ValueError(f"tl.arange: end ({end}) must be greater than start ({start})")
    n = end - start
    if n & (n - 1):
        raise ValueError(f"tl.arange: range length {n} is not a power of two")
    return _op("arange", [], block_type(int32, [n]), {"start": start, "end": end})


def full(shape: Sequence[Any], value: Any, dt: dtype) -> "core.tensor":
    shape = check_shape(shape, "full")
    value = core._unwrap(value)
    if not isinstance(dt, dtype):
        raise TypeError(f"full: dtype must be a tl.dtype, got {dt!r}")
    if isinstance(value, core.tensor):
        if value.type.is_block():
            if value.type.numel != 1:
                raise ValueError("full: value must be a scalar")
            if not shape:
                raise ValueError("full: a 1-element block cannot become a 0-d value; use tl.sum")
            value = reshape(value, (1,) * len(shape))
        value = cast(value, dt)
        if value.type.is_block():
            return broadcast_to_shape(value, shape, "full")
        return splat(value, shape)
    return constant(value, block_type(dt, shape) if shape else dt)


# ---------------------------------------------------------------------------
# shape ops
# ---------------------------------------------------------------------------


def wrap_axis(axis: Any, ndim: int, what: str = "axis") -> int:
    axis = core._unwrap(axis)
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"{what} must be a constexpr int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"invalid {what} {axis}: expected {-ndim} <= {what} < {ndim}")
    return axis % ndim


def expand_dims(x: Any, axis: Any) -> "core.tensor":
    x = to_tensor(x)
    axis = core._unwrap(axis)
    axes = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    ndim = len(_shape(x.type)) + len(axes)
    axes = [wrap_axis(a, ndim) for a in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"expand_dims: duplicate axes {axes}")
    for a in sorted(axes):
        shape = list(_shape(x.type))
        shape.insert(a, 1)
        if not x.type.is_block():
            x = splat(x, shape)
        else:
            x = _op("expand_dims", [x], block_type(x.type.scalar, shape), {"axis": a})
    return x


def reshape(x: Any, shape: Sequence[Any], can_reorder: bool = False) -> "core.tensor":
    x = to_tensor(x)
    shape = check_shape(shape, "reshape")
    numel = 1
    for s in shape:
        numel *= s
    src_numel = x.type.numel if x.type.is_block() else 1
    if numel != src_numel:
        raise ValueError(f"reshape: cannot reshape {_fmt_shape(_shape(x.type))} ({src_numel} elements) "
                         f"to {_fmt_shape(shape)} ({numel} elements)")
    if not x.type.is_block():
        return splat(x, shape)
    if not shape:
        raise ValueError("reshape: the target shape must not be empty")
    if x.type.shape == shape:
        return x
    return _op("reshape", [x], block_type(x.type.scalar, shape), {"can_reorder": bool(can_reorder)})


def permute(x: Any, dims: Sequence[Any]) -> "core.tensor":
    x = to_tensor(x)
    dims = tuple(core._unwrap(d) for d in dims)
    shape = _shape(x.type)
    if len(dims) != len(shape):
        raise ValueError(f"permute: {len(dims)} dims given for a tensor of rank {len(shape)}")
    if sorted(dims) != list(range(len(dims))):
        raise ValueError(f"permute: dims must be a permutation of 0..{len(dims) - 1}, got {list(dims)}")
    if dims == tuple(range(len(dims))):
        return x
    return _op("permute", [x], block_type(x.type.scalar, [shape[d] for d in dims]), {"order": list(dims)})


def trans(x: Any, dims: Sequence[Any] = ()) -> "core.tensor":
    x = to_tensor(x)
    if not dims:
        if len(_shape(x.type)) != 2:
            raise ValueError(f"trans without dims needs a 2-D tensor, got shape {_fmt_shape(_shape(x.type))}")
        dims = (1, 0)
    return permute(x, dims)


def join(a: Any, b: Any) -> "core.tensor":
    a, b = to_tensor(a), to_tensor(b)
    if a.type.scalar != b.type.scalar:
        raise TypeError(f"join: operands must have the same dtype, got {a.type.scalar} and {b.type.scalar}")
    a, b = broadcast_pair(a, b, "join")
    if not a.type.is_block():
        a, b = expand_dims(a, 0), expand_dims(b, 0)
        joined = _op("join", [a, b], block_type(a.type.scalar, (1, 2)))
        return reshape(joined, (2,))
    return _op("join", [a, b], block_type(a.type.scalar, a.type.shape + (2,)))


def split(a: Any) -> tuple:
    a = to_tensor(a)
    shape = _shape(a.type)
    if not shape or shape[-1] != 2:
        raise ValueError(f"split: the last dimension must be 2, got shape {_fmt_shape(shape)}")
    out_ty = block_type(a.type.scalar, shape[:-1]) if len(shape) > 1 else a.type.scalar
    hs = current_builder().create("split", [a.handle], [out_ty, out_ty], {})
    return core.tensor(hs[0], out_ty), core.tensor(hs[1], out_ty)


def cat(a: Any, b: Any, can_reorder: bool = False) -> "core.tensor":
    a, b = to_tensor(a), to_tensor(b)
    if not can_reorder:
        raise ValueError("tl.cat: only can_reorder=True is supported (the result's element order is unspecified)")
    if not a.type.is_block() or a.type != b.type:
        raise TypeError(f"tl.cat: operands must be tensors of one type, got {_tyname(a.type)} and {_tyname(b.type)}")
    shape = (a.type.shape[0] * 2,) + a.type.shape[1:]
    return _op("cat", [a, b], block_type(a.type.scalar, shape), {"can_reorder": True})


# ---------------------------------------------------------------------------
# memory
# ---------------------------------------------------------------------------

_LOAD_CACHE = ("", ".ca", ".cg", ".cv")
_STORE_CACHE = ("", ".wb", ".cg", ".cs", ".wt")
_EVICTION = ("", "evict_last", "evict_first", "evict_normal")
_SEMS = ("relaxed", "acquire", "release", "acq_rel")
_SCOPES = ("gpu", "cta", "sys")


def _choice(value: Any, allowed: Sequence[str], what: str) -> str:
    value = core._unwrap(value)
    value = "" if value is None else value
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{what} {value!r} is not supported; expected one of "
                         f"{', '.join(repr(a) for a in allowed if a)}")
    return value


def _check_mask(mask: "core.tensor") -> None:
    if not mask.type.scalar.is_int1():
        raise TypeError(f"mask must be a boolean tensor, got {mask.type.scalar}")


def _bool_ptr_as_i8(ptr: "core.tensor") -> tuple:
    """Kernels see `*i1` memory as bytes, as in Triton: load/store i8 and convert."""
    elem = ptr.type.scalar.element_ty
    if elem == int1:
        ptr = cast(ptr, pointer_type(int8, ptr.type.scalar.address_space))
        return ptr, int8, True
    return ptr, elem, False


def load(ptr: Any, mask: Any = None, other: Any = None, boundary_check: Any = (), padding_option: Any = "",
         cache_modifier: Any = "", eviction_policy: Any = "", volatile: Any = False) -> "core.tensor":
    ptr = to_tensor(ptr)
    cache = _choice(cache_modifier, _LOAD_CACHE, "load cache_modifier")
    eviction = _choice(eviction_policy, _EVICTION, "eviction_policy")
    boundary_check, padding_option = core._unwrap(boundary_check), core._unwrap(padding_option)
    if padding_option not in (None, "", "zero", "nan"):
        raise ValueError(f"padding_option {padding_option!r} is not supported; expected 'zero' or 'nan'")
    if not ptr.type.scalar.is_ptr():
        raise TypeError(f"tl.load: expected a pointer, got {_tyname(ptr.type)}")
    if boundary_check or padding_option:
        raise ValueError("tl.load: boundary_check and padding_option only apply to block pointers "
                         "(tl.make_block_ptr); use a mask with a tensor of pointers")
    mask = None if core._unwrap(mask) is None else to_tensor(mask)
    other = None if core._unwrap(other) is None else core._unwrap(other)
    if mask is None and other is not None:
        raise ValueError("tl.load: `other` needs a `mask`")
    if not ptr.type.is_block():
        if mask is not None and mask.type.is_block():
            raise ValueError("tl.load: mask cannot be a block when the pointer is a scalar")
        if isinstance(other, core.tensor) and other.type.is_block():
            raise ValueError("tl.load: other cannot be a block when the pointer is a scalar")
    if mask is not None:
        if not mask.type.scalar.is_int1():
            raise TypeError(f"tl.load: mask must be boolean, got {mask.type.scalar}")
        if ptr.type.is_block():
            ptr, mask = broadcast_pair(ptr, mask, "load")
    ptr, elem, was_bool = _bool_ptr_as_i8(ptr)
    if other is not None:
        other = cast(to_tensor(other), elem)
        if ptr.type.is_block():
            ptr, other = broadcast_pair(ptr, other, "load")
            if mask is not None and mask.type.shape != ptr.type.shape:
                mask = broadcast_to_shape(mask, ptr.type.shape, "load")
    operands = [ptr] + ([mask] if mask is not None else []) + ([other] if other is not None else [])
    attrs = {"cache": cache, "eviction": eviction, "volatile": bool(core._unwrap(volatile))}
    ret = _op("load", operands, with_element_ty(ptr.type, elem), attrs)
    return cast(ret, int1) if was_bool else ret


def store(ptr: Any, value: Any, mask: Any = None, boundary_check: Any = (), cache_modifier: Any = "",
          eviction_policy: Any = "") -> None:
    ptr = to_tensor(ptr)
    cache = _choice(cache_modifier, _STORE_CACHE, "store cache_modifier")
    eviction = _choice(eviction_policy, _EVICTION, "eviction_policy")
    if not ptr.type.scalar.is_ptr():
        raise TypeError(f"tl.store: expected a pointer, got {_tyname(ptr.type)}")
    if getattr(ptr.type.scalar, "const", False):
        raise TypeError("tl.store: cannot store through a constant pointer")
    if core._unwrap(boundary_check):
        raise ValueError("tl.store: boundary_check only applies to block pointers (tl.make_block_ptr); "
                         "use a mask with a tensor of pointers")
    value = to_tensor(value)
    mask = None if core._unwrap(mask) is None else to_tensor(mask)
    if not ptr.type.is_block():
        if value.type.is_block():
            raise ValueError("tl.store: value cannot be a block when the pointer is a scalar")
        if mask is not None and mask.type.is_block():
            raise ValueError("tl.store: mask cannot be a block when the pointer is a scalar")
    else:
        ptr_shape = ptr.type.shape
        parts = [ptr, value] + ([mask] if mask is not None else [])
        parts = broadcast_tensors(*parts, opname="store")
        ptr, value = parts[0], parts[1]
        mask = parts[2] if mask is not None else None
        if ptr.type.shape != ptr_shape:
            raise ValueError(f"tl.store: value/mask shape would broadcast the pointer from "
                             f"{_fmt_shape(ptr_shape)} to {_fmt_shape(ptr.type.shape)}")
    if mask is not None:
        _check_mask(mask)
    ptr, elem, _ = _bool_ptr_as_i8(ptr)
    value = cast(value, elem)
    operands = [ptr, value] + ([mask] if mask is not None else [])
    _op_void("store", operands, {"cache": cache, "eviction": eviction})


def _atomic_operands(ptr: Any, val: Any, mask: Any, kind: str):
    ptr = to_tensor(ptr)
    if not ptr.type.scalar.is_ptr():
        raise TypeError(f"atomic_{kind}: expected a pointer, got {_tyname(ptr.type)}")
    if getattr(ptr.type.scalar, "const", False):
        raise TypeError(f"atomic_{kind}: cannot write through a constant pointer")
    elem = ptr.type.scalar.element_ty
    if elem in (float16, bfloat16) and kind != "add":
        raise TypeError(f"atomic_{kind} does not support {elem}")
    if elem.primitive_bitwidth < 32 and not elem in (float16, bfloat16):
        raise TypeError(f"atomic_{kind} does not support {elem}")
    val = to_tensor(val)
    mask = None if core._unwrap(mask) is None else to_tensor(mask)
    if ptr.type.is_block():
        val = broadcast_to_shape(val, ptr.type.shape, f"atomic_{kind}")
        if mask is not None:
            mask = broadcast_to_shape(mask, ptr.type.shape, f"atomic_{kind}")
    else:
        if val.type.is_block() or (mask is not None and mask.type.is_block()):
            raise ValueError(f"atomic_{kind}: value and mask must be scalars when the pointer is a scalar")
    if mask is not None:
        _check_mask(mask)
    return ptr, cast(val, elem), mask


def atomic_rmw(kind: str, ptr: Any, val: Any, mask: Any = None, sem: Any = None, scope: Any = None) -> "core.tensor":
    sem = _choice(sem or "acq_rel", _SEMS, "atomic sem")
    scope = _choice(scope or "gpu", _SCOPES, "atomic scope")
    ptr, val, mask = _atomic_operands(ptr, val, mask, kind)
    sca = val.type.scalar
    if kind in ("and", "or", "xor") and not sca.is_int():
        raise TypeError(f"atomic_{kind} needs an integer element type, got {sca}")
    if kind in ("max", "min") and sca.is_floating():
        if sca not in (float32, float64):
            raise TypeError(f"atomic_{kind} is not supported for {sca}")
        return _float_atomic_minmax(kind, ptr, val, mask, sem, scope)
    attrs = {"kind": kind, "sem": sem, "scope": scope}
    return _op("atomic_rmw", [ptr, val] + ([mask] if mask is not None else []), val.type, attrs)


def _float_atomic_minmax(kind, ptr, val, mask, sem, scope):
    """Float max/min through integer atomics: for non-negative values the signed
    order of the bits is the float order; for negative ones the unsigned order is
    reversed. Exact for every non-NaN input."""
    sca = val.type.scalar
    ity, uty = (int32, uint32) if sca == float32 else (int64, uint64)
    space = ptr.type.scalar.address_space
    if mask is None:
        mask = constant(True, with_element_ty(val.type, int1))
    i_val, u_val = bitcast(val, ity), bitcast(val, uty)
    i_ptr, u_ptr = bitcast(ptr, pointer_type(ity, space)), bitcast(ptr, pointer_type(uty, space))
    neg = cast(shr(u_val, sca.primitive_bitwidth - 1), int1)
    pos = not_(neg)
    other = "min" if kind == "max" else "max"
    attrs = {"sem": sem, "scope": scope}
    pos_ret = _op("atomic_rmw", [i_ptr, i_val, and_(mask, pos)], i_val.type, {"kind": kind, **attrs})
    neg_ret = _op("atomic_rmw", [u_ptr, u_val, and_(mask, neg)], u_val.type, {"kind": other, **attrs})
    return where(pos, bitcast(pos_ret, sca), bitcast(neg_ret, sca))


def atomic_cas(ptr: Any, cmp: Any, val: Any, sem: Any = None, scope: Any = None) -> "core.tensor":
    sem = _choice(sem or "acq_rel", _SEMS, "atomic sem")
    scope = _choice(scope or "gpu", _SCOPES, "atomic scope")
    ptr = to_tensor(ptr)
    if not ptr.type.scalar.is_ptr():
        raise TypeError(f"atomic_cas: expected a pointer, got {_tyname(ptr.type)}")
    elem = ptr.type.scalar.element_ty
    if elem.primitive_bitwidth not in (16, 32, 64):
        raise TypeError(f"atomic_cas only supports 16, 32 or 64-bit elements, got {elem}")
    cmp, val = to_tensor(cmp), to_tensor(val)
    shape = _shape(ptr.type)
    if ptr.type.is_block():
        cmp, val = broadcast_to_shape(cmp, shape, "atomic_cas"), broadcast_to_shape(val, shape, "atomic_cas")
    elif cmp.type.is_block() or val.type.is_block():
        raise ValueError("atomic_cas: cmp and val must be scalars when the pointer is a scalar")
    cmp, val = cast(cmp, elem), cast(val, elem)
    return _op("atomic_cas", [ptr, cmp, val], val.type, {"sem": sem, "scope": scope})


# ---------------------------------------------------------------------------
# dot
# ---------------------------------------------------------------------------

_DOT_INPUT = ("int8", "uint8", "fp16", "bf16", "fp32", "fp64")
_INPUT_PRECISIONS = ("tf32", "tf32x3", "ieee")


def dot(a: Any, b: Any, acc: Any = None, input_precision: Any = None, allow_tf32: Any = None,
        max_num_imprecise_acc: Any = None, out_dtype: dtype = float32) -> "core.tensor":
    a, b = to_tensor(a), to_tensor(b)
    input_precision, allow_tf32 = core._unwrap(input_precision), core._unwrap(allow_tf32)
    max_num_imprecise_acc = core._unwrap(max_num_imprecise_acc)
    out_dtype = core._unwrap(out_dtype)
    if input_precision is not None and allow_tf32 is not None:
        raise ValueError("tl.dot: give only one of input_precision and allow_tf32")
    if input_precision is None:
        input_precision = "tf32" if allow_tf32 is None or allow_tf32 else "ieee"
    if not isinstance(input_precision, str) or input_precision.lower() not in _INPUT_PRECISIONS:
        raise ValueError(f"tl.dot: input_precision must be one of {', '.join(_INPUT_PRECISIONS)}, "
                         f"got {input_precision!r}")
    input_precision = input_precision.lower()
    if not a.type.is_block() or not b.type.is_block() or len(a.type.shape) != 2 or len(b.type.shape) != 2:
        raise ValueError(f"tl.dot: both operands must be 2-D tensors, got {_tyname(a.type)} and {_tyname(b.type)}")
    ad, bd = a.type.scalar, b.type.scalar
    if not (ad.is_fp8() and bd.is_fp8()):
        if ad.name not in _DOT_INPUT or bd.name not in _DOT_INPUT:
            raise TypeError(f"tl.dot: unsupported operand dtypes {ad} and {bd}")
        if ad != bd:
            raise TypeError(f"tl.dot: both operands must have the same dtype, got {ad} and {bd}")
    (m, k), (k2, n) = a.type.shape, b.type.shape
    if k != k2:
        raise ValueError(f"tl.dot: incompatible shapes {_fmt_shape(a.type.shape)} and {_fmt_shape(b.type.shape)} "
                         f"(inner dimensions {k} and {k2} differ)")
    min_k = 32 if ad.primitive_bitwidth == 8 else 16
    if m < 16 or n < 16 or k < min_k:
        raise ValueError(f"tl.dot: shapes need M >= 16, N >= 16 and K >= {min_k}; got M={m}, N={n}, K={k}")
    if ad.is_int():
        if ad != int8 or bd != int8:
            raise TypeError("tl.dot: integer dot only supports int8 operands")
        ret = int32
    elif out_dtype == bfloat16:
        raise ValueError("tl.dot: out_dtype=bfloat16 is not supported; use float32 and cast")
    elif ad in (float32, bfloat16):
        ret = float32
    elif ad == float64:
        ret = float64
    else:
        if out_dtype not in (float16, float32):
            raise ValueError(f"tl.dot: out_dtype must be float16 or float32, got {out_dtype}")
        ret = out_dtype
    ret_ty = block_type(ret, (m, n))
    if core._unwrap(acc) is None:
        acc = constant(0, ret_ty)
    else:
        acc = to_tensor(acc)
        if acc.type != ret_ty:
            raise TypeError(f"tl.dot: accumulator must be {_tyname(ret_ty)}, got {_tyname(acc.type)} "
                            f"(pass out_dtype to match it)")
    if max_num_imprecise_acc is None:
        max_num_imprecise_acc = 0
    elif ad.is_fp8() and max_num_imprecise_acc > k:
        raise ValueError(f"tl.dot: max_num_imprecise_acc ({max_num_imprecise_acc}) must be <= K ({k})")
    attrs = {"input_precision": input_precision, "max_num_imprecise_acc": int(max_num_imprecise_acc)}
    return _op("dot", [a, b, acc], ret_ty, attrs)


# ---------------------------------------------------------------------------
# reductions and scans
# ---------------------------------------------------------------------------


def _combine_region(fn, elem_types: Sequence[dtype], what: str):
    """The region body: wrap block arguments as scalar tensors, run the user's
    combine function (inlined by the frontend), and check what it returns."""
    n = len(elem_types)

    def region(accs, news):
        args = [core.tensor(h, t) for h, t in zip(list(accs) + list(news), list(elem_types) * 2)]
        out = core.call_combine_fn(fn, args)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if len(outs) != n:
            raise TypeError(f"{what}: the combine function returned {len(outs)} values, expected {n}")
        handles = []
        for o, t in zip(outs, elem_types):
            o = core._unwrap(o)
            if _is_py_scalar(o):
                o = constant(o, t)
            o = to_tensor(o)
            if o.type != t:
                raise TypeError(f"{what}: the combine function returned {_tyname(o.type)}, expected {t}")
            handles.append(o.handle)
        return handles

    return region


def reduction(inputs: Sequence[Any], axis: Any, combine_fn, keep_dims: bool = False) -> tuple:
    inputs = [to_tensor(t) for t in inputs]
    axis = core._unwrap(axis)
    if not inputs:
        raise ValueError("tl.reduce: no inputs")
    rank = len(_shape(inputs[0].type))
    if rank == 0:
        raise ValueError("tl.reduce: cannot reduce a scalar")
    if axis is None:
        flat = [reshape(t, (t.type.numel,), can_reorder=True) for t in inputs]
        res = reduction(flat, 0, combine_fn)
        if keep_dims:
            res = tuple(reshape(r, (1,) * rank) for r in res)
        return res
    axis = wrap_axis(axis, rank, "reduction axis")
    shape = inputs[0].type.shape
    for t in inputs:
        if _shape(t.type) != shape:
            raise ValueError(f"tl.reduce: all inputs must have the same shape, got {_fmt_shape(shape)} and "
                             f"{_fmt_shape(_shape(t.type))}")
    out_shape = shape[:axis] + shape[axis + 1:]
    elem = [t.type.scalar for t in inputs]
    out_tys = [block_type(e, out_shape) if out_shape else e for e in elem]
    hs = current_builder().create_combine("reduce", [t.handle for t in inputs], out_tys, {"axis": axis}, elem,
                                          _combine_region(combine_fn, elem, "tl.reduce"))
    res = tuple(core.tensor(h, t) for h, t in zip(hs, out_tys))
    if keep_dims:
        res = tuple(expand_dims(r, axis) for r in res)
    return res


def scan(inputs: Sequence[Any], axis: Any, combine_fn, reverse: bool = False) -> tuple:
    inputs = [to_tensor(t) for t in inputs]
    if not inputs:
        raise ValueError("tl.associative_scan: no inputs")
    shape = _shape(inputs[0].type)
    if not shape:
        raise ValueError("tl.associative_scan: cannot scan a scalar")
    axis = wrap_axis(axis, len(shape), "scan axis")
    for t in inputs:
        if _shape(t.type) != shape:
            raise ValueError(f"tl.associative_scan: all inputs must have the same shape, got {_fmt_shape(shape)} "
                             f"and {_fmt_shape(_shape(t.type))}")
    elem = [t.type.scalar for t in inputs]
    tys = [t.type for t in inputs]
    hs = current_builder().create_combine("scan", [t.handle for t in inputs], tys,
                                          {"axis": axis, "reverse": bool(core._unwrap(reverse))}, elem,
                                          _combine_region(combine_fn, elem, "tl.associative_scan"))
    return tuple(core.tensor(h, t) for h, t in zip(hs, tys))


# ---------------------------------------------------------------------------
# hints and debugging
# ---------------------------------------------------------------------------


def _hint(op: str, x: Any, values: Any, scalar_ok: bool) -> "core.tensor":
    x = to_tensor(x)
    values = core._unwrap(values)
    values = [core._unwrap(v) for v in values] if isinstance(values, (list, tuple)) else [values]
    for v in values:
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise TypeError(f"tl.{op}: values must be positive constexpr ints, got {values}")
    rank = len(_shape(x.type))
    expected = max(1, rank) if scalar_ok else rank
    if len(values) != expected:
        raise ValueError(f"tl.{op}: {len(values)} values given for a tensor of rank {rank}")
    return _op(op, [x], x.type, {"values": list(values)})


def multiple_of(x: Any, values: Any) -> "core.tensor":
    return _hint("multiple_of", x, values, True)


def max_contiguous(x: Any, values: Any) -> "core.tensor":
    return _hint("max_contiguous", x, values, False)


def max_constancy(x: Any, values: Any) -> "core.tensor":
    return _hint("max_constancy", x, values, False)


def debug_barrier() -> None:
    _op_void("barrier", [])


def device_print(prefix: str, args: Sequence[Any], hex: bool = False) -> None:
    if not isinstance(prefix, str):
        raise TypeError(f"device_print: prefix must be a string, got {prefix!r}")
    if args and not prefix.endswith(" "):
        prefix += " "
    if args and not prefix.endswith(": "):
        prefix = prefix[:-1] + ": "
    if len(prefix) > 2 and not prefix.startswith(" "):
        prefix = " " + prefix
    tensors = [to_tensor(a) for a in args]
    _op_void("print", tensors, {"prefix": prefix, "hex": bool(hex)})


def device_assert(cond: Any, msg: str = "", mask: Any = None) -> None:
    b = current_builder()
    if not getattr(b, "enable_assertions", True):
        return
    if not isinstance(msg, str):
        raise TypeError(f"device_assert: msg must be a string, got {msg!r}")
    cond = to_tensor(cond)
    if not cond.type.scalar.is_int1():
        cond = cast(cond, int1)
    if core._unwrap(mask) is not None:
        cond = or_(cond, not_(to_tensor(mask)))
    _op_void("assert", [cond], {"msg": msg})
