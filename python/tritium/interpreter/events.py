"""The interpreter's client API: normalized events for what a kernel does to
memory and with its tiles, and the protocol of the clients that receive them
(docs/debugging.md). Every frontend (Triton's `tl`, the NKI frontend) drives
the same builder, so clients see the same events whatever the kernel was
written in, and nothing frontend-specific: addresses, masks, shapes, dtypes,
program ids and source locations.

An event covers one op executed by one or more programs at once (the
interpreter runs programs in batches, interpreter/batches.py): `programs`
has one row (x, y, z) per program, and every per-lane array has that many
rows in front of the op's own shape. `per_program()` splits it. Events of a
batch reach clients only once the batch is done (a batch whose programs
disagree on a branch is undone and run again in smaller groups), before the
next batch starts.
"""
from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Protocol

import numpy as np

from .memory import MemoryMap


@dataclass(frozen=True)
class Location:
    file: str
    line: int
    col: int = 0
    function: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" + (f":{self.col}" if self.col else "")


@dataclass(frozen=True)
class TensorArg:
    """A tensor argument of the launch: where it lives in the interpreter's
    address space and how its elements are laid out."""
    name: str
    address: int              # of element [0, 0, ...]
    shape: tuple
    strides: tuple            # in elements
    dtype: str                # NumPy's name for the storage (bf16/fp8 arrive as their raw bits)
    itemsize: int

    def element_index(self, addresses: np.ndarray) -> np.ndarray:
        """Flat (row-major) index of the element each address starts, -1 for
        addresses that are not the start of one of this tensor's elements."""
        off = np.asarray(addresses, np.int64) - self.address
        if not self.shape:
            return np.where(off == 0, 0, -1)
        out = np.zeros(off.shape, np.int64)
        rest = off.copy()
        ok = np.ones(off.shape, bool)
        # strides sorted largest first decompose an offset uniquely for non-overlapping layouts
        for dim in sorted(range(len(self.shape)), key=lambda d: -abs(self.strides[d] or 1)):
            step = self.strides[dim] * self.itemsize
            idx = rest // step if step else np.zeros_like(rest)
            ok &= (idx >= 0) & (idx < self.shape[dim])
            rest = rest - idx * step
            out += idx * int(np.prod(self.shape[dim + 1:], dtype=np.int64))
        ok &= rest == 0
        return np.where(ok, out, -1)


@dataclass
class Launch:
    """One interpreted launch, given to clients before its first event."""
    kernel: str
    grid: tuple
    memory: MemoryMap
    tensors: tuple = ()       # TensorArg per tensor argument, in parameter order
    frontend: str = "triton"  # "triton" or "nki"; events never depend on it
    file: str = ""            # the kernel's source file
    # how the grid ran, filled in by on_finish: batches run (restarts included),
    # batches run again after their programs diverged, whether programs ran one at a time
    batches: int = 0
    restarts: int = 0
    one_at_a_time: bool = False
    # what compiling this launch would give: the tile IR (None for a kernel
    # no compiler takes, such as an NKI one); clients ask only when they need it
    compile_ir: Callable[[], bytes | None] = field(default=lambda: None, repr=False)

    def tensor_at(self, address: int) -> TensorArg | None:
        for t in self.tensors:
            lo = min(t.address, t.address + sum(min(0, s) * (n - 1) for s, n in zip(t.strides, t.shape)) * t.itemsize)
            hi = t.address + sum(max(0, s) * (n - 1) for s, n in zip(t.strides, t.shape)) * t.itemsize + t.itemsize
            if lo <= address < hi:
                return t
        return None


@dataclass
class Event:
    programs: np.ndarray      # (n, 3) int: the programs this event covers
    loc: Location | None

    @property
    def pid(self) -> tuple:
        """The program, for an event of one program."""
        if len(self.programs) != 1:
            raise ValueError(f"this event covers {len(self.programs)} programs; use per_program()")
        return tuple(int(v) for v in self.programs[0])

    def _rows(self, i: int) -> dict[str, Any]:
        return {"programs": self.programs[i:i + 1]}

    def per_program(self) -> list["Event"]:
        """One event per program (views, not copies)."""
        if len(self.programs) == 1:
            return [self]
        return [replace(self, **self._rows(i)) for i in range(len(self.programs))]


