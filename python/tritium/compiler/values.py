"""What the frontend knows about kernel-time values: static (constexpr or plain
Python) versus dynamic (language tensors), tuple flattening for control-flow
merges, and conversion of static numbers into tensors."""
from __future__ import annotations

from typing import Any

from ..language import core, semantic


same_static = core.same_static  # the interpreter's aggregates decide with the same rule


def unwrap(v: Any) -> Any:
    return v.value if isinstance(v, core.constexpr) else v


def is_tensor(v: Any) -> bool:
    return isinstance(v, core.tensor)


def is_static(v: Any) -> bool:
    return not is_tensor(v) and not (isinstance(v, (tuple, list)) and any(not is_static(x) for x in v))


def is_number(v: Any) -> bool:
    v = unwrap(v)
    return isinstance(v, (bool, int, float))


def to_tensor(v: Any) -> "core.tensor":
    return semantic.to_tensor(v)


def flatten(v: Any) -> tuple[list[Any], Any]:
    """Leaves of nested tuples/lists and a spec to rebuild the structure."""
    if isinstance(v, (tuple, list)) and not isinstance(v, core.constexpr):
        leaves: list[Any] = []
        specs = []
        for x in v:
            ls, s = flatten(x)
            leaves += ls
            specs.append((len(ls), s))
        return leaves, (type(v), specs)
    if getattr(type(v), "__tritium_aggregate__", False):
        from .aggregates import flatten_aggregate  # fields by value, or identity for tracked objects
        return flatten_aggregate(v)
    return [v], None


def unflatten(leaves: list[Any], spec: Any) -> Any:
    if spec is None:
        return leaves[0]
    kind, specs = spec
    out, i = [], 0
    for n, s in specs:
        out.append(unflatten(leaves[i:i + n], s))
        i += n
    if kind is tuple or kind is list:
        return kind(out)
    return kind(*out)  # namedtuple


def type_name(v: Any) -> str:
    if is_tensor(v):
        return str(v.type.ir if hasattr(v.type, "ir") else v.type)
    v = unwrap(v)
    return f"constexpr {type(v).__name__} ({v!r})"
