"""Runtime: `@jit` binding and launching, autotuning and heuristics."""
from .autotuner import Autotuner, Config, Heuristics, autotune, heuristics
from .jit import JITFunction, KernelInterface, jit

__all__ = ["Autotuner", "Config", "Heuristics", "JITFunction", "KernelInterface", "autotune", "heuristics", "jit"]
