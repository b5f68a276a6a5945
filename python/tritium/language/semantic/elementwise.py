"""Float math and other elementwise functions with their own dtype rules
(umulhi, fma, exp/log/sqrt family, abs)."""
from __future__ import annotations

from typing import Any, Sequence

from .. import core
from .emit import _arith, _op
from .promotion import binary_operands, float_ternary_operands
from .scalars import to_tensor


def umulhi(x: Any, y: Any) -> "core.tensor":
    x, y = binary_operands(x, y, "umulhi")
    if x.type.scalar.name not in ("int32", "int64", "uint32", "uint64"):
        raise ValueError(f"umulhi: expected dtype int32, int64, uint32 or uint64, got {x.type.scalar}")
    return _arith("umulhi", x, y)


def fma(x: Any, y: Any, z: Any) -> "core.tensor":
    z, x, y = float_ternary_operands(z, x, y, "fma")
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
