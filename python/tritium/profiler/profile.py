"""Profiling sessions (Proton's `start`, `activate`, `deactivate`,
`finalize`, `profile`) and scopes (`scope`, `enter_scope`, `exit_scope`).

A session starts active; session ids count from 0 in the order sessions
start. `finalize` writes `<name>.hatchet` (data.py) and ends the session.
While no session is active nothing is recorded: a scope costs one check and
kernel launches take the Rust fast path."""
from __future__ import annotations

import functools
import itertools
import threading
from typing import Any, Callable

from ..runtime import driver
from ..runtime.device_api import CudaUtils
from . import hooks
from .data import Session

DEFAULT_PROFILE_NAME = "proton"

_sessions: dict[int, Session] = {}
_next_id = 0


def _update() -> None:
    hooks.RECORDER.update(list(_sessions.values()))


def _selected(session: int | None, what: str) -> list[Session]:
    if session is None:
        return list(_sessions.values())
    s = _sessions.get(session)
    if s is None:
        known = ", ".join(map(str, _sessions)) or "none"
        raise ValueError(f"proton.{what}: no profiling session {session!r} (sessions: {known})")
    return [s]


def start(name: str | None = None, *, context: str | None = "shadow", data: str | None = "tree",
          backend: str | None = None, mode: str | None = None, hook: str | None = None) -> int:
    """Starts recording into a new session (active at once) and returns its
    id; `finalize` writes it to `<name>.hatchet` ("proton" by default).
    hook="triton" names and measures kernels by their launch metadata.
    Starting a name that is being recorded returns that session's id."""
    global _next_id
    if context not in (None, "shadow"):
        raise ValueError(f"proton.start: context {context!r} is not supported by tritium (only 'shadow': "
                         "frames are the scopes entered)")
    if data not in (None, "tree"):
        raise ValueError(f"proton.start: data {data!r} is not supported by tritium (only 'tree')")
    if backend not in (None, "cupti"):
        raise ValueError(f"proton.start: backend {backend!r} is not supported by tritium (kernels are timed "
                         "with device events around each launch)")
    if mode not in (None, ""):
        raise ValueError(f"proton.start: mode {mode!r} is not supported by tritium")
    if hook not in (None, "triton"):
        raise ValueError(f"proton.start: hook must be None or 'triton', got {hook!r}")
    name = DEFAULT_PROFILE_NAME if name is None else str(name)
    for s in _sessions.values():
        if s.name == name:
            s.active = True
            _update()
            return s.id
    sid = _next_id
    _next_id += 1
    _sessions[sid] = Session(sid, name, hook)
    _update()
    return sid


def activate(session: int | None = None) -> None:
    """Records into `session` again (None: every session)."""
    for s in _selected(session, "activate"):
        s.active = True
    _update()


def deactivate(session: int | None = None) -> None:
    """Stops recording into `session` (None: every session); what it
    recorded stays until finalize."""
    for s in _selected(session, "deactivate"):
        s.active = False
    _update()


def finalize(session: int | None = None, output_format: str = "hatchet") -> None:
    """Writes `session` (None: every session) to `<name>.hatchet` and ends it."""
    if output_format != "hatchet":
        raise ValueError(f"proton.finalize: output_format {output_format!r} is not supported by tritium "
                         "(only 'hatchet')")
    chosen = _selected(session, "finalize")
    # the sessions end even when reading the device or writing a file fails:
    # recording stops and the Rust fast path comes back; the first error is raised
    for s in chosen:
        del _sessions[s.id]
    try:
        hooks.RECORDER.resolve()
        devices = _device_info(set().union(*(s.devices for s in chosen)) if chosen else set())
        failed = []
        for s in chosen:
            try:
                with hooks.RECORDER.lock:   # launches on other threads may still be adding to the tree
                    s.write(devices)
            except OSError as e:
                failed.append(e)
        if failed:
            raise failed[0]
    finally:
        _update()


def _device_info(devices: set[int]) -> dict[int, dict[str, Any]]:
    """What Proton records of each device (clock rates in kHz, bus width in bits)."""
    out = {}
    for d in devices:
        try:
            props = CudaUtils.get_device_properties(d)
            major, minor = driver.device_info(d)["capability"]
        except RuntimeError:
            continue
        out[d] = {"arch": f"{major}{minor}", "num_sms": props["multiprocessor_count"],
                  "clock_rate": props["sm_clock_rate"], "memory_clock_rate": props["mem_clock_rate"],
                  "bus_width": props["mem_bus_width"]}
    return out


def profile(func: Callable | None = None, *, name: str | None = None, context: str | None = "shadow",
            data: str | None = "tree", backend: str | None = None, mode: str | None = None,
            hook: str | None = None) -> Any:
    """Decorator: each call starts (or resumes) the session, runs the
    function, and deactivates the session; `finalize` writes it."""
    def decorate(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            sid = start(name, context=context, data=data, backend=backend, mode=mode, hook=hook)
            try:
                return f(*args, **kwargs)
            finally:
                deactivate(sid)
        return wrapper
    return decorate(func) if func is not None else decorate


class scope:
    """`with proton.scope(name, {metric: value}):` or `@proton.scope(...)`:
    a frame named `name` under the current one while a session is active,
    with the metrics added each time it is entered."""

    def __init__(self, name: str, metrics: dict[str, Any] | None = None) -> None:
        self.name = name
        self.metrics = metrics
        self._open: list[hooks.ScopeFrame | None] = []

    def __enter__(self) -> "scope":
        self._open.append(hooks.enter_scope(self.name, self.metrics))
        return self

    def __exit__(self, *exc: Any) -> None:
        hooks.exit_scope(self._open.pop())

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            frame = hooks.enter_scope(self.name, self.metrics)
            try:
                return func(*args, **kwargs)
            finally:
                hooks.exit_scope(frame)
        return wrapper


class _Opened(threading.local):
    """Scopes `enter_scope` opened on this thread, innermost last, with their ids."""
    def __init__(self) -> None:
        self.scopes: list[tuple[int, hooks.ScopeFrame]] = []


_opened = _Opened()
_ids = itertools.count()


def enter_scope(name: str, *, triton_op: bool = False, metrics: dict[str, Any] | None = None) -> int:
    """Opens a scope that `exit_scope()` closes; returns its id (-1 while no
    session is active)."""
    frame = hooks.enter_scope(name, metrics)
    if frame is None:
        return -1
    sid = next(_ids)
    _opened.scopes.append((sid, frame))
    return sid


def exit_scope(triton_op: bool = False) -> int:
    """Closes the innermost scope `enter_scope` opened; returns its id (-1
    when there is none)."""
    if not _opened.scopes:
        return -1
    sid, frame = _opened.scopes.pop()
    hooks.exit_scope(frame)
    return sid


__all__ = ["DEFAULT_PROFILE_NAME", "activate", "deactivate", "enter_scope", "exit_scope", "finalize", "profile",
           "scope", "start"]
