"""tritium: a Triton-compatible GPU kernel compiler. `import tritium as triton`
gives the names kernels and launch code use: jit, autotune, heuristics,
Config, cdiv, next_power_of_2, set_allocator, language, testing,
CompilationError. `tritium.install_as_triton()` (or TRITIUM_AS_TRITON=1)
makes `import triton` itself resolve to tritium, for code that cannot be
edited."""
from .version import __version__  # noqa: F401
from . import language  # noqa: F401
from . import testing  # noqa: F401
from .as_triton import TRITON_API_VERSION, install_as_triton, uninstall_as_triton
from .compiler.errors import CompilationError
from .errors import TritonError
from .runtime.errors import InterpreterError, OutOfResources
from .runtime.tensors import MockTensor, TensorWrapper, reinterpret
from . import compiler, knobs, runtime  # noqa: F401
from .language.aggregate import aggregate
from .runtime._allocation import set_allocator
from .runtime.autotuner import Config, autotune, heuristics
from .runtime.jit import JITFunction, KernelInterface, jit
from . import compile  # noqa: A004  the module is callable: tritium.compile(fn, ...) as in Triton


def cdiv(x: int, y: int) -> int:
    """Ceiling division of host integers."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


__all__ = ["CompilationError", "Config", "InterpreterError", "JITFunction", "KernelInterface", "MockTensor",
           "OutOfResources", "TRITON_API_VERSION", "TensorWrapper", "TritonError", "aggregate", "autotune", "cdiv",
           "compiler", "heuristics", "install_as_triton", "jit", "knobs", "language", "next_power_of_2",
           "reinterpret", "runtime", "set_allocator", "testing", "uninstall_as_triton"]
