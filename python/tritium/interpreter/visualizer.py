"""The visualizer client: which elements of each tensor argument each program
read and wrote (masked-off lanes kept apart), and, for each `dot`, the tiles
of A, B and C each program touched. Written as a PNG (matplotlib) or as one
self-contained HTML page with a program slider (visualizer_html.py).

It works from normalized events only (events.py), so kernels of every
frontend show the same way. A tensor of rank 1 is drawn as rows of at most
`width` elements; rank 2 as itself; higher ranks with their leading
dimensions folded into rows.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .events import DotEvent, Event, Launch, Location, MemoryEvent, TensorArg
from .visualizer_html import write_html
from .visualizer_png import COLORS, draw_png, heatmap_png  # noqa: F401 (COLORS: the view's colors)

KINDS = ("read", "write", "masked")


@dataclass
class TensorAccess:
    """Per program, the flat indices of the elements it read, wrote and
    covered with masked-off lanes (sorted, unique)."""
    arg: TensorArg
    rows: int
    cols: int
    per_program: dict = field(default_factory=dict)   # program row -> {kind: [index arrays]}

    def add(self, program: int, kind: str, indices: np.ndarray) -> None:
        if indices.size:
            self.per_program.setdefault(program, {}).setdefault(kind, []).append(indices)

    def elements(self, program: int, kind: str) -> np.ndarray:
        parts = self.per_program.get(program, {}).get(kind)
        if not parts:
            return np.zeros(0, np.int64)
        merged = np.unique(np.concatenate(parts))
        self.per_program[program][kind] = [merged]
        return merged

    def drawable(self, addresses: np.ndarray) -> np.ndarray:
        """The cell each address falls on: its element, or for a rank-1 tensor
        the padding cells after its last element (where the masked-off lanes
        of a last, partial block point), -1 elsewhere."""
        idx = self.arg.element_index(addresses)
        if len(self.arg.shape) == 1 and self.arg.strides[0] > 0:
            step = self.arg.strides[0] * self.arg.itemsize
            off = np.asarray(addresses, np.int64) - self.arg.address
            past = (off % step == 0) & (off // step >= self.arg.shape[0]) & (off // step < self.rows * self.cols)
            idx = np.where(past, off // step, idx)
        return idx

    def heat(self, kind: str) -> np.ndarray:
        """(rows, cols): how many programs touched each element this way."""
        counts = np.zeros(self.rows * self.cols, np.int64)
        for p in self.per_program:
            np.add.at(counts, self.elements(p, kind), 1)
        return counts.reshape(self.rows, self.cols)


@dataclass
class DotAccess:
    """One `dot` (by source location): the elements of A, B and C (the
    stores of its result) each program touched."""
    loc: Location
    operands: dict = field(default_factory=dict)      # "a"/"b"/"c" -> tensor name
    per_program: dict = field(default_factory=dict)   # program row -> {"a"/"b"/"c": [index arrays]}

    def add(self, program: int, which: str, tensor: str, indices: np.ndarray) -> None:
        if indices.size:
            self.operands.setdefault(which, tensor)
            self.per_program.setdefault(program, {}).setdefault(which, []).append(indices)

    def elements(self, program: int, which: str) -> np.ndarray:
        parts = self.per_program.get(program, {}).get(which)
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)


def _layout(arg: TensorArg, width: int) -> tuple[int, int]:
    if len(arg.shape) == 0:
        return 1, 1
    if len(arg.shape) == 1:
        n = arg.shape[0]
        cols = max(1, min(n, width))
        return -(-n // cols), cols
    cols = arg.shape[-1]
    return int(np.prod(arg.shape[:-1])), cols


class Visualizer:
    """Collects the accesses of the launches it sees; `save_png` and
    `save_html` draw the last one (or `launch=i`)."""

    def __init__(self, width: int = 64) -> None:
        self.width = width
        self.launches: list[LaunchAccess] = []

    def on_launch(self, launch: Launch) -> None:
        self.launches.append(LaunchAccess(launch, {t.name: TensorAccess(t, *_layout(t, self.width))
                                                   for t in launch.tensors}))

    def on_event(self, event: Event) -> None:
        if self.launches:
            self.launches[-1].add(event)

    def launch(self, index: int = -1) -> "LaunchAccess":
        if not self.launches:
            raise ValueError("the visualizer has seen no launch (attach it with run_grid(clients=...) "
                             "or tritium.interpreter.clients(...))")
        return self.launches[index]

    def heatmap(self, tensor: str, kind: str = "read", launch: int = -1) -> np.ndarray:
        """(rows, cols) counts: how many programs read / wrote / masked each element."""
        return self.launch(launch).tensors[tensor].heat(kind)

    def save_png(self, path: str | Path, launch: int = -1) -> Path:
        return draw_png(self.launch(launch), Path(path))

    def save_heatmap_png(self, path: str | Path, tensor: str, kind: str = "read", scale: int = 8,
                         launch: int = -1) -> Path:
        """One heat map as a plain raster: `scale` x `scale` pixels per element,
        the colormap's color for its count (0 = untouched), nothing else."""
        return heatmap_png(self.heatmap(tensor, kind, launch), Path(path), scale)

    def save_html(self, path: str | Path, launch: int = -1) -> Path:
        return write_html(self.launch(launch), Path(path))


