"""Data-race detection for interpreted launches: conflicting accesses to one
address from different programs, where at least one is a plain (non-atomic)
write, or a plain access meets an atomic one.

Programs of a launch are unordered on a GPU, so any two accesses from
different programs to the same element conflict unless both are reads or
both are atomics. Synchronisation built from atomics (a lock, a flag another
program spins on) is not modelled: a plain access such a protocol orders is
still reported. Shadow state is kept per element of each argument buffer
(its NumPy itemsize), so two programs writing neighbouring fp16 elements do
not conflict; accesses of another width cover every element they overlap.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .memory import MemoryMap

_NONE = -1


@dataclass(frozen=True)
class Access:
    pid: tuple
    loc: object          # events.Location or None
    what: str            # "read", "write" or "atomic"

    def __str__(self) -> str:
        where = f" at {self.loc}" if self.loc is not None else ""
        return f"program {self.pid}{where} ({self.what})"


@dataclass
class RaceReport:
    """Conflicts between two source locations; `first` came earlier in the
    interpreter's order, `second` conflicts with it."""
    kind: str            # "write/write", "read/write", "write/read", "atomic/write", ...
    address: int         # the first conflicting address found
    where: str           # that element, as `buffer[index]`
    first: Access
    second: Access
    count: int = 1       # conflicting (element, program) accesses between these two locations

    def __str__(self) -> str:
        return (f"data race ({self.kind}) on {self.where} (address {self.address:#x}): {self.first} and "
                f"{self.second}, not ordered by any atomic; {self.count} conflicting access(es) between "
                f"these two locations")


class _Shadow:
    """Per element of one buffer: the last writer, up to two distinct readers
    and two distinct atomic users (two are enough: any third program differs
    from at least one of them), each with the location index of its access."""

    def __init__(self, words: int) -> None:
        self.writer = np.full((1, words), _NONE, np.int64)
        self.readers = np.full((2, words), _NONE, np.int64)
        self.atomics = np.full((2, words), _NONE, np.int64)
        self.writer_loc = np.full((1, words), _NONE, np.int32)
        self.reader_loc = np.full((2, words), _NONE, np.int32)
        self.atomic_loc = np.full((2, words), _NONE, np.int32)

    def slots(self, what: str) -> tuple[np.ndarray, np.ndarray]:
        return {"write": (self.writer, self.writer_loc), "read": (self.readers, self.reader_loc),
                "atomic": (self.atomics, self.atomic_loc)}[what]


# which earlier accesses a new one conflicts with
_CONFLICTS = {"write": ("write", "read", "atomic"), "read": ("write", "atomic"), "atomic": ("write", "read")}


