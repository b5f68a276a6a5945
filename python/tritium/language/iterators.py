"""`tl.range` and `tl.static_range`: loop markers the frontend recognises.

The compiler never iterates them (it emits a `for` op, or unrolls a
static_range); the interpreter does, so both are plain iterables here. A
`tl.range` yields scalar tensors typed like the compiler's induction variable,
so promotion inside the loop body matches compiled code.
"""
from __future__ import annotations

import builtins as _py
from typing import Any, Iterator

from . import semantic
from .builder import current_builder
from .core import _unwrap, tensor


def _bounds(arg1: Any, arg2: Any, step: Any) -> tuple:
    if arg2 is None:
        start, end = 0, arg1
    else:
        start, end = arg1, arg2
    return start, end, 1 if step is None else step


class static_range:
    """A loop the compiler unrolls; bounds must be constexpr ints."""

    def __init__(self, arg1: Any, arg2: Any = None, step: Any = None):
        start, end, step = (_unwrap(v) for v in _bounds(_unwrap(arg1), _unwrap(arg2), _unwrap(step)))
        for name, v in (("start", start), ("end", end), ("step", step)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"static_range: {name} must be a constexpr int, got {v!r}")
        if step == 0:
            raise ValueError("static_range: step must not be zero")
        self.start, self.end, self.step = start, end, step

    def __iter__(self) -> Iterator[int]:
        return iter(_py.range(self.start, self.end, self.step))


class range:
    """A device loop `for i in tl.range(start, end, step, num_stages=...)`.

    The scheduling options are recorded for the compiler; the interpreter ignores them."""

    def __init__(self, arg1: Any, arg2: Any = None, step: Any = None, num_stages: Any = None,
                 loop_unroll_factor: Any = None, disallow_acc_multi_buffer: Any = False, flatten: Any = False,
                 warp_specialize: Any = False, disable_licm: Any = False):
        self.start, self.end, self.step = (_unwrap(v) for v in _bounds(arg1, _unwrap(arg2), _unwrap(step)))
        if not isinstance(self.step, tensor) and self.step == 0:
            raise ValueError("tl.range: step must not be zero")
        self.num_stages = _unwrap(num_stages)
        self.loop_unroll_factor = _unwrap(loop_unroll_factor)
        self.disallow_acc_multi_buffer = bool(_unwrap(disallow_acc_multi_buffer))
        self.flatten = bool(_unwrap(flatten))
        self.warp_specialize = bool(_unwrap(warp_specialize))
        self.disable_licm = bool(_unwrap(disable_licm))

    def iv_dtype(self):
        """The induction variable's type: the integer promotion of the bounds' types."""
        ty = None
        for v in (self.start, self.end, self.step):
            t = v.dtype if isinstance(v, tensor) else semantic.literal_type(v)
            if not t.is_int():
                raise TypeError(f"tl.range bounds must be integers, got {t}")
            ty = t if ty is None else semantic.integer_promote(ty, t)
        return ty

    def __iter__(self) -> Iterator[tensor]:
        if not hasattr(current_builder(), "loop"):
            raise TypeError("tl.range is a loop for the compiler; it can only be iterated by the interpreter")
        # the builder decides: programs of a batch may start or step differently
        return current_builder().loop(self.start, self.end, self.step, self.iv_dtype())
