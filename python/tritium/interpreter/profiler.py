"""The profiler client: per kernel and per source line, what the launches did
(bytes loaded and stored, mask utilization = lanes active / lanes issued,
atomics per element) and what compiling them would give (tritium-codegen's
report: memory accesses axis info does not let the code generator vectorize,
and why; loops with a constant trip count small enough to unroll). Printed as
a table, worst lines first by the chosen column.

The counts come from normalized events, so they hold for every frontend;
the compiler's side needs a kernel the compiler takes (`Launch.compile_ir`).
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import _core
from .events import Event, Launch, MemoryEvent

#: a loop running at most this many times with a constant trip count is worth unrolling
UNROLL_LIMIT = 8
FULL_ACCESS_BYTES = 16


@dataclass
class LineStats:
    kernel: str
    file: str
    line: int
    ops: int = 0                  # memory ops executed (one per program)
    loaded: int = 0               # bytes
    stored: int = 0
    active: int = 0               # lanes that accessed memory
    issued: int = 0               # lanes of those ops, masked-off ones included
    atomic_lanes: int = 0
    _atomic_addresses: list = field(default_factory=list, repr=False)
    vector: str = ""              # the compiler's verdict on this line's accesses
    notes: list = field(default_factory=list)

    @property
    def mask_utilization(self) -> float | None:
        return self.active / self.issued if self.issued else None

    @property
    def atomics_per_element(self) -> float | None:
        if not self.atomic_lanes:
            return None
        distinct = np.unique(np.concatenate(self._atomic_addresses)).size
        self._atomic_addresses = [np.unique(np.concatenate(self._atomic_addresses))]
        return self.atomic_lanes / distinct

    @property
    def source(self) -> str:
        return linecache.getline(self.file, self.line).strip()


_SORTS = {
    "bytes": lambda r: -(r.loaded + r.stored),
    "mask": lambda r: (r.mask_utilization if r.mask_utilization is not None else 2.0),
    "atomics": lambda r: -(r.atomics_per_element or 0.0),
    "vector": lambda r: (0 if "vectorized" in r.vector or "limited" in r.vector else 1, -(r.loaded + r.stored)),
    "line": lambda r: (r.file, r.line),
}


class Profiler:
    """Accumulates over every launch it sees; `table(sort=...)` prints it."""

    def __init__(self) -> None:
        self.lines: dict[tuple, LineStats] = {}
        self.launches: dict[str, int] = {}
        self.compiler_notes: dict[str, str] = {}
        self._kernel = ""

    # -- client protocol --------------------------------------------------------
    def on_launch(self, launch: Launch) -> None:
        self._kernel = launch.kernel
        self.launches[launch.kernel] = self.launches.get(launch.kernel, 0) + 1

    def on_event(self, event: Event) -> None:
        if not isinstance(event, MemoryEvent) or event.loc is None:
            return
        row = self._row(event.loc.file, event.loc.line)
        n = len(event.programs)
        active = int(np.count_nonzero(event.mask))
        row.ops += n
        row.active += active
        row.issued += event.mask.size
        moved = active * event.nbytes
        if event.kind == "load":
            row.loaded += moved
        elif event.kind == "store":
            row.stored += moved
        else:
            row.loaded += moved
            row.stored += moved
            row.atomic_lanes += active
            row._atomic_addresses.append(np.unique(event.addresses[event.mask]))

    def on_finish(self, launch: Launch) -> None:
        if self.launches[launch.kernel] > 1:
            return   # the compiler's verdict is per kernel; the first launch gave it
        try:
            ir = launch.compile_ir()
        except Exception as e:  # noqa: BLE001 - a kernel the interpreter ran may still not compile
            self.compiler_notes[launch.kernel] = f"no compiler report: {str(e).splitlines()[0]}"
            return
        if ir is None:
            self.compiler_notes[launch.kernel] = "no compiler report (this kernel is not compiled by tritium)"
            return
        report = _core.access_report(ir)
        for a in report["accesses"]:
            row = self._row(a["file"], a["line"])
            row.vector = _verdict(a, row.vector)
        for loop in report["loops"]:
            trips = loop["trip_count"]
            if trips is not None and 1 < trips <= UNROLL_LIMIT:
                self._row(loop["file"], loop["line"]).notes.append(
                    f"loop runs {trips} times, a constant: tl.static_range({trips}) unrolls it")

    def _row(self, file: str, line: int) -> LineStats:
        key = (self._kernel, file, line)
        row = self.lines.get(key)
        if row is None:
            row = self.lines[key] = LineStats(self._kernel, file, line)
        return row

    # -- output -------------------------------------------------------------------
    def rows(self, sort: str = "bytes", kernel: str | None = None) -> list[LineStats]:
        if sort not in _SORTS:
            raise ValueError(f"sort must be one of {', '.join(_SORTS)}, got {sort!r}")
        rows = [r for r in self.lines.values() if kernel is None or r.kernel == kernel]
        return sorted(rows, key=_SORTS[sort])

    def table(self, sort: str = "bytes", limit: int | None = None) -> str:
        """One section per kernel: a line per source line that touched memory or
        has a note, worst first by `sort` ("bytes", "mask", "atomics", "vector", "line")."""
        out = []
        for kernel in self.launches:
            rows = self.rows(sort, kernel)[:limit]
            total_l = sum(r.loaded for r in self.lines.values() if r.kernel == kernel)
            total_s = sum(r.stored for r in self.lines.values() if r.kernel == kernel)
            out.append(f"{kernel}: {self.launches[kernel]} launch(es), loaded {_bytes(total_l)}, "
                       f"stored {_bytes(total_s)}; sorted by {sort}")
            if kernel in self.compiler_notes:
                out.append(f"  ({self.compiler_notes[kernel]})")
            header = ("line", "loaded", "stored", "mask use", "atomics/elem", "vector access", "source / notes")
            body = [(f"{Path(r.file).name}:{r.line}", _bytes(r.loaded), _bytes(r.stored), _pct(r.mask_utilization),
                     _num(r.atomics_per_element), r.vector, "; ".join([r.source, *r.notes])) for r in rows]
            widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(header)]
            fmt = "  ".join(f"{{:{'<' if i in (0, 5, 6) else '>'}{w}}}" for i, w in enumerate(widths))
            out.append(fmt.format(*header).rstrip())
            out.extend(fmt.format(*b).rstrip() for b in body)
            out.append("")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()


def _verdict(access: dict, previous: str) -> str:
    width, eb = access["width"], access["elem_bytes"]
    if access["limit"] == "max access size":
        text = f"{width * eb} B, full"
    elif access["limit"] in ("scalar", "atomic"):
        text = f"{eb} B, {access['limit']}"
    else:
        why = {"contiguity": f"pointer contiguity {access['contiguity']}",
               "alignment": f"pointer divisible by {access['divisibility']} B only",
               "mask": f"mask constant over {access['mask_constancy']} element(s)"}[access["limit"]]
        text = f"{width * eb} B, not vectorized: {why}" if width == 1 else f"{width * eb} B, limited by {why}"
    text = f"{access['op']} {text}"
    return text if not previous else f"{previous}; {text}"


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _pct(v: float | None) -> str:
    return "" if v is None else f"{100 * v:.1f}%"


def _num(v: float | None) -> str:
    return "" if v is None else f"{v:.1f}"
