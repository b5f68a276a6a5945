"""The NumPy interpreter: runs @jit kernels on the CPU one program at a time
(TRITIUM_INTERPRET=1 or `jit(interpret=True)`), emitting memory/dot events to
tracing clients (`Tracer`, `Sanitizer`)."""
from .builder import DeviceAssertionError, InterpreterError, KArray, NumpyBuilder, wrap
from .events import DotEvent, EventBus, Location, MemoryEvent, OutOfBoundsReport, Sanitizer, Tracer
from .memory import MemoryMap, OutOfBoundsError
from .runner import call_jit_in_interpreter, normalize_grid, run_grid

__all__ = ["DeviceAssertionError", "DotEvent", "EventBus", "InterpreterError", "KArray", "Location", "MemoryEvent",
           "MemoryMap", "NumpyBuilder", "OutOfBoundsError", "OutOfBoundsReport", "Sanitizer", "Tracer",
           "call_jit_in_interpreter", "normalize_grid", "run_grid", "wrap"]
