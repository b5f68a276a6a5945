"""tritium: a Triton-compatible GPU kernel compiler. `import tritium as triton`
gives the names kernels and launch code use: jit, autotune, heuristics,
Config, cdiv, next_power_of_2, set_allocator, language, testing,
CompilationError."""
from . import language  # noqa: F401
from . import testing  # noqa: F401
from .compiler.errors import CompilationError
from .language.aggregate import aggregate
from .runtime._allocation import set_allocator
from .runtime.autotuner import Config, autotune, heuristics
from .runtime.jit import JITFunction, KernelInterface, jit
from . import compile  # noqa: A004  the module is callable: tritium.compile(fn, ...) as in Triton

__version__ = "0.1.0"


def cdiv(x: int, y: int) -> int:
    """Ceiling division of host integers."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


__all__ = ["CompilationError", "Config", "JITFunction", "KernelInterface", "aggregate", "autotune", "cdiv",
           "heuristics", "jit", "language", "next_power_of_2", "set_allocator", "testing"]
