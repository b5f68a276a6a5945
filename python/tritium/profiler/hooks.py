"""What the active profiling sessions record, and how it is measured.

- A kernel launch (through `runtime/launch_hooks.py`, installed while a
  session is active) becomes a frame under the current scopes, named by the
  kernel's function name; in a session started with hook="triton", by the
  "name" its `@jit(launch_metadata=fn)` function returns, whose numeric
  entries (`flops16`, `bytes`, ...) are added to the frame. Its duration is
  measured with a pair of device events (`driver.active.get_device_interface()`,
  i.e. `torch.cuda.Event`, on the current stream) around the launch
  itself; a launch the NumPy interpreter runs is timed with the host clock,
  since it runs on the CPU before the call returns. Without a device
  interface (no torch, or a torch without a usable GPU) launches are counted
  but not timed.
- A scope adds its metrics to its frame when entered. A scope in which no
  kernel launch and no inner scope was recorded (e.g. one around a torch or
  cuBLAS call) is timed itself, with device events at entry and exit; any
  other scope's time is its children's.

Event pairs are read when the session is finalized, or every
PENDING_LIMIT pairs (after a device synchronize), so recording never waits
for the device in between. Scopes nest per thread; launches and scopes on
any thread update the shared trees under one lock (Recorder.lock)."""
from __future__ import annotations

import threading
import time
from numbers import Number
from typing import Any, Callable

from ..runtime import driver, launch_hooks
from ..runtime.compiled import KernelMetadata
from .data import COUNT, Frame, Session

PENDING_LIMIT = 2048

# launch_metadata keys that name the launch rather than measure it (Proton's)
RESERVED_KEYS = frozenset({"name", "function", "stream"})


class ScopeFrame:
    """An open scope on this thread's stack."""
    __slots__ = ("name", "start", "inner")

    def __init__(self, name: str):
        self.name = name
        self.start: Any = None      # device event at entry, when timed
        self.inner = False          # a kernel or an inner scope was recorded in it


class _Stack(threading.local):
    def __init__(self) -> None:
        self.frames: list[ScopeFrame] = []
        self.in_metadata = False    # inside a launch_metadata function: its launches are not recorded


class Recorder:
    """The recording state shared by every session."""

    def __init__(self) -> None:
        self.sessions: tuple[Session, ...] = ()     # the active ones
        self.device: Any = None                     # Event + synchronize, or None
        self.pending: list[tuple[list[Frame], Any, Any]] = []
        self.free: list[Any] = []                   # events to record again
        # held while the frame trees, the pending pairs or the free events
        # change: launches and scopes on several threads would otherwise lose
        # counts and times (read-modify-write of a frame's metrics) or frames
        # (two threads adding one child); re-entrant, as timed() may resolve()
        self.lock = threading.RLock()

    def update(self, sessions: list[Session]) -> None:
        """Called when sessions start, stop or change state."""
        self.sessions = tuple(s for s in sessions if s.active)
        if self.sessions:
            device = _device_interface()
            if device is not self.device:
                self.resolve()
                self.device = device
                self.free = []
        launch_hooks.set_hook(LAUNCH_HOOK if self.sessions else None)

    def event(self) -> Any:
        try:
            return self.free.pop()
        except IndexError:
            return self.device.Event(enable_timing=True)

    def timed(self, nodes: list[Frame], start: Any, end: Any) -> None:
        with self.lock:
            self.pending.append((nodes, start, end))
            if len(self.pending) >= PENDING_LIMIT:
                self.resolve()

    def resolve(self) -> None:
        """Adds every pending event pair's duration to its frames."""
        with self.lock:
            if not self.pending:
                return
            pending, self.pending = self.pending, []
            self.device.synchronize()
            for nodes, start, end in pending:
                ns = int(round(start.elapsed_time(end) * 1e6))
                for node in nodes:
                    node.add_time(ns)
                self.free.append(start)
                self.free.append(end)


def _device_interface() -> Any:
    try:
        device = driver.active.get_device_interface()
    except RuntimeError:    # no GPU, or no torch
        return None
    # a CPU-only torch (or one that finds no driver) still hands out
    # torch.cuda, whose events fail when recorded: interpreter runs on such a
    # machine are timed with the host clock only
    is_available = getattr(device, "is_available", None)
    if is_available is not None and not is_available():
        return None
    return device


RECORDER = Recorder()
STACK = _Stack()


def _path() -> list[str]:
    frames = STACK.frames
    if not frames:
        return []
    frames[-1].inner = True
    return [f.name for f in frames]


def _numbers(metrics: dict, where: str) -> dict[str, Any]:
    out = {}
    for k, v in metrics.items():
        if not isinstance(k, str):
            raise TypeError(f"{where}: metric names must be strings, got {k!r}")
        if not isinstance(v, Number):
            raise TypeError(f"{where}: metric '{k}' must be a number, got {type(v).__name__}")
        out[k] = v
    return out