@dataclass
class RaceDetector:
    grid: tuple
    memory: MemoryMap
    reports: list = field(default_factory=list)
    _shadows: dict = field(default_factory=dict)
    _locs: list = field(default_factory=list)
    _loc_ids: dict = field(default_factory=dict)
    _by_pair: dict = field(default_factory=dict)

    # -- ids ------------------------------------------------------------------
    def _pid_ids(self, pids: np.ndarray) -> np.ndarray:
        gx, gy, _ = self.grid
        pids = np.asarray(pids, np.int64).reshape(-1, 3)
        return pids[:, 0] + gx * (pids[:, 1] + gy * pids[:, 2])

    def _pid(self, pid_id: int) -> tuple:
        gx, gy, _ = self.grid
        return (pid_id % gx, pid_id // gx % gy, pid_id // (gx * gy))

    def _loc_id(self, loc: object) -> int:
        i = self._loc_ids.get(loc)
        if i is None:
            i = self._loc_ids[loc] = len(self._locs)
            self._locs.append(loc)
        return i

    # -- one access of many lanes, from one or more programs -------------------
    def access(self, what: str, pids: np.ndarray, addresses: np.ndarray, mask: np.ndarray, nbytes: int,
               loc: object) -> None:
        """`addresses` and `mask` have one row per program in `pids` ((n, 3))."""
        ids = self._pid_ids(pids)
        n = ids.size
        addr = np.asarray(addresses, np.int64).reshape(n, -1)
        active = np.broadcast_to(np.asarray(mask, bool).reshape(n, -1), addr.shape)
        lane_pid = np.broadcast_to(ids[:, None], addr.shape)[active]
        addr = addr[active]
        regions = self.memory.find(addr, nbytes)
        loc_id = self._loc_id(loc)
        for r in np.unique(regions[regions >= 0]):
            sel = regions == r
            self._region_access(int(r), what, addr[sel], lane_pid[sel], nbytes, loc_id)

    def _region_access(self, r: int, what: str, addr: np.ndarray, pid: np.ndarray, nbytes: int,
                       loc_id: int) -> None:
        region = self.memory.regions[r]
        g = getattr(region.owner, "itemsize", 1) or 1
        shadow = self._shadows.get(r)
        if shadow is None:
            shadow = self._shadows[r] = _Shadow(-(-region.data.size // g))
        lo = (addr - region.base) // g
        span = int(((addr + nbytes - 1 - region.base) // g - lo).max()) + 1
        words = (lo[:, None] + np.arange(span)).reshape(-1)
        pid = np.repeat(pid, span)
        keep = words <= np.repeat((addr + nbytes - 1 - region.base) // g, span)
        words, pid = words[keep], pid[keep]
        # one entry per (element, program), in element order
        order = np.lexsort((pid, words))
        words, pid = words[order], pid[order]
        fresh = np.ones(words.size, bool)
        fresh[1:] = (words[1:] != words[:-1]) | (pid[1:] != pid[:-1])
        words, pid = words[fresh], pid[fresh]

        for earlier in _CONFLICTS[what]:
            owners, owner_locs = shadow.slots(earlier)
            for slot in range(owners.shape[0]):
                other = owners[slot, words]
                clash = (other != _NONE) & (other != pid)
                if clash.any():
                    self._report(f"{earlier}/{what}", words[clash], pid[clash], other[clash],
                                 owner_locs[slot, words[clash]], loc_id, what, earlier, region, g)
        if what == "write":
            # two programs writing one element in this same access
            first_of_word = np.ones(words.size, bool)
            first_of_word[1:] = words[1:] != words[:-1]
            head = np.maximum.accumulate(np.where(first_of_word, np.arange(words.size), 0))
            clash = ~first_of_word
            if clash.any():
                self._report("write/write", words[clash], pid[clash], pid[head[clash]],
                             np.full(int(clash.sum()), loc_id, np.int32), loc_id, what, what, region, g)
        self._record(shadow, what, words, pid, loc_id)

    def _record(self, shadow: _Shadow, what: str, words: np.ndarray, pid: np.ndarray, loc_id: int) -> None:
        owners, locs = shadow.slots(what)
        if what == "write":
            owners[0, words] = pid      # duplicates: the last program in order wins, as in memory
            locs[0, words] = loc_id
            return
        # fill the first empty slot holding no program equal to this one
        for slot in range(owners.shape[0]):
            cur = owners[slot, words]
            known = np.zeros(words.size, bool)
            for s in range(slot):
                known |= owners[s, words] == pid
            take = (cur == _NONE) & ~known
            # within this access, several programs may want the same empty slot: one gets it
            w, p = words[take], pid[take]
            owners[slot, w] = p
            locs[slot, w] = loc_id

    def _report(self, kind: str, words, pid, other, other_loc, loc_id: int, what: str, earlier: str,
                region, g: int) -> None:
        for ol in np.unique(other_loc):
            sel = other_loc == ol
            key = (kind, int(ol), loc_id)
            rep = self._by_pair.get(key)
            if rep is None:
                addr = region.base + int(words[sel][0]) * g
                rep = RaceReport(kind, addr, region.element(addr),
                                 Access(self._pid(int(other[sel][0])), self._locs[int(ol)], earlier),
                                 Access(self._pid(int(pid[sel][0])), self._locs[loc_id], what), 0)
                self._by_pair[key] = rep
                self.reports.append(rep)
            rep.count += int(sel.sum())
