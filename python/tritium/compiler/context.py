"""State shared while one IR module compiles, and the way the language calls
back into the compiler.

A @jit function can be called where the frontend does not see the call: from
inside a builtin (a reduce's combine function) or by Python code a builtin
runs. The language then asks the current builder (`call_jit_function`); the
`ModuleContext` registers itself with its IRBuilder as that caller and
inlines the call with the generator visiting code right now."""
from __future__ import annotations

import threading
from typing import Any

from ..language.kernel_function import KernelFunction
from .ir import IRBuilder

_active = threading.local()


def active_generator() -> Any:
    """The CodeGenerator visiting code right now, or None."""
    stack = getattr(_active, "stack", None)
    return stack[-1] if stack else None


def push_generator(gen: Any) -> None:
    _active.__dict__.setdefault("stack", []).append(gen)


def pop_generator() -> None:
    _active.stack.pop()


class ModuleContext:
    """State shared by every function compiled into one IR module."""

    def __init__(self, builder: IRBuilder):
        self.builder = builder
        self.noinline: dict[Any, tuple] = {}
        self.call_stack: list[Any] = []   # JITFunctions being inlined (recursion check)
        builder.jit_caller = self.call_jit

    def call_jit(self, fn: Any, args: list, kwargs: dict) -> Any:
        gen = active_generator()
        if gen is not None and isinstance(fn, KernelFunction):
            return gen.call_jit(gen.current_node, fn, list(args), kwargs)
        return getattr(fn, "fn", fn)(*args, **kwargs)   # a plain function runs as itself
