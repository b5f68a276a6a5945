"""A profiling session's data: a tree of frames (scopes and kernels), each
with its metrics, written as Proton's hatchet JSON.

The file is a JSON list of two objects: the tree's root frame
`{"frame": {"name": "ROOT", "type": "function"}, "metrics": {...},
"children": [...]}` and the devices seen, `{"CUDA": {"0": {"arch": "90",
"num_sms": 132, "clock_rate": kHz, "memory_clock_rate": kHz, "bus_width":
bits}}}`. Metrics are exclusive (the frame's own): a kernel frame has
`time (ns)` (its summed duration), `count` (launches), `device_id` and
`device_type`; any frame can carry numbers added by `scope(name, metrics)`
or a kernel's launch metadata (`flops16`, `bytes`, ...), summed over every
time they were added. Readers (viewer.py) sum them over subtrees."""
from __future__ import annotations

import json
from typing import Any

TIME = "time (ns)"
COUNT = "count"


class Frame:
    """One node of the tree: children by name, in the order first seen."""
    __slots__ = ("name", "metrics", "children")

    def __init__(self, name: str):
        self.name = name
        self.metrics: dict[str, Any] = {}
        self.children: dict[str, Frame] = {}

    def child(self, name: str) -> "Frame":
        c = self.children.get(name)
        if c is None:
            c = self.children[name] = Frame(name)
        return c

    def at(self, path: list[str]) -> "Frame":
        node = self
        for name in path:
            node = node.child(name)
        return node

    def add(self, metrics: dict[str, Any]) -> None:
        """Sums numbers into the frame's metrics; strings replace."""
        own = self.metrics
        for k, v in metrics.items():
            if isinstance(v, str):
                own[k] = v
            else:
                own[k] = own.get(k, 0) + v

    def add_time(self, ns: int) -> None:
        own = self.metrics
        own[TIME] = own.get(TIME, 0) + ns
        own[COUNT] = own.get(COUNT, 0) + 1

    def to_json(self) -> dict[str, Any]:
        return {"frame": {"name": self.name, "type": "function"}, "metrics": dict(self.metrics),
                "children": [c.to_json() for c in self.children.values()]}

    def walk(self):
        yield self
        for c in self.children.values():
            yield from c.walk()


class Session:
    """A profile being recorded: its output path, whether it records,
    whether kernels are named and measured by their launch metadata
    (hook="triton"), and the devices its kernels ran on."""

    def __init__(self, session_id: int, name: str, hook: str | None):
        self.id = session_id
        self.name = name
        self.hook = hook
        self.active = True
        self.root = Frame("ROOT")
        self.devices: set[int] = set()

    @property
    def path(self) -> str:
        return self.name if self.name.endswith(".hatchet") else self.name + ".hatchet"

    def hatchet(self, device_info: dict[int, dict[str, Any]]) -> list[Any]:
        """The session's data as hatchet JSON (a list: root frame, devices)."""
        root = self.root.to_json()
        if any(TIME in f.metrics for f in self.root.walk()):
            # as Proton: the root carries the kernel metrics, at zero
            root["metrics"].setdefault(COUNT, 0)
            root["metrics"].setdefault(TIME, 0)
        devices = {str(d): device_info[d] for d in sorted(self.devices) if d in device_info}
        return [root, {"CUDA": devices} if devices else {}]

    def write(self, device_info: dict[int, dict[str, Any]]) -> str:
        path = self.path
        with open(path, "w") as f:
            json.dump(self.hatchet(device_info), f, indent=1)
        return path


__all__ = ["COUNT", "Frame", "Session", "TIME"]
