"""The builder's elementwise ops: arithmetic, comparisons, math, casts and
pointer arithmetic. Operands share a logical shape (the semantic layer
broadcasts them first), so NumPy's broadcasting only has to match the
leading program axis (1 for a value all programs share, P otherwise); these
ops never look at axes. Semantics follow compiled code: integers wrap, f32
stays f32; arith.py has the edge cases."""
from __future__ import annotations

import numpy as np

from . import arith, floats
from .errors import InterpreterError

_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal}
UNARY_FLOAT = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
               "sqrt_rn": np.sqrt, "sin": np.sin, "cos": np.cos, "floor": np.floor, "ceil": np.ceil}


class ElementwiseOps:
    """Mixed into NumpyBuilder; each method is `(op, vals, types, rtys, attrs) -> [result]`."""

    def _arith(self, op, vals, types, rtys, attrs):
        a, b = vals
        ty = rtys[0]
        with np.errstate(all="ignore"):
            if ty.scalar.is_int1():  # arithmetic modulo 2
                out = {"add": np.logical_xor, "sub": np.logical_xor, "mul": np.logical_and}[op](a, b)
            else:
                out = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](a, b)
        return [self.wrap(out, ty)]

    def _div(self, op, vals, types, rtys, attrs):
        a, b = vals
        ty = rtys[0]
        sca = ty.scalar
        with np.errstate(all="ignore"):
            if sca.is_floating():
                out = np.fmod(a, b) if op == "rem" else np.divide(a, b)
            elif sca.is_int1():  # dividing by false (0) follows the integer rule: all ones / the dividend
                out = np.where(b, a, True) if op == "div" else np.where(b, False, a)
            elif op == "div":
                out = arith.int_div(a, b, sca)
            elif op == "rem":
                out = arith.int_rem(a, b, sca)
            else:
                raise InterpreterError(f"{op} needs float operands, got {sca}")
        return [self.wrap(out, ty)]

    def _bitwise(self, op, vals, types, rtys, attrs):
        a, b = vals
        out = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](a, b)
        return [self.wrap(out, rtys[0])]

    def _shift(self, op, vals, types, rtys, attrs):
        return [self.wrap(arith.shift(vals[0], vals[1], rtys[0], op == "shl"), rtys[0])]

    def _minmax(self, op, vals, types, rtys, attrs):
        a, b = vals
        ty = rtys[0]
        if ty.scalar.is_floating():
            prop = bool(attrs.get("propagate_nan", False))
            fn = {("min", False): np.fmin, ("max", False): np.fmax,
                  ("min", True): np.minimum, ("max", True): np.maximum}[(op, prop)]
        else:
            fn = np.minimum if op == "min" else np.maximum
        return [self.wrap(fn(a, b), ty)]

    def _op_umulhi(self, op, vals, types, rtys, attrs):
        return [self.wrap(arith.umulhi(vals[0], vals[1], rtys[0]), rtys[0])]

    def _op_cmp(self, op, vals, types, rtys, attrs):
        pred = attrs["pred"]
        if pred not in _CMP:
            raise InterpreterError(f"cmp: unknown predicate {pred!r}")
        return [self.wrap(_CMP[pred](vals[0], vals[1]), rtys[0])]

    def _op_neg(self, op, vals, types, rtys, attrs):
        with np.errstate(all="ignore"):
            out = vals[0] if rtys[0].scalar.is_int1() else np.negative(vals[0])
        return [self.wrap(out, rtys[0])]

    def _op_not(self, op, vals, types, rtys, attrs):
        return [self.wrap(np.invert(vals[0]), rtys[0])]

    def _op_abs(self, op, vals, types, rtys, attrs):
        sca = rtys[0].scalar
        with np.errstate(all="ignore"):
            out = vals[0] if sca.is_int_unsigned() or sca.is_int1() else np.abs(vals[0])
        return [self.wrap(out, rtys[0])]

    def _unary_math(self, op, vals, types, rtys, attrs):
        x = vals[0]
        ty = rtys[0]
        if not ty.scalar.is_floating():
            raise InterpreterError(f"{op} needs a float operand, got {ty.scalar}")
        with np.errstate(all="ignore"):
            if op == "erf":
                out = arith.erf(x)
            elif op == "rsqrt":
                out = np.divide(x.dtype.type(1), np.sqrt(x))
            else:
                out = UNARY_FLOAT[op](x)
        return [self.wrap(out, ty)]

    def _op_fma(self, op, vals, types, rtys, attrs):
        return [self.wrap(arith.fma(*vals, rtys[0]), rtys[0])]  # one rounding from float64

    def _op_select(self, op, vals, types, rtys, attrs):
        return [self.wrap(np.where(vals[0], vals[1], vals[2]), rtys[0])]

    def _op_clamp(self, op, vals, types, rtys, attrs):
        x, lo, hi = vals
        with np.errstate(all="ignore"):
            if bool(attrs.get("propagate_nan", False)):
                out = np.minimum(np.maximum(x, lo), hi)
            else:
                out = np.fmin(np.fmax(x, lo), hi)
        return [self.wrap(out, rtys[0])]

    # -- casts and pointers ------------------------------------------------
    def _op_cast(self, op, vals, types, rtys, attrs):
        src, dst = types[0], rtys[0].scalar
        if src.is_ptr() or dst.is_ptr():
            raise InterpreterError(f"cast between {src} and {dst}: use ptr_to_int/int_to_ptr/bitcast")
        rounding = attrs.get("rounding", "rtne") or "rtne"
        return [self.wrap(arith.cast(vals[0], src, dst, rounding), rtys[0], origin=self._origin_of[0])]

    def _op_bitcast(self, op, vals, types, rtys, attrs):
        src, dst = types[0], rtys[0].scalar
        if src.primitive_bitwidth != dst.primitive_bitwidth:
            raise InterpreterError(f"bitcast from {src} to {dst}: bit widths differ")
        return [self.wrap(floats.from_bits(floats.to_bits(vals[0], src), dst), rtys[0])]

    def _op_ptr_to_int(self, op, vals, types, rtys, attrs):
        return [self.wrap(vals[0], rtys[0])]

    def _op_int_to_ptr(self, op, vals, types, rtys, attrs):
        return [self.wrap(vals[0].astype(np.int64), rtys[0])]

    def _op_addptr(self, op, vals, types, rtys, attrs):
        elem = rtys[0].scalar.element_ty
        with np.errstate(all="ignore"):
            off = vals[1].astype(np.int64) * np.int64(floats.memory_itemsize(elem))
            out = vals[0].astype(np.int64) + off
        return [self.wrap(out, rtys[0])]

    def _hint(self, op, vals, types, rtys, attrs):
        return [self.wrap(vals[0], rtys[0], origin=self._origin_of[0])]


#: ops sharing one implementation, looked up by `create` after the `_op_<name>` methods
ELEMENTWISE = {
    **{k: ElementwiseOps._arith for k in ("add", "sub", "mul")},
    **{k: ElementwiseOps._div for k in ("div", "div_rn", "rem")},
    **{k: ElementwiseOps._bitwise for k in ("and", "or", "xor")},
    **{k: ElementwiseOps._shift for k in ("shl", "shr")},
    **{k: ElementwiseOps._minmax for k in ("min", "max")},
    **{k: ElementwiseOps._unary_math for k in (*UNARY_FLOAT, "rsqrt", "erf")},
    # hints, and a layout conversion (made only by codegen), change no value
    **{k: ElementwiseOps._hint for k in ("multiple_of", "max_contiguous", "max_constancy", "convert_layout")},
}
