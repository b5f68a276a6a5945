"""The specialization-property declaration API. A backend lists the facts
about launch arguments it can exploit (name, argument kinds, predicate, IR
attribute); the key computation and the frontend only ever see these objects,
so adding a fact is a change to one backend file."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

POINTER, INTEGER, FLOAT = "pointer", "integer", "float"
KINDS = (POINTER, INTEGER, FLOAT)


def tensor_address(t: Any) -> int:
    """The device (or host) address a tensor-like argument passes to a kernel."""
    dp = getattr(t, "data_ptr", None)
    if dp is not None:
        return int(dp())
    cai = getattr(t, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    ai = getattr(t, "__array_interface__", None)
    if ai is not None:
        return int(ai["data"][0])
    raise TypeError(f"cannot find the address of a {type(t).__name__}: it has no data_ptr(), "
                    "__cuda_array_interface__ or __array_interface__")


@dataclass(frozen=True)
class Property:
    """One specialization fact.

    `predicate(value)` gets the argument itself (a tensor-like object for
    pointers, a Python int or float otherwise) and says whether the fact
    holds. `attr` is the IR argument attribute `(key, value)` that carries it
    into the kernel. `alignment` marks divisibility-like facts, which
    `do_not_specialize_on_alignment` switches off (for pointers and integers,
    as in Triton). `fast` names a built-in
    test the key machinery evaluates without calling Python
    (`("mod", n)`: address or value divisible by n; `("eq", n)`: int equal to n);
    when given it must agree with `predicate`."""
    name: str
    kinds: frozenset
    predicate: Callable[[Any], bool]
    attr: tuple
    alignment: bool = False
    fast: tuple | None = None

    def __post_init__(self) -> None:
        bad = set(self.kinds) - set(KINDS)
        if bad or not self.kinds:
            raise ValueError(f"property {self.name!r}: kinds must be a non-empty subset of {KINDS}, got {sorted(self.kinds)}")
        if not (isinstance(self.attr, tuple) and len(self.attr) == 2 and isinstance(self.attr[0], str)):
            raise ValueError(f"property {self.name!r}: attr must be (key, value), got {self.attr!r}")
        if self.fast is not None and (self.fast[0] not in ("mod", "eq") or not isinstance(self.fast[1], int)):
            raise ValueError(f"property {self.name!r}: unknown fast test {self.fast!r}")

    def holds(self, kind: str, value: Any) -> bool:
        if self.fast is not None:
            op, n = self.fast
            v = tensor_address(value) if kind == POINTER else value
            return v % n == 0 if op == "mod" else (kind == INTEGER and v == n)
        return bool(self.predicate(value))


def divisibility(n: int = 16) -> Property:
    def pred(v: Any) -> bool:
        return (v if isinstance(v, int) else tensor_address(v)) % n == 0
    return Property("divisibility", frozenset((POINTER, INTEGER)), pred, ("divisibility", n),
                    alignment=True, fast=("mod", n))


def equal_to_1() -> Property:
    return Property("equal_to_1", frozenset((INTEGER,)), lambda v: v == 1, ("equal_to_1", True), fast=("eq", 1))


@dataclass
class Backend:
    """A target family's specialization rules. `name` identifies it in keys
    (a kernel specialized for one backend is never reused by another)."""
    name: str
    properties: list = field(default_factory=list)

    def __post_init__(self) -> None:
        names = [p.name for p in self.properties]
        if len(set(names)) != len(names):
            raise ValueError(f"backend {self.name!r} declares a property twice: {names}")
        if len(names) > 30:
            raise ValueError(f"backend {self.name!r}: at most 30 properties fit in a key")

    def property(self, name: str) -> Property:
        for p in self.properties:
            if p.name == name:
                return p
        raise KeyError(f"backend {self.name!r} has no specialization property {name!r} "
                       f"(it has: {', '.join(p.name for p in self.properties) or 'none'})")

    def with_properties(self, name: str, extra: Iterable[Property]) -> "Backend":
        """A new backend with this one's properties plus `extra` (tests and
        experiments add facts this way)."""
        return Backend(name, list(self.properties) + list(extra))


def shared_properties() -> list:
    """What every GPU backend can use: 16-divisibility and integers equal to 1."""
    return [divisibility(16), equal_to_1()]
