"""What the layers below the runtime know of a @jit function.

The class itself (runtime/jit.py::JITFunction) lives in the runtime, with
binding, caching and launching. It derives from `KernelFunction`, so the
language, the frontend and the interpreter tell @jit functions from other
callables without importing the runtime; and it registers itself here as the
maker of @jit functions, which `@aggregate` needs for its methods.
"""
from __future__ import annotations

from typing import Any, Callable


class KernelFunction:
    """Base class of every @jit function (runtime.jit.JITFunction)."""


_maker: Callable[[Callable], KernelFunction] | None = None


def register_maker(maker: Callable[[Callable], KernelFunction]) -> None:
    global _maker
    _maker = maker


def as_kernel_function(fn: Any) -> KernelFunction:
    """`fn` itself if it is a @jit function, else `fn` made into one."""
    if isinstance(fn, KernelFunction):
        return fn
    if _maker is None:
        raise RuntimeError("no @jit implementation is registered (import tritium, not tritium.language alone)")
    return _maker(fn)