def enter_scope(name: str, metrics: dict | None) -> ScopeFrame | None:
    rec = RECORDER
    if not rec.sessions:
        return None
    if not isinstance(name, str):
        raise TypeError(f"proton.scope: the name must be a string, got {type(name).__name__}")
    values = _numbers(metrics, f"proton.scope('{name}')") if metrics else None
    path = _path() + [name]
    frame = ScopeFrame(name)
    STACK.frames.append(frame)
    with rec.lock:
        for s in rec.sessions:
            node = s.root.at(path)
            if values:
                node.add(values)
    if rec.device is not None:
        frame.start = rec.event()
        frame.start.record()
    return frame


def exit_scope(frame: ScopeFrame | None) -> None:
    if frame is None:
        return
    frames = STACK.frames
    for i in range(len(frames) - 1, -1, -1):
        if frames[i] is frame:
            break
    else:
        return      # closed already (an inner scope left open was closed with it)
    path = [f.name for f in frames[:i + 1]]
    del frames[i:]
    rec = RECORDER
    if frame.start is None:
        return
    if frame.inner or not rec.sessions or rec.device is None:
        rec.free.append(frame.start)
        return
    end = rec.event()
    end.record()
    with rec.lock:
        rec.timed([s.root.at(path) for s in rec.sessions], frame.start, end)


class LaunchHook:
    """Installed in runtime/launch_hooks.py while a session is active."""

    @staticmethod
    def _frames(sessions: tuple[Session, ...], jit_fn: Any, grid: tuple, args: Callable[[], dict],
                metadata: Callable[[], dict]) -> list[Frame]:
        """The frame of this launch in each of `sessions` (the active ones
        when the launch began: another thread, or the launch_metadata
        function, may start or stop sessions meanwhile). The
        launch_metadata function runs before the lock is taken."""
        described = None
        if jit_fn.launch_metadata is not None and any(s.hook == "triton" for s in sessions):
            described = _describe(jit_fn, grid, args(), metadata())
        path = _path()
        out = []
        with RECORDER.lock:
            for s in sessions:
                name, values = described if described is not None and s.hook == "triton" else (jit_fn.__name__, None)
                node = s.root.at(path).child(name)
                if values:
                    node.add(values)
                out.append(node)
        return out

    def gpu_launch(self, jit_fn: Any, kernel: Any, grid: tuple, bound: tuple, launch: Callable[[], Any]) -> None:
        rec = RECORDER
        sessions = rec.sessions
        if STACK.in_metadata or not sessions:
            launch()
            return
        device = rec.device
        if device is None:
            launch()
        else:
            start, end = rec.event(), rec.event()
            start.record()
            launch()
            end.record()
        nodes = self._frames(sessions, jit_fn, grid, lambda: dict(zip(jit_fn.arg_names, bound)),
                             lambda: {"name": jit_fn.__name__, "num_warps": kernel.num_warps,
                                      "shared": kernel.shared_bytes, "device": kernel.device})
        where = {"device_id": str(kernel.device), "device_type": "CUDA"}
        with rec.lock:
            for s, node in zip(sessions, nodes):
                node.add(where)
                s.devices.add(kernel.device)
            if device is None:
                for node in nodes:
                    node.metrics[COUNT] = node.metrics.get(COUNT, 0) + 1
            else:
                rec.timed(nodes, start, end)

    def interpreted_launch(self, jit_fn: Any, grid: tuple, bound: dict, run: Callable[[], Any]) -> Any:
        sessions = RECORDER.sessions
        if STACK.in_metadata or not sessions:
            return run()
        t0 = time.perf_counter_ns()
        result = run()
        ns = time.perf_counter_ns() - t0
        nodes = self._frames(sessions, jit_fn, grid, lambda: dict(bound), lambda: {"name": jit_fn.__name__})
        with RECORDER.lock:
            for node in nodes:
                node.add_time(ns)
        return result


def _describe(jit_fn: Any, grid: tuple, args: dict, metadata: dict) -> tuple[str, dict]:
    """(frame name, metrics) from the kernel's launch_metadata function,
    called as Triton calls it: (grid, kernel metadata, arguments by name)."""
    STACK.in_metadata = True
    try:
        got = jit_fn.launch_metadata(grid, KernelMetadata(metadata), args)
    finally:
        STACK.in_metadata = False
    if not isinstance(got, dict):
        raise TypeError(f"launch_metadata of '{jit_fn.__name__}' must return a dict, got {type(got).__name__}")
    name = got.get("name", jit_fn.__name__)
    values = {k: v for k, v in got.items() if k not in RESERVED_KEYS and isinstance(k, str) and isinstance(v, Number)}
    return str(name), values


LAUNCH_HOOK = LaunchHook()

__all__ = ["LAUNCH_HOOK", "PENDING_LIMIT", "RECORDER", "LaunchHook", "Recorder", "enter_scope", "exit_scope"]
