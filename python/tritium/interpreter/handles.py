"""The interpreter's values: NumPy arrays tagged with their kernel scalar type
(`KArray`, with the program axis in front), made by `wrap` and read back by
`ktype_of`."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..language.dtypes import (dtype, float16, float32, float64, int1, int8, int16, int32, int64, uint8, uint16,
                               uint32, uint64)
from . import floats
from .errors import InterpreterError


class KArray(np.ndarray):
    """A NumPy array that remembers the kernel scalar type it holds and, for
    clients, where its values came from (`origin`: the addresses a load read,
    or the Location of the dot that computed it)."""
    ktype: dtype | None = None
    origin: Any = None

    def __array_finalize__(self, obj: Any) -> None:
        self.ktype = getattr(obj, "ktype", None)

    def __repr__(self) -> str:
        # one program's value reads as the value itself (print and pdb in kernels)
        arr = np.asarray(self)
        one = arr[0] if arr.ndim and arr.shape[0] == 1 else arr
        return str(one.item()) if one.ndim == 0 else np.array2string(one)

    __str__ = __repr__


_NP_TO_KTYPE = {
    np.dtype(np.bool_): int1, np.dtype(np.int8): int8, np.dtype(np.int16): int16, np.dtype(np.int32): int32,
    np.dtype(np.int64): int64, np.dtype(np.uint8): uint8, np.dtype(np.uint16): uint16,
    np.dtype(np.uint32): uint32, np.dtype(np.uint64): uint64, np.dtype(np.float16): float16,
    np.dtype(np.float32): float32, np.dtype(np.float64): float64,
}


def wrap(value: Any, ty: dtype) -> KArray:
    """`value` as a handle of kernel type `ty` (scalar or block), in its storage dtype."""
    sca = ty.scalar
    arr = np.asarray(value)
    if floats.needs_rounding(sca):
        arr = floats.round_to(arr, sca.name).astype(np.float32)
    else:
        arr = arr.astype(floats.storage_dtype(sca), copy=False)
    out = arr.view(KArray)
    out.ktype = sca
    return out


def ktype_of(h: Any) -> dtype:
    """A handle's kernel scalar type (inferred from the NumPy dtype if untagged)."""
    t = getattr(h, "ktype", None)
    if t is not None:
        return t
    try:
        return _NP_TO_KTYPE[np.asarray(h).dtype]
    except KeyError:
        raise InterpreterError(f"value of NumPy dtype {np.asarray(h).dtype} is not a kernel value") from None
