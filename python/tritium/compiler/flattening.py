"""Values as leaves and structure, for control-flow merges, loop carries and
call results: nested tuples and lists are flattened to their leaves plus a
spec that rebuilds them; an aggregate object is flattened by value (its
dynamic fields are leaves, its constexpr fields part of the spec), except a
*tracked* one (aggregates.py: an object older than the running dynamic `if`
or loop), which keeps its identity and has no leaves."""
from __future__ import annotations

from typing import Any

from ..language import core
from ..language.aggregate import field_values, is_aggregate, new_instance, serial_of
from .context import active_generator
from .values import same_static


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
    if is_aggregate(v):
        return flatten_aggregate(v)   # fields by value, or identity for tracked objects
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


class _Ref:
    """Spec of a tracked object: no leaves, rebuilt as the object itself."""

    def __init__(self, obj: Any):
        self.obj = obj

    def __call__(self) -> Any:
        return self.obj

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _Ref) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __repr__(self) -> str:
        return f"{type(self.obj).__name__} object #{serial_of(self.obj)}"


class _Rebuild:
    """Spec of an object flattened by value: its dynamic fields are leaves,
    its constexpr fields are part of the structure (so they must agree)."""

    def __init__(self, cls: type, dynamic: tuple, statics: tuple):
        self.cls, self.dynamic, self.statics = cls, dynamic, statics

    def __call__(self, *values: Any) -> Any:
        got = dict(self.statics)
        got.update(zip(self.dynamic, values))
        return new_instance(self.cls, {k: got[k] for k in self.cls.__tritium_fields__ if k in got})

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, _Rebuild) and other.cls is self.cls and other.dynamic == self.dynamic
                and len(other.statics) == len(self.statics)
                and all(a[0] == b[0] and same_static(a[1], b[1]) for a, b in zip(self.statics, other.statics)))

    def __hash__(self) -> int:
        return hash((self.cls, self.dynamic))

    def __repr__(self) -> str:
        return f"{self.cls.__name__}(...)"


def flatten_aggregate(v: Any) -> tuple[list[Any], Any]:
    if id(v) in _current_tracked():
        return [], (_Ref(v), [])
    leaves, specs, dynamic, statics = [], [], [], []
    for k, x in field_values(v).items():
        if isinstance(x, core.constexpr) or x is None:
            statics.append((k, x))
            continue
        ls, s = flatten(x)
        leaves += ls
        specs.append((len(ls), s))
        dynamic.append(k)
    return leaves, (_Rebuild(type(v), tuple(dynamic), tuple(statics)), specs)


def _current_tracked() -> dict:
    gen = active_generator()
    stack = getattr(gen, "_agg_stack", None)
    return stack[-1].tracked if stack else {}


def contains_aggregate(v: Any) -> bool:
    if is_aggregate(v):
        return True
    if isinstance(v, (tuple, list)):
        return any(contains_aggregate(x) for x in v)
    return False


def reachable(values: Any, out: dict | None = None) -> dict[int, Any]:
    """Aggregate objects reachable from `values` (through tuples and fields)."""
    out = {} if out is None else out
    stack = list(values)
    while stack:
        v = stack.pop()
        if is_aggregate(v):
            if id(v) not in out:
                out[id(v)] = v
                stack.extend(field_values(v).values())
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
    return out


def has_tracked_ref(spec: Any) -> bool:
    if spec is None:
        return False
    kind, specs = spec
    return isinstance(kind, _Ref) or any(has_tracked_ref(s) for _, s in specs)
