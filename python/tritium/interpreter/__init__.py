"""The NumPy interpreter: runs @jit kernels on the CPU one program at a time
(TRITIUM_INTERPRET=1 or `jit(interpret=True)`), emitting memory/dot events to
tracing clients (`Tracer`, `Sanitizer`)."""
from .builder import KArray, NumpyBuilder, wrap
from .errors import DataRaceError, DeviceAssertionError, InterpreterError
from .events import DotEvent, EventBus, Launch, Location, MemoryEvent, OutOfBoundsReport, Sanitizer, Tracer
from .memory import MemoryMap, OutOfBoundsError
from .races import RaceReport
from .runner import call_jit_in_interpreter, normalize_grid, run_grid

__all__ = ["DataRaceError", "DeviceAssertionError", "DotEvent", "EventBus", "InterpreterError", "KArray", "Launch",
           "Location", "MemoryEvent", "MemoryMap", "NumpyBuilder", "OutOfBoundsError", "OutOfBoundsReport",
           "RaceReport", "Sanitizer", "Tracer", "call_jit_in_interpreter", "normalize_grid", "run_grid", "wrap"]
