"""Errors an interpreted launch raises: one type, `InterpreterError`, a
CompilationError (what users already catch for a bad kernel), whose message
starts with the kernel's file:line:col and shows the source line with a
caret, like the compiler's. `located` turns whatever went wrong inside a
launch (a shape mismatch from the semantic layer, a bad op, a user's NameError)
into one, from the traceback's innermost kernel frame."""
from __future__ import annotations

import bdb
import linecache
import types

from ..language.errors import CompilationError


class InterpreterError(CompilationError):
    """Something went wrong while interpreting a kernel. `original` is the
    exception raised inside the interpreter, when there was one."""
    original: BaseException | None = None


class DeviceAssertionError(InterpreterError, AssertionError):
    """A `tl.device_assert` / `assert` in an interpreted kernel failed."""


class DataRaceError(InterpreterError):
    """TRITIUM_SANITIZE_RACES=1 found conflicting accesses between programs."""


def _column(tb: types.TracebackType) -> int | None:
    positions = getattr(tb.tb_frame.f_code, "co_positions", None)   # Python 3.11+
    if positions is None:
        return None
    for i, pos in enumerate(positions()):
        if i == tb.tb_lasti // 2:
            return pos[2]
    return None


def located(exc: BaseException, is_kernel_file) -> BaseException:
    """`exc` as an InterpreterError at the innermost kernel frame of its
    traceback (calls between kernel functions become notes), or `exc` itself
    when it already names its place or is not the kernel's fault."""
    if isinstance(exc, CompilationError) and exc.filename is not None:
        return exc
    if isinstance(exc, (bdb.BdbQuit, KeyboardInterrupt)) or not isinstance(exc, Exception):
        return exc
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        if is_kernel_file(tb.tb_frame.f_code.co_filename):
            frames.append(tb)
        tb = tb.tb_next
    if not frames:
        return exc
    inner = frames[-1]
    file, line = inner.tb_frame.f_code.co_filename, inner.tb_lineno
    notes = [f"  in '{callee.tb_frame.f_code.co_name}' called from {caller.tb_frame.f_code.co_filename}:"
             f"{caller.tb_lineno}" for callee, caller in zip(reversed(frames), list(reversed(frames))[1:])]
    if isinstance(exc, InterpreterError):
        cls, message = type(exc), exc.message
    else:
        cls, message = InterpreterError, str(exc) or type(exc).__name__   # as the compiler words it
    err = cls(message, file, line, _column(inner), linecache.getline(file, line) or None, notes)
    err.original = exc
    return err
