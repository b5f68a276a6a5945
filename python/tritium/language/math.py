"""`tl.math`: elementwise math functions with Triton's dtype contracts.

Transcendentals accept fp32/fp64 only (libdevice's contract, as Triton): fp16,
bf16 and integer tensors are rejected rather than silently upcast. The same
functions are re-exported at the top level (`tl.exp`, ...).
"""
from __future__ import annotations

from typing import Any

from . import semantic
from .core import PropagateNan, _unwrap, builtin, constexpr, tensor


def _unary(op: str, doc: str):
    def fn(x: Any) -> tensor:
        return semantic.unary_math(op, _unwrap(x))
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"Element-wise {doc} of `x` (fp32 or fp64)."
    return builtin(fn)


exp = _unary("exp", "exponential")
exp2 = _unary("exp2", "base-2 exponential")
log = _unary("log", "natural logarithm")
log2 = _unary("log2", "base-2 logarithm")
sqrt = _unary("sqrt", "fast square root")
sqrt_rn = _unary("sqrt_rn", "correctly rounded square root")
rsqrt = _unary("rsqrt", "reciprocal square root")
sin = _unary("sin", "sine")
cos = _unary("cos", "cosine")
floor = _unary("floor", "floor")
ceil = _unary("ceil", "ceiling")
erf = _unary("erf", "error function")


@builtin
def abs(x: Any) -> tensor:
    """Element-wise absolute value (identity on unsigned integers)."""
    return semantic.abs_(_unwrap(x))


@builtin
def fma(x: Any, y: Any, z: Any) -> tensor:
    """Fused `x * y + z` on floats."""
    return semantic.fma(_unwrap(x), _unwrap(y), _unwrap(z))


@builtin
def fdiv(x: Any, y: Any, ieee_rounding: Any = False) -> tensor:
    """Division of floats; fast unless `ieee_rounding`."""
    return semantic.fdiv(_unwrap(x), _unwrap(y), bool(_unwrap(ieee_rounding)))


@builtin
def div_rn(x: Any, y: Any) -> tensor:
    """Correctly rounded float division."""
    return semantic.div_rn(_unwrap(x), _unwrap(y))


@builtin
def umulhi(x: Any, y: Any) -> tensor:
    """High half of the full product of two 32- or 64-bit integers."""
    return semantic.umulhi(_unwrap(x), _unwrap(y))


@builtin
def max(x: Any, y: Any, propagate_nan: Any = PropagateNan.NONE) -> tensor:
    return semantic.maximum(_unwrap(x), _unwrap(y), _unwrap(propagate_nan))


@builtin
def min(x: Any, y: Any, propagate_nan: Any = PropagateNan.NONE) -> tensor:
    return semantic.minimum(_unwrap(x), _unwrap(y), _unwrap(propagate_nan))


@builtin
def cdiv(x: Any, div: Any) -> Any:
    """Ceiling division; constexpr in, constexpr out."""
    a, b = _unwrap(x), _unwrap(div)
    if not isinstance(a, tensor) and not isinstance(b, tensor):
        return constexpr((a + b - 1) // b)
    return semantic.floordiv(semantic.sub(semantic.add(a, b), 1), b)
