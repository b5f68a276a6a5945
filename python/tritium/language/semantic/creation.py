"""Values made from nothing: program ids, `arange` and `full`."""
from __future__ import annotations

from typing import Any, Sequence

from .. import core
from ..dtypes import block_type, dtype, int32
from .casts import cast
from .emit import _op
from .scalars import constant
from .shapes import broadcast_to_shape, check_shape, reshape, splat


def program_id(axis: int) -> "core.tensor":
    if not isinstance(axis, int) or isinstance(axis, bool) or axis not in (0, 1, 2):
        raise ValueError(f"program_id axis must be 0, 1 or 2, got {axis!r}")
    return _op("program_id", [], int32, {"axis": axis})


def num_programs(axis: int) -> "core.tensor":
    if not isinstance(axis, int) or isinstance(axis, bool) or axis not in (0, 1, 2):
        raise ValueError(f"num_programs axis must be 0, 1 or 2, got {axis!r}")
    return _op("num_programs", [], int32, {"axis": axis})


def arange(start: Any, end: Any) -> "core.tensor":
    start, end = core._unwrap(start), core._unwrap(end)
    if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool) or isinstance(end, bool):
        raise TypeError("tl.arange: start and end must be constexpr ints")
    if not (-2 ** 31 <= start < 2 ** 31 and -2 ** 31 <= end < 2 ** 31):
        raise ValueError(f"tl.arange: range [{start}, {end}) must fit in int32")
    if end <= start:
        raise ValueError(f"tl.arange: end ({end}) must be greater than start ({start})")
    n = end - start
    if n & (n - 1):
        raise ValueError(f"tl.arange: range length {n} is not a power of two")
    return _op("arange", [], block_type(int32, [n]), {"start": start, "end": end})


def full(shape: Sequence[Any], value: Any, dt: dtype) -> "core.tensor":
    shape = check_shape(shape, "full")
    value = core._unwrap(value)
    if not isinstance(dt, dtype):
        raise TypeError(f"full: dtype must be a tl.dtype, got {dt!r}")
    if isinstance(value, core.tensor):
        if value.type.is_block():
            if value.type.numel != 1:
                raise ValueError("full: value must be a scalar")
            if not shape:
                raise ValueError("full: a 1-element block cannot become a 0-d value; use tl.sum")
            value = reshape(value, (1,) * len(shape))
        value = cast(value, dt)
        if value.type.is_block():
            return broadcast_to_shape(value, shape, "full")
        return splat(value, shape)
    return constant(value, block_type(dt, shape) if shape else dt)
