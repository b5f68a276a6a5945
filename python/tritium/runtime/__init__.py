"""Runtime: `@jit` binding and launching, autotuning and heuristics, the
device driver (`driver.active` as in Triton) and the runtime errors."""
from . import device_api, driver  # noqa: F401 (device_api gives `driver.active`, as in Triton)
from .autotuner import Autotuner, Config, Heuristics, autotune, heuristics
from .errors import InterpreterError, OutOfResources
from .jit import JITFunction, KernelInterface, jit
from .tensors import MockTensor, TensorWrapper, reinterpret

__all__ = ["Autotuner", "Config", "Heuristics", "InterpreterError", "JITFunction", "KernelInterface", "MockTensor",
           "OutOfResources", "TensorWrapper", "autotune", "driver", "heuristics", "jit", "reinterpret"]
