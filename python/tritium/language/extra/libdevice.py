"""`triton.language.extra.libdevice`: NVIDIA libdevice's math, conversion
and bit functions, one `extern_elementwise` call each (the table is in
libdevice_table.py). The NVPTX target lowers those that are one instruction
itself and links `libdevice.10.bc` for the rest; the interpreter computes
them with NumPy (interpreter/libdevice_numpy.py).
"""
from __future__ import annotations

from typing import Any, Callable

from .. import semantic
from ..core import builtin
from ..extern import extern_elementwise
from .libdevice_table import TABLE, TO_BOOL


def _make(name: str) -> Callable:
    table = TABLE[name]
    arity = len(next(iter(table)))

    def call(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop("_builder", None), kwargs.pop("_semantic", None)
        if kwargs or len(args) != arity:
            raise TypeError(f"libdevice.{name} takes {arity} argument{'s' if arity > 1 else ''}, "
                            f"got {len(args) + len(kwargs)}")
        out = extern_elementwise("libdevice", "", list(args), table, True, name=f"libdevice.{name}")
        return semantic.not_equal(out, 0) if name in TO_BOOL else out

    call.__name__ = call.__qualname__ = name
    call.__doc__ = "libdevice " + ", ".join(f"{sym}{tuple(str(t).split('.')[-1] for t in k)}"
                                            for k, (sym, _) in table.items())
    return builtin(call)


FUNCTIONS: dict[str, Callable] = {name: _make(name) for name in TABLE}
globals().update(FUNCTIONS)

__all__ = sorted(FUNCTIONS)
