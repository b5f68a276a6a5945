"""What the layers below the runtime know of a @jit function: its parameters
and how a call or launch binds arguments to them.

`KernelFunction` holds a Python function's parameter model (names, positions,
constexpr annotations, defaults) and the one argument binder (`bind_call`,
with errors that name the function); signature.py types the bound arguments
(`specialize`). The @jit class (runtime/jit.py::JITFunction) derives from it,
adding caching and launching, and registers itself here as the maker of @jit
functions, which `@aggregate` needs for its methods; the interpreter binds a
plain-function kernel through a bare KernelFunction, by the same rules. The
GPU launch path's generated binder (runtime/specialization.py) is a fast form
of `bind_call` and reports its failures through it.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

from . import core


@dataclass
class KernelParam:
    name: str
    num: int
    is_constexpr: bool
    default: Any
    annotation: Any

    @property
    def has_default(self) -> bool:
        return self.default is not inspect.Parameter.empty


class KernelFunction:
    """A Python function seen as a kernel: base class of every @jit function."""

    def __init__(self, fn: Callable):
        if not inspect.isfunction(fn):
            raise TypeError(f"a kernel must be a Python function, got {fn!r}")
        self.fn = fn
        self.__name__ = fn.__name__
        sig = inspect.signature(fn)
        self.signature = sig
        self.params = [KernelParam(p.name, i, core.is_constexpr_annotation(p.annotation), p.default, p.annotation)
                       for i, p in enumerate(sig.parameters.values())]
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"@jit function '{fn.__name__}' cannot take *args or **kwargs")
        self.arg_names = [p.name for p in self.params]
        self.constexprs = [p.num for p in self.params if p.is_constexpr]
        self.constexpr_names = {p.name for p in self.params if p.is_constexpr}

    def bind_call(self, args: list | tuple, kwargs: dict) -> dict[str, Any]:
        """Binds arguments of a call (or launch) by Python's rules; errors name
        the function and the parameter."""
        name = self.__name__
        if len(args) > len(self.params):
            raise TypeError(f"{name}() takes {len(self.params)} argument{'s' * (len(self.params) != 1)} "
                            f"but {len(args)} were given")
        bound = {p.name: a for p, a in zip(self.params, args)}
        for k, v in kwargs.items():
            if k not in self.arg_names:
                raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
            if k in bound:
                raise TypeError(f"{name}() got multiple values for argument '{k}'")
            bound[k] = v
        missing = [p.name for p in self.params if p.name not in bound and not p.has_default]
        if missing:
            raise TypeError(f"{name}() missing {len(missing)} required argument{'s' * (len(missing) != 1)}: "
                            + ", ".join(f"'{m}'" for m in missing)
                            + f" (expected {len(self.params)}, got {len(bound)})")
        for p in self.params:
            if p.name not in bound:
                bound[p.name] = p.default
        return {p.name: bound[p.name] for p in self.params}


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
