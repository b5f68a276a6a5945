"""The seam between the language's semantics and whatever executes them.

`language/semantic/` decides types, shapes and promotions once, then asks the
*current builder* to create ops named exactly as in the IR op table
(docs/ir.md). Two builders implement this protocol:

- `tritium.compiler.ir.IRBuilder` encodes each op into the binary tile IR
  (handles are SSA value numbers);
- `tritium.interpreter.builder.NumpyBuilder` executes each op at once
  (handles are NumPy arrays, or NumPy scalars for scalar types).

Because both are driven by the same semantic layer, compiled code and the
interpreter cannot disagree about types, promotion or shapes.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Protocol, Sequence

from .dtypes import dtype

Handle = Any


class Builder(Protocol):
    #: True for the NumPy interpreter; lets builtins that only make sense at
    #: compile time (static_print's timing, hints) or only at run time decide.
    is_interpreter: bool
    #: False drops `device_assert` (Triton keeps asserts only in debug mode).
    enable_assertions: bool

    def set_loc(self, file: str, line: int, col: int) -> None:
        """Location attached to the ops created from now on."""

    def create(self, op: str, operands: Sequence[Handle], result_types: Sequence[dtype],
               attrs: dict[str, Any] | None = None) -> list[Handle]:
        """Create (or execute) one op without regions; returns its results.

        `result_types` are scalar or block dtypes; attrs values are int, float,
        bool, str or a tuple/list of ints, keyed as in docs/ir.md."""

    def create_combine(self, op: str, operands: Sequence[Handle], result_types: Sequence[dtype],
                       attrs: dict[str, Any], elem_types: Sequence[dtype],
                       combine: Callable[[list[Handle], list[Handle]], list[Handle]]) -> list[Handle]:
        """`reduce` or `scan`: `combine(accs, news)` maps handles of the
        element types to handles of the element types (the region body)."""


_state = threading.local()


def current_builder() -> Builder:
    b = getattr(_state, "builder", None)
    if b is None:
        raise RuntimeError(
            "triton.language functions can only be called inside a @jit kernel "
            "(while compiling it, or running it in the interpreter)")
    return b


@contextlib.contextmanager
def using_builder(builder: Builder):
    prev = getattr(_state, "builder", None)
    _state.builder = builder
    try:
        yield builder
    finally:
        _state.builder = prev
