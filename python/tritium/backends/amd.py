"""AMD specialization rules: the shared properties plus `pointer_range_32`,
true when a tensor's storage from the pointer onward fits a signed 32-bit byte
offset, which allows buffer loads/stores with 32-bit offsets."""
from __future__ import annotations

from typing import Any

from .base import POINTER, Backend, Property, shared_properties, tensor_address

_I32_MAX = 2 ** 31 - 1


def storage_extent(t: Any) -> int | None:
    """Bytes addressable from the tensor's pointer to the end of its storage,
    or None when the storage cannot be measured."""
    storage = getattr(t, "untyped_storage", None)
    if storage is not None:                                   # torch
        s = storage()
        return int(s.data_ptr()) + int(s.nbytes()) - tensor_address(t)
    if getattr(t, "__array_interface__", None) is not None and hasattr(t, "base"):
        # numpy: walk views to the array that owns the buffer
        root = t
        while hasattr(getattr(root, "base", None), "__array_interface__"):
            root = root.base
        if root.base is not None:        # memory owned by a foreign buffer object: extent unknown
            return None
        return int(root.__array_interface__["data"][0]) + int(root.nbytes) - tensor_address(t)
    return None


def fits_i32_offset(t: Any) -> bool:
    n = storage_extent(t)
    return n is not None and 0 <= n <= _I32_MAX


def pointer_range_32() -> Property:
    return Property("pointer_range_32", frozenset((POINTER,)), fits_i32_offset, ("pointer_range", 32))


def backend() -> Backend:
    return Backend("hip", shared_properties() + [pointer_range_32()])
