"""What the frontend knows about kernel-time values: static (constexpr or plain
Python) versus dynamic (language tensors), and conversion of static numbers
into tensors (flattening for control-flow merges is in flattening.py)."""
from __future__ import annotations

from typing import Any

from ..language import core, semantic


same_static = core.same_static  # the interpreter's aggregates decide with the same rule


# the language's own: a constexpr never nests (its constructor unwraps)
unwrap = core._unwrap


def is_tensor(v: Any) -> bool:
    return isinstance(v, core.tensor)


def is_static(v: Any) -> bool:
    return not is_tensor(v) and not (isinstance(v, (tuple, list)) and any(not is_static(x) for x in v))


def is_number(v: Any) -> bool:
    v = unwrap(v)
    return isinstance(v, (bool, int, float))


def to_tensor(v: Any) -> "core.tensor":
    return semantic.to_tensor(v)


def type_name(v: Any) -> str:
    if is_tensor(v):
        return str(v.type.ir if hasattr(v.type, "ir") else v.type)
    v = unwrap(v)
    return f"constexpr {type(v).__name__} ({v!r})"