@dataclass
class LaunchAccess:
    launch: Launch
    tensors: dict                                    # name -> TensorAccess
    programs: list = field(default_factory=list)     # (x, y, z) per program row, in first-seen order
    dots: dict = field(default_factory=dict)         # Location -> DotAccess
    _rows: dict = field(default_factory=dict)

    def program_row(self, pid: tuple) -> int:
        row = self._rows.get(pid)
        if row is None:
            row = self._rows[pid] = len(self.programs)
            self.programs.append(pid)
        return row

    def _indices(self, addresses: np.ndarray) -> list[tuple[TensorAccess, np.ndarray]]:
        """(tensor, element index per address, -1 where not in it) for each tensor the addresses reach."""
        out = []
        lo, hi = int(addresses.min()), int(addresses.max())
        for t in self.tensors.values():
            span = t.arg.itemsize * (1 + sum((n - 1) * abs(s) for n, s in zip(t.arg.shape, t.arg.strides)))
            if hi >= t.arg.address - span and lo < t.arg.address + span:
                idx = t.arg.element_index(addresses)
                if (idx >= 0).any():
                    out.append((t, idx))
        return out

    def add(self, event: Event) -> None:
        rows = [self.program_row(tuple(int(v) for v in p)) for p in event.programs]
        if isinstance(event, MemoryEvent):
            self._memory(event, rows)
        elif isinstance(event, DotEvent):
            self._dot(event, rows)

    def _memory(self, event: MemoryEvent, rows: list[int]) -> None:
        n = len(rows)
        addresses = event.addresses.reshape(n, -1)
        mask = event.mask.reshape(n, -1)
        kind = "read" if event.kind == "load" else "write"
        reached = self._indices(addresses)
        # masked-off lanes belong to the tensor the access aims at (the one its
        # active lanes reach most), wherever their addresses happen to point
        aim = max(reached, key=lambda r: int(((r[1] >= 0) & mask).sum()), default=None)
        for t, idx in reached:
            drawn = t.drawable(addresses) if t is aim[0] else None
            for i, row in enumerate(rows):
                inside = idx[i] >= 0
                t.add(row, kind, idx[i][inside & mask[i]])
                if drawn is not None:
                    t.add(row, "masked", drawn[i][(drawn[i] >= 0) & ~mask[i]])
                if event.value_from is not None and event.kind == "store":
                    dot = self.dots.setdefault(event.value_from, DotAccess(event.value_from))
                    dot.add(row, "c", t.arg.name, idx[i][inside & mask[i]])
        if event.kind == "atomic":   # an atomic reads too
            for t, idx in self._indices(addresses):
                for i, row in enumerate(rows):
                    t.add(row, "read", idx[i][(idx[i] >= 0) & mask[i]])

    def _dot(self, event: DotEvent, rows: list[int]) -> None:
        dot = self.dots.setdefault(event.loc, DotAccess(event.loc))
        for which, addrs in (("a", event.a_addresses), ("b", event.b_addresses)):
            if addrs is None:
                continue
            addrs = np.broadcast_to(addrs, (len(rows), *addrs.shape[1:])).reshape(len(rows), -1)
            for t, idx in self._indices(addrs):
                for i, row in enumerate(rows):
                    dot.add(row, which, t.arg.name, idx[i][idx[i] >= 0])
