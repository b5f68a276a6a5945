"""Normalized events the interpreter emits for memory traffic and dots, and the
clients that consume them: `Tracer` (records everything) and `Sanitizer`
(reports out-of-bounds lanes with their kernel locations and, on request,
data races between programs).

Events are emitted *before* the access happens, so a client sees an access even
when the interpreter then stops on it. Masked-off lanes are carried in `mask`
and are never an error.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .memory import MemoryMap
from .races import RaceDetector


@dataclass(frozen=True)
class Location:
    file: str
    line: int
    col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" + (f":{self.col}" if self.col else "")


@dataclass
class MemoryEvent:
    """A `load`, `store`, `atomic_rmw` or `atomic_cas`."""
    kind: str
    pid: tuple
    loc: Location | None
    addresses: np.ndarray      # int64 byte addresses, the op's shape
    mask: np.ndarray           # bool, the op's shape; False lanes are not accessed
    dtype: Any                 # element dtype (tritium.language dtype)
    nbytes: int                # bytes per element
    atomic_kind: str = ""      # `add`, `max`, ... for atomic_rmw; `cas` for atomic_cas

    @property
    def shape(self) -> tuple:
        return self.addresses.shape


@dataclass
class DotEvent:
    pid: tuple
    loc: Location | None
    a_shape: tuple
    b_shape: tuple
    a_dtype: Any
    b_dtype: Any
    acc_dtype: Any
    input_precision: str


@dataclass(frozen=True)
class Launch:
    """One interpreted launch, given to clients before its first event."""
    kernel: str
    grid: tuple
    memory: MemoryMap


class Client(Protocol):
    """Receives events; `on_launch(launch)` and `on_finish(launch)`, when a
    client has them, are called before the first and after the last."""
    def on_event(self, event: MemoryEvent | DotEvent, memory: MemoryMap) -> None: ...


class EventBus:
    """Fans events out to clients. `active` is checked by the builder first, so
    with no clients no event object is ever built."""

    def __init__(self, clients: list[Client] | None = None) -> None:
        self.clients: list[Client] = list(clients or [])

    @property
    def active(self) -> bool:
        return bool(self.clients)

    def add(self, client: Client) -> None:
        self.clients.append(client)

    def emit(self, event: MemoryEvent | DotEvent, memory: MemoryMap) -> None:
        for c in self.clients:
            c.on_event(event, memory)

    def launch(self, launch: Launch) -> None:
        for c in self.clients:
            hook = getattr(c, "on_launch", None)
            if hook is not None:
                hook(launch)

    def finish(self, launch: Launch) -> None:
        for c in self.clients:
            hook = getattr(c, "on_finish", None)
            if hook is not None:
                hook(launch)


@dataclass
class Tracer:
    """Records every event in order; filter with `of_kind`."""
    events: list = field(default_factory=list)

    def on_event(self, event: MemoryEvent | DotEvent, memory: MemoryMap) -> None:
        self.events.append(event)

    def of_kind(self, kind: str) -> list:
        if kind == "dot":
            return [e for e in self.events if isinstance(e, DotEvent)]
        return [e for e in self.events if isinstance(e, MemoryEvent) and e.kind == kind]


@dataclass
class OutOfBoundsReport:
    kind: str
    pid: tuple
    loc: Location | None
    lanes: np.ndarray          # flat indices of the offending lanes
    addresses: np.ndarray      # their addresses
    detail: str

    def __str__(self) -> str:
        where = f" at {self.loc}" if self.loc else ""
        return (f"out-of-bounds {self.kind}{where} in program {self.pid}: {len(self.lanes)} lane(s), "
                f"first address {int(self.addresses[0]):#x}; {self.detail}")


_RACE_ROLE = {"load": "read", "store": "write", "atomic_rmw": "atomic", "atomic_cas": "atomic"}


@dataclass
class Sanitizer:
    """Collects one report per out-of-bounds access (active lanes only) and,
    with `races=True`, data races between programs in `race_reports`
    (races.py: conflicting accesses to one element from two programs, at
    least one a plain write, or a plain access meeting an atomic one).

    Run with `run_grid(..., oob="skip")` to keep going after a bad access (the
    offending lanes are then treated as masked off) and see every report."""
    reports: list = field(default_factory=list)
    races: bool = False
    race_reports: list = field(default_factory=list)
    _detector: RaceDetector | None = field(default=None, repr=False)

    def on_launch(self, launch: Launch) -> None:
        if self.races:
            self._detector = RaceDetector(launch.grid, launch.memory, self.race_reports)

    def on_event(self, event: MemoryEvent | DotEvent, memory: MemoryMap) -> None:
        if not isinstance(event, MemoryEvent):
            return
        if self._detector is not None:
            self._detector.access(_RACE_ROLE[event.kind], np.asarray([event.pid]), event.addresses[None],
                                  event.mask[None], event.nbytes, event.loc)
        found = memory.find(event.addresses, event.nbytes)
        bad = (event.mask & (found < 0)).reshape(-1)
        if not bad.any():
            return
        lanes = np.flatnonzero(bad)
        addrs = event.addresses.reshape(-1)[lanes]
        self.reports.append(OutOfBoundsReport(event.kind, event.pid, event.loc, lanes, addrs,
                                              memory.describe(int(addrs[0]))))
