"""Name resolution for kernels: locals, then closure cells, then the
function's globals (restricted to what Triton allows, so kernels do not
silently capture mutable host state), then the Python builtins usable in a
kernel."""
from __future__ import annotations

import builtins
import os
import types
from typing import Any

from ..language import core
from ..language.dtypes import dtype

_MISSING = object()


def _device_print(*args: Any) -> Any:
    from .. import language as tl
    from .values import unwrap
    # Triton maps print() to device_print; a leading string is the prefix
    prefix = ""
    if args and isinstance(unwrap(args[0]), str):
        prefix, args = unwrap(args[0]), args[1:]
    return tl.device_print(prefix, *args)


def _static_args(fn):
    def call(*args: Any, **kwargs: Any) -> Any:
        from .values import unwrap
        return fn(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
    call.__name__ = fn.__name__
    return call


def _minmax(py_fn, tl_name: str):
    def call(*args: Any, **kwargs: Any) -> Any:
        from .values import is_static, unwrap
        from .. import language as tl
        if len(args) == 1 and isinstance(unwrap(args[0]), (tuple, list)):
            args = tuple(unwrap(args[0]))
        if all(is_static(a) for a in args):
            return py_fn(*[unwrap(a) for a in args], **kwargs)
        if not args:
            raise TypeError(f"{py_fn.__name__}() expects at least one argument")
        acc = args[0]
        for a in args[1:]:
            acc = getattr(tl, tl_name)(acc, a, **kwargs)
        return acc
    call.__name__ = py_fn.__name__
    return call


def _abs(x: Any) -> Any:
    from .values import unwrap
    return abs(unwrap(x))


#: Python builtins a kernel may use; the rest are "not defined" in kernels.
BUILTINS: dict[str, Any] = {
    **{f.__name__: _static_args(f) for f in (len, int, float, bool, isinstance, getattr, hasattr,
                                              enumerate, zip, list, tuple, type, divmod, round, repr, str)},
    "range": builtins.range,
    "min": _minmax(min, "minimum"),
    "max": _minmax(max, "maximum"),
    "abs": _abs,
    "print": _device_print,
}


def global_allowed(name: str, val: Any, fn_globals: dict) -> bool:
    from ..runtime.jit import JITFunction
    if isinstance(val, (types.ModuleType, JITFunction, core.constexpr, dtype)):
        return True
    if getattr(val, "__triton_builtin__", False):
        return True
    module = getattr(val, "__module__", None) or ""
    if module.startswith(("tritium.language", "triton.language")):
        return True
    if isinstance(val, tuple) and hasattr(val, "_fields"):
        return True
    ann = fn_globals.get("__annotations__", {}).get(name)
    if ann is core.constexpr or (isinstance(ann, str) and ann.endswith("constexpr")):
        return True
    return os.environ.get("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", "0") == "1"


def lookup_global(name: str, fn_globals: dict) -> Any:
    val = fn_globals.get(name, _MISSING)
    if val is _MISSING:
        if name in BUILTINS:
            return BUILTINS[name]
        raise NameError(f"name '{name}' is not defined")
    if not global_allowed(name, val, fn_globals):
        raise NameError(
            f"cannot access global variable '{name}' from a kernel: globals must be "
            f"constexpr ('{name} = tl.constexpr(...)'), modules, dtypes or @jit functions")
    return val


def closure_allowed(name: str, val: Any) -> bool:
    """Closure cells follow the rule for globals, and may also hold plain
    immutable values (numbers, strings, None, tuples of allowed values): a
    factory's parameters, captured when the @jit function is made. Mutable
    host state (a list, a dict, an arbitrary object) is refused either way."""
    if val is None or isinstance(val, (bool, int, float, str)):
        return True
    if isinstance(val, tuple) and not hasattr(val, "_fields"):
        return all(closure_allowed(name, v) for v in val)
    return global_allowed(name, val, {})


def lookup_closure(name: str, val: Any) -> Any:
    if not closure_allowed(name, val):
        raise NameError(
            f"cannot access closure variable '{name}' ({type(val).__name__}) from a kernel: closure cells, "
            "like globals, must be constexpr values, numbers, strings, None, tuples of those, modules, "
            "dtypes or @jit functions")
    return val


def closure_vars(fn) -> dict[str, Any]:
    cells = fn.__closure__ or ()
    out = {}
    for name, cell in zip(fn.__code__.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # empty cell (assigned later)
            continue
    return out
