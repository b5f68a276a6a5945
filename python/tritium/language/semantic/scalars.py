"""Python scalars inside kernels: the dtype a literal takes, range checks, and
`const` ops. Everything else converts its operands through `to_tensor` here."""
from __future__ import annotations

import numbers
from typing import Any

from .. import core
from ..dtypes import dtype, float32, float64, int1, int32, int64, uint32, uint64
from .emit import _op


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
