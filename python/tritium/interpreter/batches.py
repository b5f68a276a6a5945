"""Running a grid in batches: many programs execute the kernel's Python once,
every value carrying a leading program axis (1 when all programs share it,
P otherwise), so one NumPy call does the work of P programs.

Python control flow needs one value: when a batch's programs disagree on a
condition, a loop bound or an `int()` of a tensor, the builder raises
`Diverged` with each program's value; the batch is undone (its stores are
logged, its events held back) and run again as groups of programs that
agree, each group a batch of its own. Ops whose order between programs is
observable (atomics, device_print, Python `print`) raise `NeedsOrder`: the
launch then runs one program at a time from that batch on, in program order.
A kernel that names a debugger runs one program at a time from the start.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Callable

import numpy as np

#: elements per op a batch aims for: big enough that per-op Python overhead
#: vanishes, small enough to stay in cache
TARGET_ELEMENTS = 1 << 20
FIRST_BATCH = 16


class Diverged(BaseException):
    """The programs of a batch took different paths; `keys` has one value per
    program (programs with equal keys agree). A BaseException, so no library
    code's `except Exception` hides it from the scheduler."""

    def __init__(self, keys: np.ndarray) -> None:
        super().__init__("programs of a batch diverged")
        self.keys = keys


class NeedsOrder(BaseException):
    """An op whose effect depends on the order of programs ran in a batch."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} needs programs in order")
        self.what = what


def split_by_key(group: np.ndarray, keys: np.ndarray) -> list[np.ndarray]:
    """The programs of `group` in groups of equal key, each in the group's
    order, groups ordered by their first program."""
    keys = np.asarray(keys)
    if keys.dtype.kind == "f":
        keys = keys.view(f"u{keys.dtype.itemsize}")
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    return [group[inverse == k] for k in np.argsort(first)]


class Schedule:
    """Feeds `run_batch(pids)` the launch's programs, `order` ((N, 3), the
    interpreter's order), in batches, splitting on divergence."""

    def __init__(self, order: np.ndarray, one_at_a_time: bool) -> None:
        self.queue: deque[np.ndarray] = deque([order]) if len(order) else deque()
        self.one_at_a_time = one_at_a_time
        self.size = 1 if one_at_a_time else FIRST_BATCH
        self.batches = 0       # batches run, restarts included
        self.restarts = 0      # batches undone because their programs diverged
        self.committed = 0     # batches that ran to the end

    def run(self, run_batch: Callable[[np.ndarray], Any], undo: Callable[[], None],
            per_program_elements: Callable[[], int]) -> None:
        queue = self.queue
        while queue:
            group = queue.popleft()
            if len(group) > self.size:
                queue.appendleft(group[self.size:])
                group = group[:self.size]
            self.batches += 1
            try:
                run_batch(group)
            except Diverged as d:
                undo()
                self.restarts += 1
                # programs that keep parting ways one by one (a loop whose exit
                # differs per program) would rerun their prefix again and again
                if self.restarts > 16 + self.committed // 4:
                    self.one_at_a_time, self.size = True, 1
                parts = split_by_key(group, d.keys) if not self.one_at_a_time else [group]
                queue.extendleft(reversed(parts))
                continue
            except NeedsOrder:
                undo()
                self.one_at_a_time, self.size = True, 1
                queue.appendleft(group)
                continue
            self.committed += 1
            if not self.one_at_a_time:
                widest = max(1, per_program_elements())
                self.size = max(1, TARGET_ELEMENTS // widest)