@dataclass
class MemoryEvent(Event):
    """A `load`, `store` or `atomic` (read-modify-write; `atomic_op` says which)."""
    kind: str
    addresses: np.ndarray     # (n, *shape) int64 byte addresses
    mask: np.ndarray          # (n, *shape) bool; False lanes are not accessed
    dtype: Any                # element dtype (tritium.language dtype)
    nbytes: int               # bytes per element
    atomic_op: str = ""       # "add", "max", ..., "xchg", "cas" for atomics
    value_from: Location | None = None   # a store of a value computed by the dot at this location

    @property
    def shape(self) -> tuple:
        return self.addresses.shape[1:]

    def _rows(self, i: int) -> dict[str, Any]:
        return {"programs": self.programs[i:i + 1], "addresses": self.addresses[i:i + 1],
                "mask": self.mask[i:i + 1]}


@dataclass
class DotEvent(Event):
    """`dot(a, b, acc)`: per program a (M, K) by (K, N) product. The operand
    addresses are those of the loads the operands came from (through casts
    and transposes), or None when an operand was computed."""
    a_shape: tuple
    b_shape: tuple
    a_dtype: Any
    b_dtype: Any
    acc_dtype: Any
    input_precision: str
    a_addresses: np.ndarray | None = None   # (n, M, K)
    b_addresses: np.ndarray | None = None   # (n, K, N)
    kind: str = "dot"

    def _rows(self, i: int) -> dict[str, Any]:
        rows: dict[str, Any] = {"programs": self.programs[i:i + 1]}
        for name in ("a_addresses", "b_addresses"):
            arr = getattr(self, name)
            if arr is not None:
                rows[name] = arr[i:i + 1] if len(arr) > 1 else arr
        return rows


@dataclass
class ReduceEvent(Event):
    """`reduce` or `scan` along `axis` of a per-program `shape`."""
    kind: str
    shape: tuple
    axis: int
    dtypes: tuple
    combine: str              # the combine function's name ("_sum_combine", ...)


class Client(Protocol):
    """Receives events. `on_launch(launch)` and `on_finish(launch)`, when a
    client has them, are called before the first event and after the last."""

    def on_event(self, event: Event) -> None: ...


class EventBus:
    """Fans events out to clients. `active` is checked by the builder first, so
    with no clients no event object is ever built. While `holding`, events
    wait for `flush` (the batch finished) or `discard` (it is run again)."""

    def __init__(self, clients: list[Client] | None = None) -> None:
        self.clients: list[Client] = list(clients or [])
        self.holding = False
        self._held: list[Event] = []
        self.launch_info: Launch | None = None

    @property
    def active(self) -> bool:
        return bool(self.clients)

    def add(self, client: Client) -> None:
        self.clients.append(client)

    def emit(self, event: Event) -> None:
        if self.holding:
            self._held.append(event)
            return
        for c in self.clients:
            c.on_event(event)

    def flush(self) -> None:
        held, self._held = self._held, []
        for event in held:
            for c in self.clients:
                c.on_event(event)

    def discard(self) -> None:
        self._held.clear()

    def launch(self, launch: Launch) -> None:
        self.launch_info = launch
        self._call("on_launch", launch)

    def finish(self, launch: Launch) -> None:
        self._call("on_finish", launch)

    def _call(self, hook_name: str, launch: Launch) -> None:
        for c in self.clients:
            hook = getattr(c, hook_name, None)
            if hook is not None:
                hook(launch)


# -- registering clients for every interpreted launch ---------------------------

_registered: list[Client] = []
_scoped = threading.local()


def add_client(client: Client) -> Client:
    """Attach `client` to every interpreted launch from now on (any thread)."""
    _registered.append(client)
    return client


def remove_client(client: Client) -> None:
    _registered.remove(client)


@contextlib.contextmanager
def clients(*attached: Client) -> Iterator[tuple]:
    """`with clients(Tracer(), Sanitizer()) as (tracer, san): kernel[grid](...)`:
    the clients see the launches made inside the block, in this thread."""
    stack = _scoped.__dict__.setdefault("stack", [])
    stack.append(attached)
    try:
        yield attached
    finally:
        stack.pop()


def active_clients() -> list[Client]:
    """Globally registered clients, then those of enclosing `clients()` blocks."""
    out = list(_registered)
    for group in getattr(_scoped, "stack", ()):
        out.extend(group)
    return out


@dataclass
class Tracer:
    """Records every event, one per program, in the order they reach it."""
    events: list = field(default_factory=list)

    def on_event(self, event: Event) -> None:
        self.events.extend(event.per_program())

    def of_kind(self, kind: str) -> list:
        return [e for e in self.events if getattr(e, "kind", None) == kind]
