"""The NumPy interpreter: runs @jit kernels on the CPU (TRITIUM_INTERPRET=1 or
`jit(interpret=True)`), many programs per NumPy step, emitting normalized
events to clients (docs/debugging.md): `Tracer`, `Sanitizer` (out of bounds,
data races), `Visualizer`, `Profiler`, or your own."""
from .builder import KArray, NumpyBuilder, wrap
from .errors import DataRaceError, DeviceAssertionError, InterpreterError
from .events import (Client, DotEvent, Event, EventBus, Launch, Location, MemoryEvent, ReduceEvent, TensorArg, Tracer,
                     add_client, clients, remove_client)
from .memory import MemoryMap, OutOfBoundsError
from .profiler import Profiler
from .races import RaceReport
from . import regions  # noqa: F401 (registers with language.aggregate: where interpreted aggregates are made)
from .kernel_code import call_jit_in_interpreter
from ..grid import normalize_grid
from .runner import run_grid
from .sanitizer import OutOfBoundsReport, Sanitizer
from .visualizer import Visualizer

__all__ = ["Client", "DataRaceError", "DeviceAssertionError", "DotEvent", "Event", "EventBus", "InterpreterError",
           "KArray", "Launch", "Location", "MemoryEvent", "MemoryMap", "NumpyBuilder", "OutOfBoundsError",
           "OutOfBoundsReport", "Profiler", "RaceReport", "ReduceEvent", "Sanitizer", "TensorArg", "Tracer", "Visualizer", "add_client",
           "call_jit_in_interpreter", "clients", "normalize_grid", "remove_client", "run_grid", "wrap"]
