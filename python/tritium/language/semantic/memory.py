"""`load` and `store`: pointer, mask and `other` checks, broadcasting against
the pointer, cache/eviction choices, and `*i1` memory read as bytes. Block
pointers go to blocks.py."""
from __future__ import annotations

from typing import Any, Sequence

from .. import core
from . import blocks
from ..dtypes import int1, int8, pointer_type
from .casts import cast
from .emit import _fmt_shape, _op, _op_void, _tyname, with_element_ty
from .scalars import to_tensor
from .shapes import broadcast_pair, broadcast_tensors, broadcast_to_shape


_LOAD_CACHE = ("", ".ca", ".cg", ".cv")
_STORE_CACHE = ("", ".wb", ".cg", ".cs", ".wt")
_EVICTION = ("", "evict_last", "evict_first", "evict_normal")


def _choice(value: Any, allowed: Sequence[str], what: str) -> str:
    value = core._unwrap(value)
    value = "" if value is None else value
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{what} {value!r} is not supported; expected one of "
                         f"{', '.join(repr(a) for a in allowed if a)}")
    return value


def _check_mask(mask: "core.tensor") -> None:
    if not mask.type.scalar.is_int1():
        raise TypeError(f"mask must be a boolean tensor, got {mask.type.scalar}")


def _bool_ptr_as_i8(ptr: "core.tensor") -> tuple:
    """Kernels see `*i1` memory as bytes, as in Triton: load/store i8 and convert."""
    elem = ptr.type.scalar.element_ty
    if elem == int1:
        ptr = cast(ptr, pointer_type(int8, ptr.type.scalar.address_space))
        return ptr, int8, True
    return ptr, elem, False


def _block_kind(ptr: Any) -> str | None:
    """"block_pointer" or "tensor_descriptor" for those values (language/blocks.py), else None."""
    return getattr(type(core._unwrap(ptr)), "__tritium_block_kind__", None)


def _not_descriptor(ptr: Any, op: str) -> None:
    if _block_kind(ptr) == "tensor_descriptor":
        raise TypeError(f"tl.{op}: a tensor descriptor is accessed with desc.{op}(offsets, ...), not tl.{op}")


def load(ptr: Any, mask: Any = None, other: Any = None, boundary_check: Any = (), padding_option: Any = "",
         cache_modifier: Any = "", eviction_policy: Any = "", volatile: Any = False) -> "core.tensor":
    cache = _choice(cache_modifier, _LOAD_CACHE, "load cache_modifier")
    eviction = _choice(eviction_policy, _EVICTION, "eviction_policy")
    boundary_check, padding_option = core._unwrap(boundary_check), core._unwrap(padding_option)
    if padding_option not in (None, "", "zero", "nan"):
        raise ValueError(f"padding_option {padding_option!r} is not supported; expected 'zero' or 'nan'")
    _not_descriptor(ptr, "load")
    if _block_kind(ptr) == "block_pointer":
        return blocks.block_load(core._unwrap(ptr), mask, other, boundary_check, padding_option, cache, eviction,
                                 bool(core._unwrap(volatile)))
    ptr = to_tensor(ptr)
    if not ptr.type.scalar.is_ptr():
        raise TypeError(f"tl.load: expected a pointer, got {_tyname(ptr.type)}")
    if boundary_check or padding_option:
        raise ValueError("tl.load: boundary_check and padding_option only apply to block pointers "
                         "(tl.make_block_ptr); use a mask with a tensor of pointers")
    mask = None if core._unwrap(mask) is None else to_tensor(mask)
    other = None if core._unwrap(other) is None else core._unwrap(other)
    if mask is None and other is not None:
        raise ValueError("tl.load: `other` needs a `mask`")
    if not ptr.type.is_block():
        if mask is not None and mask.type.is_block():
            raise ValueError("tl.load: mask cannot be a block when the pointer is a scalar")
        if isinstance(other, core.tensor) and other.type.is_block():
            raise ValueError("tl.load: other cannot be a block when the pointer is a scalar")
    if mask is not None:
        if not mask.type.scalar.is_int1():
            raise TypeError(f"tl.load: mask must be boolean, got {mask.type.scalar}")
        if ptr.type.is_block():
            ptr, mask = broadcast_pair(ptr, mask, "load")
    ptr, elem, was_bool = _bool_ptr_as_i8(ptr)
    if other is not None:
        other = cast(to_tensor(other), elem)
        if ptr.type.is_block():
            ptr, other = broadcast_pair(ptr, other, "load")
            if mask is not None and mask.type.shape != ptr.type.shape:
                mask = broadcast_to_shape(mask, ptr.type.shape, "load")
    operands = [ptr] + ([mask] if mask is not None else []) + ([other] if other is not None else [])
    attrs = {"cache": cache, "eviction": eviction, "volatile": bool(core._unwrap(volatile))}
    ret = _op("load", operands, with_element_ty(ptr.type, elem), attrs)
    return cast(ret, int1) if was_bool else ret


def store(ptr: Any, value: Any, mask: Any = None, boundary_check: Any = (), cache_modifier: Any = "",
          eviction_policy: Any = "") -> None:
    cache = _choice(cache_modifier, _STORE_CACHE, "store cache_modifier")
    eviction = _choice(eviction_policy, _EVICTION, "eviction_policy")
    _not_descriptor(ptr, "store")
    if _block_kind(ptr) == "block_pointer":
        return blocks.block_store(core._unwrap(ptr), value, mask, boundary_check, cache, eviction)
    ptr = to_tensor(ptr)
    if not ptr.type.scalar.is_ptr():
        raise TypeError(f"tl.store: expected a pointer, got {_tyname(ptr.type)}")
    if getattr(ptr.type.scalar, "const", False):
        raise TypeError("tl.store: cannot store through a constant pointer")
    if core._unwrap(boundary_check):
        raise ValueError("tl.store: boundary_check only applies to block pointers (tl.make_block_ptr); "
                         "use a mask with a tensor of pointers")
    value = to_tensor(value)
    mask = None if core._unwrap(mask) is None else to_tensor(mask)
    if not ptr.type.is_block():
        if value.type.is_block():
            raise ValueError("tl.store: value cannot be a block when the pointer is a scalar")
        if mask is not None and mask.type.is_block():
            raise ValueError("tl.store: mask cannot be a block when the pointer is a scalar")
    else:
        ptr_shape = ptr.type.shape
        parts = [ptr, value] + ([mask] if mask is not None else [])
        parts = broadcast_tensors(*parts, opname="store")
        ptr, value = parts[0], parts[1]
        mask = parts[2] if mask is not None else None
        if ptr.type.shape != ptr_shape:
            raise ValueError(f"tl.store: value/mask shape would broadcast the pointer from "
                             f"{_fmt_shape(ptr_shape)} to {_fmt_shape(ptr.type.shape)}")
    if mask is not None:
        _check_mask(mask)
    ptr, elem, _ = _bool_ptr_as_i8(ptr)
    value = cast(value, elem)
    operands = [ptr, value] + ([mask] if mask is not None else [])
    _op_void("store", operands, {"cache": cache, "eviction": eviction})
