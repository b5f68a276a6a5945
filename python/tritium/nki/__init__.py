"""An NKI frontend for tritium's interpreter: kernels written in the style of
AWS Neuron's NKI (`import tritium.nki.language as nl`) run on the same NumPy
interpreter as Triton kernels and emit the same events, so the visualizer,
profiler, tracer and sanitizer work on them unchanged (docs/debugging.md).

    @nki.jit
    def kernel(a_input, c_output): ...
    kernel[grid](a, c)        # NumPy arrays (or PyTorch CPU tensors) in "HBM"

Output tensors are kernel arguments, as in NKI's classic form; there is no
compiler behind this frontend (the profiler says so).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..interpreter.runner import run_grid
from . import language
from .tiles import HbmTensor, Tile

__all__ = ["HbmTensor", "NkiKernel", "Tile", "jit", "language"]


def _hbm_arg(name: str, value: Any, converted: Any, tensor: Any) -> Any:
    """What an NKI kernel gets for an argument: an HbmTensor for an array,
    the Python value otherwise (NKI has no runtime scalars)."""
    if tensor is None:
        return value
    return HbmTensor(name, converted, tensor.shape, tensor.strides, converted.dtype.element_ty)


class NkiKernel:
    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        return lambda *args, **kwargs: self.run(grid, args, kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        """A launch of one program."""
        self.run((1,), args, kwargs)

    def run(self, grid: Any, args: Sequence[Any], kwargs: dict[str, Any], clients: Sequence[Any] = (),
            **options: Any) -> None:
        run_grid(self.fn, grid, list(args), kwargs=kwargs, clients=clients, frontend="nki", arg_hook=_hbm_arg,
                 **options)


def jit(fn: Callable | None = None, **options: Any) -> Any:
    """`@nki.jit`: an NKI kernel, launched as `kernel[grid](*args)`."""
    if fn is None:
        return lambda f: NkiKernel(f)
    return NkiKernel(fn)
