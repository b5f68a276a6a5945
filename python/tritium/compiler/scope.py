"""Name resolution for kernels: locals, then closure cells, then the
function's globals (restricted to what Triton allows, so kernels do not
silently capture mutable host state), then the Python builtins usable in a
kernel."""
from __future__ import annotations

import builtins
from typing import Any

from .. import language as tl
from ..language.python_subset import (KERNEL_BUILTINS, closure_allowed, closure_refusal, global_allowed,
                                      global_refusal, kernel_minmax)
from .values import unwrap

_MISSING = object()


def _device_print(*args: Any) -> Any:
    # Triton maps print() to device_print; a leading string is the prefix
    prefix = ""
    if args and isinstance(unwrap(args[0]), str):
        prefix, args = unwrap(args[0]), args[1:]
    return tl.device_print(prefix, *args)


def _static_args(fn):
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
    call.__name__ = fn.__name__
    return call


def _abs(x: Any) -> Any:
    return abs(unwrap(x))


#: The kernel meaning of each of python_subset.KERNEL_BUILTINS.
BUILTINS: dict[str, Any] = {
    **{f.__name__: _static_args(f) for f in (len, int, float, bool, isinstance, getattr, hasattr,
                                              enumerate, zip, list, tuple, type, divmod, round, repr, str)},
    "range": builtins.range,
    "min": kernel_minmax(min, "minimum"),
    "max": kernel_minmax(max, "maximum"),
    "abs": _abs,
    "print": _device_print,
}


def lookup_global(name: str, fn_globals: dict) -> Any:
    val = fn_globals.get(name, _MISSING)
    if val is _MISSING:
        if name in BUILTINS:
            return BUILTINS[name]
        raise NameError(f"name '{name}' is not defined")
    if not global_allowed(name, val, fn_globals):
        raise NameError(global_refusal(name))
    return val


def lookup_closure(name: str, val: Any) -> Any:
    if not closure_allowed(name, val):
        raise NameError(closure_refusal(name, val))
    return val
