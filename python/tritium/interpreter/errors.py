"""Errors an interpreted launch raises. Kept apart from the builder so the
clients (races.py) and the runner share them without import cycles."""
from __future__ import annotations


class InterpreterError(RuntimeError):
    """An op the interpreter cannot execute as asked (bad operands or attributes)."""


class DeviceAssertionError(AssertionError):
    """A `tl.device_assert` / `assert` in an interpreted kernel failed."""


class DataRaceError(InterpreterError):
    """TRITIUM_SANITIZE_RACES=1 found conflicting accesses between programs."""
