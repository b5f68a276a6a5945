"""The sanitizer client: out-of-bounds accesses (active lanes outside every
argument buffer) and, with `races=True`, data races between programs
(races.py). Reports name the program, the kernel line and the address."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .events import Event, Launch, Location, MemoryEvent
from .races import RaceDetector

_RACE_ROLE = {"load": "read", "store": "write", "atomic": "atomic"}


@dataclass
class OutOfBoundsReport:
    kind: str
    pid: tuple
    loc: Location | None
    lanes: np.ndarray          # flat indices of the offending lanes (within the program's access)
    addresses: np.ndarray      # their addresses
    detail: str

    def __str__(self) -> str:
        where = f" at {self.loc}" if self.loc else ""
        return (f"out-of-bounds {self.kind}{where} in program {self.pid}: {len(self.lanes)} lane(s), "
                f"first address {int(self.addresses[0]):#x}; {self.detail}")


@dataclass
class Sanitizer:
    """Collects one report per out-of-bounds access per program (active
    lanes only) and, with `races=True`, data races between programs in
    `race_reports` (conflicting accesses to one element from two programs,
    at least one a plain write, or a plain access meeting an atomic one).

    Run with `run_grid(..., oob="skip")` to keep going after a bad access (the
    offending lanes are then treated as masked off) and see every report."""
    reports: list = field(default_factory=list)
    races: bool = False
    race_reports: list = field(default_factory=list)
    _launch: Launch | None = field(default=None, repr=False)
    _detector: RaceDetector | None = field(default=None, repr=False)

    def on_launch(self, launch: Launch) -> None:
        self._launch = launch
        if self.races:
            self._detector = RaceDetector(launch.grid, launch.memory, self.race_reports)

    def on_event(self, event: Event) -> None:
        if not isinstance(event, MemoryEvent) or self._launch is None:
            return
        if self._detector is not None:
            self._detector.access(_RACE_ROLE[event.kind], event.programs, event.addresses, event.mask,
                                  event.nbytes, event.loc)
        memory = self._launch.memory
        n = len(event.programs)
        bad = (event.mask & (memory.find(event.addresses, event.nbytes) < 0)).reshape(n, -1)
        for p in np.flatnonzero(bad.any(1)):
            lanes = np.flatnonzero(bad[p])
            addrs = event.addresses.reshape(n, -1)[p, lanes]
            self.reports.append(OutOfBoundsReport(event.kind, tuple(int(v) for v in event.programs[p]), event.loc,
                                                  lanes, addrs, memory.describe(int(addrs[0]))))
