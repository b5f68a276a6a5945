"""Compiler hints (multiple_of, max_contiguous, max_constancy) and the debug
ops: barrier, device_print, device_assert."""
from __future__ import annotations

from typing import Any, Sequence

from .. import core
from ..builder import current_builder
from ..dtypes import int1
from .arithmetic import not_, or_
from .casts import cast
from .emit import _op, _op_void, _shape
from .scalars import to_tensor


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
