"""Block pointers and tensor descriptors: Triton 3.6's argument rules for
`make_block_ptr`, `advance`, block-pointer `load`/`store`,
`make_tensor_descriptor` and the descriptor's `load`, `store`, `atomic_*`,
`gather` and `scatter`, and the block memory ops they emit (docs/ir.md:
`block_load`, `block_store`, `block_atomic`, one op per access so a target
can claim it whole). The value objects live in language/blocks.py; the
rules here take and return their fields."""
from __future__ import annotations

import math
from typing import Any, Sequence

from .. import core
from ..dtypes import bfloat16, block_type, float16, int1, int8, int32, int64, pointer_type
from .casts import cast
from .comparison import where
from .emit import _fmt_shape, _op, _op_void
from .scalars import constant, to_tensor
from .shapes import broadcast_to_shape, check_shape

MAX_DESCRIPTOR_RANK = 5


def _items(x: Any) -> list:
    """A shape/strides/offsets argument: a sequence, or one value (Triton's rule)."""
    x = core._unwrap(x)
    return [core._unwrap(e) for e in x] if isinstance(x, (tuple, list)) else [x]


def _index_scalar(x: Any, ty: Any, what: str) -> "core.tensor":
    """One shape, stride or offset as a scalar of `ty` (i64 shapes and
    strides, i32 offsets and descriptor shapes): a Python int or an integer
    scalar tensor; a 64-bit tensor where 32 bits are expected is an error, as
    in Triton, rather than a silent truncation."""
    x = core._unwrap(x)
    if isinstance(x, bool) or not isinstance(x, (int, core.tensor)):
        raise TypeError(f"{what} must be an integer, got {x!r}")
    if isinstance(x, int):
        bits = ty.primitive_bitwidth
        if not -2 ** (bits - 1) <= x < 2 ** (bits - 1):
            raise ValueError(f"{what} {x} does not fit in {ty}")
        return constant(x, ty)
    if x.type.is_block():
        raise TypeError(f"{what} must be a scalar, got a tensor of shape {_fmt_shape(x.shape)}")
    if not x.dtype.is_int() or x.dtype.is_int1():
        raise TypeError(f"{what} must be an integer scalar, got {x.dtype}")
    if ty == int32 and x.dtype.primitive_bitwidth == 64:
        raise TypeError(f"{what} is {x.dtype}, but block offsets are 32-bit: add .to(tl.int32)")
    return cast(x, ty)


def _block_shape(block_shape: Any, what: str) -> tuple:
    shape = check_shape(_items(block_shape), what)
    block_type(int8, shape)   # the element-count limit
    return shape


def _pointer_base(base: Any, what: str) -> "core.tensor":
    if not isinstance(core._unwrap(base), core.tensor) or base.type.is_block() or not base.type.is_ptr():
        raise TypeError(f"{what}: base must be a scalar pointer (not a block pointer or a tensor), got "
                        f"{base.type if isinstance(base, core.tensor) else type(core._unwrap(base)).__name__}")
    return base


# -- block pointers ---------------------------------------------------------------

def make_block_ptr(base: Any, shape: Any, strides: Any, offsets: Any, block_shape: Any, order: Any) -> dict:
    """The fields of a new block pointer (language/blocks.py builds it)."""
    base = _pointer_base(base, "make_block_ptr")
    if base.type.element_ty == int1:   # *i1 memory is bytes, as for tl.load
        base = cast(base, pointer_type(int8, base.type.address_space))
    block_shape = _block_shape(block_shape, "make_block_ptr block_shape")
    order = _items(order)
    if sorted(order) != list(range(len(order))):
        raise ValueError(f"make_block_ptr: order must be a permutation of 0..{len(order) - 1}, got {order}")
    shape, strides, offsets = _items(shape), _items(strides), _items(offsets)
    if not len(shape) == len(strides) == len(offsets) == len(block_shape) == len(order):
        raise ValueError(f"make_block_ptr: shape, strides, offsets, block_shape and order must have the same "
                         f"length, got {len(shape)}, {len(strides)}, {len(offsets)}, {len(block_shape)} and "
                         f"{len(order)}")
    return {
        "base": base,
        "shape": tuple(_index_scalar(s, int64, f"make_block_ptr shape[{i}]") for i, s in enumerate(shape)),
        "strides": tuple(_index_scalar(s, int64, f"make_block_ptr strides[{i}]") for i, s in enumerate(strides)),
        "offsets": tuple(_index_scalar(s, int32, f"make_block_ptr offsets[{i}]") for i, s in enumerate(offsets)),
        "block_shape": core.constexpr(block_shape),
        "order": core.constexpr(tuple(order)),
    }


def advance(offsets: Sequence["core.tensor"], deltas: Any) -> tuple:
    """The offsets of a block pointer moved by `deltas` (one per dimension)."""
    deltas = _items(deltas)
    if len(deltas) != len(offsets):
        raise ValueError(f"advance: the block pointer has {len(offsets)} dimensions, got {len(deltas)} offsets")
    out = []
    for i, (o, d) in enumerate(zip(offsets, deltas)):
        if isinstance(d, int) and not isinstance(d, bool) and d == 0:
            out.append(o)   # no op, so a loop never carries an unchanged offset
            continue
        out.append(_op("add", [o, _index_scalar(d, int32, f"advance offsets[{i}]")], int32))
    return tuple(out)


def _boundary_check(boundary_check: Any, rank: int) -> list:
    dims = _items(boundary_check) if core._unwrap(boundary_check) not in (None, ()) else []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < rank:
            raise ValueError(f"boundary_check: {d!r} is not a dimension of a rank-{rank} block")
    if len(set(dims)) != len(dims):
        raise ValueError(f"boundary_check: duplicate dimension in {dims}")
    return sorted(dims)


def _padding_value(elem: Any, padding: Any) -> "core.tensor | None":
    """The `other` operand: 0, NaN, a run-time choice between them (an i1
    tensor: a host descriptor's flag), or None for Triton's undefined ""."""
    padding = core._unwrap(padding)
    if isinstance(padding, core.tensor):
        if elem.is_int():
            return constant(0, elem)
        return where(padding, constant(math.nan, elem), constant(0, elem))
    if padding in (None, ""):
        return None
    return constant(math.nan if padding == "nan" and not elem.is_int() else 0, elem)


def _operands(bp: Any, offsets: Sequence["core.tensor"]) -> list:
    return [bp.base, *bp.shape, *bp.strides, *offsets]


def block_load(bp: Any, mask: Any, other: Any, boundary_check: Any, padding: Any, cache: str, eviction: str,
               volatile: bool) -> "core.tensor":
    if core._unwrap(mask) is not None or core._unwrap(other) is not None:
        raise ValueError("tl.load: `mask` and `other` cannot be given with a block pointer; "
                         "use boundary_check and padding_option")
    elem = bp.base.type.element_ty
    padding = core._unwrap(padding)
    if elem.is_int() and padding == "nan":
        raise ValueError("tl.load: padding_option 'nan' is not supported for integer block pointers")
    shape = tuple(core._unwrap(bp.block_shape))
    dims = _boundary_check(boundary_check, len(shape))
    pad = _padding_value(elem, padding)
    attrs = {"boundary_check": dims, "order": list(core._unwrap(bp.order)), "descriptor": False,
             "cache": cache, "eviction": eviction, "volatile": bool(volatile)}
    return _op("block_load", _operands(bp, bp.offsets) + ([pad] if pad is not None else []),
               block_type(elem, shape), attrs)


def block_store(bp: Any, value: Any, mask: Any, boundary_check: Any, cache: str, eviction: str) -> None:
    if core._unwrap(mask) is not None:
        raise ValueError("tl.store: `mask` cannot be given with a block pointer; use boundary_check")
    elem = bp.base.type.element_ty
    shape = tuple(core._unwrap(bp.block_shape))
    value = to_tensor(value)
    if not value.type.is_block():
        value = broadcast_to_shape(value, shape, "store")
    if tuple(value.shape) != shape:
        raise ValueError(f"tl.store: block shape {_fmt_shape(shape)} and value shape {_fmt_shape(value.shape)} "
                         "differ")
    if value.dtype != elem:
        raise TypeError(f"tl.store: the block pointer's element type is {elem} but the value's is {value.dtype}; "
                        "cast the value with .to()")
    attrs = {"boundary_check": _boundary_check(boundary_check, len(shape)),
             "order": list(core._unwrap(bp.order)), "descriptor": False, "cache": cache, "eviction": eviction}
    _op_void("block_store", _operands(bp, bp.offsets) + [value], attrs)


# -- tensor descriptors -------------------------------------------------------------

def make_tensor_descriptor(base: Any, shape: Any, strides: Any, block_shape: Any, padding: Any) -> dict:
    """The fields of a device-side tensor descriptor (language/blocks.py builds it)."""
    base = _pointer_base(base, "make_tensor_descriptor")
    shape, strides = _items(shape), _items(strides)
    ndim = len(shape)
    if not 1 <= ndim <= MAX_DESCRIPTOR_RANK:
        raise ValueError(f"make_tensor_descriptor: expected 1 <= ndim <= {MAX_DESCRIPTOR_RANK}, got {ndim} dimensions")
    if len(strides) != ndim:
        raise ValueError(f"make_tensor_descriptor: expected {ndim} strides, got {len(strides)}")
    block = _items(block_shape)
    if len(block) != ndim:
        raise ValueError(f"make_tensor_descriptor: expected block_shape to have {ndim} dimensions, got {len(block)}")
    block = _block_shape(block, "make_tensor_descriptor block_shape")
    elem = base.type.element_ty
    row_bytes = block[-1] * elem.primitive_bitwidth // 8
    if row_bytes < 16:
        raise ValueError(f"make_tensor_descriptor: the block's last dimension must span at least 16 bytes, got "
                         f"{block[-1]} * {elem.primitive_bitwidth // 8} = {row_bytes} bytes")
    if not (isinstance(strides[-1], int) and strides[-1] == 1):
        raise ValueError(f"make_tensor_descriptor: the last dimension must be contiguous (a constexpr stride of "
                         f"1), got {strides[-1]!r}")
    padding = core._unwrap(padding)
    if padding not in ("zero", "nan"):
        raise ValueError(f"make_tensor_descriptor: padding_option must be 'zero' or 'nan', got {padding!r}")
    if elem.is_int() and padding == "nan":
        raise ValueError("make_tensor_descriptor: padding_option 'nan' is not supported for integer blocks")
    return descriptor_fields(
        base,
        [_index_scalar(s, int32, f"make_tensor_descriptor shape[{i}]") for i, s in enumerate(shape)],
        [_index_scalar(s, int64, f"make_tensor_descriptor strides[{i}]") for i, s in enumerate(strides)],
        block, core.constexpr(padding))


def descriptor_fields(base: "core.tensor", shape: list, strides: list, block: tuple, padding: Any) -> dict:
    """A descriptor's fields; also how a host TensorDescriptor argument
    enters a kernel (its padding is then a run-time i1 flag, "nan" if true)."""
    return {"base": base, "shape": tuple(shape), "strides": tuple(strides),
            "block_shape": core.constexpr(tuple(block)), "padding": padding}


def _descriptor_offsets(desc: Any, offsets: Any, what: str) -> list:
    offsets = _items(offsets)
    ndim = len(core._unwrap(desc.block_shape))
    if len(offsets) != ndim:
        raise ValueError(f"{what}: expected {ndim} offsets, got {len(offsets)}")
    return [_index_scalar(o, int32, f"{what} offsets[{i}]") for i, o in enumerate(offsets)]


def _descriptor_attrs(ndim: int) -> dict:
    # a descriptor's accesses are bounds-checked on every dimension; rows are
    # contiguous (the last stride is 1), so the order is the reverse one
    return {"boundary_check": list(range(ndim)), "order": list(range(ndim))[::-1], "descriptor": True}


def _store_value(desc: Any, value: Any, shape: tuple, what: str) -> "core.tensor":
    value = to_tensor(value)
    if tuple(value.shape) != tuple(shape):
        raise ValueError(f"{what}: the value's shape {_fmt_shape(value.shape)} is not the block's "
                         f"{_fmt_shape(shape)}")
    return cast(value, desc.base.type.element_ty)   # implicit, as in Triton


def descriptor_load(desc: Any, offsets: Any) -> "core.tensor":
    offs = _descriptor_offsets(desc, offsets, "descriptor load")
    elem = desc.base.type.element_ty
    shape = tuple(core._unwrap(desc.block_shape))
    attrs = {**_descriptor_attrs(len(shape)), "cache": "", "eviction": "", "volatile": False}
    return _op("block_load", _operands(desc, offs) + [_padding_value(elem, desc.padding)],
               block_type(elem, shape), attrs)


def descriptor_store(desc: Any, offsets: Any, value: Any) -> None:
    offs = _descriptor_offsets(desc, offsets, "descriptor store")
    shape = tuple(core._unwrap(desc.block_shape))
    value = _store_value(desc, value, shape, "descriptor store")
    _op_void("block_store", _operands(desc, offs) + [value],
             {**_descriptor_attrs(len(shape)), "cache": "", "eviction": ""})


# element types each descriptor atomic takes (Triton 3.6's lists)
_ATOMIC_DTYPES = {
    "add": {"uint32", "int32", "uint64", "fp32", "fp16", "bf16"},
    "min": {"uint32", "int32", "uint64", "int64", "fp16", "bf16"},
    "max": {"uint32", "int32", "uint64", "int64", "fp16", "bf16"},
    "and": {"uint32", "int32", "uint64", "int64"},
    "or": {"uint32", "int32", "uint64", "int64"},
    "xor": {"uint32", "int32", "uint64", "int64"},
}


def descriptor_atomic(kind: str, desc: Any, offsets: Any, value: Any) -> None:
    what = f"descriptor atomic_{kind}"
    offs = _descriptor_offsets(desc, offsets, what)
    shape = tuple(core._unwrap(desc.block_shape))
    value = _store_value(desc, value, shape, what)
    elem = desc.base.type.element_ty
    if elem.name not in _ATOMIC_DTYPES[kind]:
        raise TypeError(f"{what}: unsupported element type {elem}")
    if kind in ("min", "max") and elem in (float16, bfloat16):
        # Triton does these only through TMA reductions (sm_90), which
        # tritium does not emit yet; the fallback atomics have no f16 min/max
        raise TypeError(f"{what} of {elem} needs TMA reductions (sm_90), which tritium does not lower yet")
    _op_void("block_atomic", _operands(desc, offs) + [value],
             {**_descriptor_attrs(len(shape)), "kind": kind, "sem": "release", "scope": "gpu"})


def _gather_checks(desc: Any, x_offsets: Any, what: str) -> "core.tensor":
    shape = tuple(core._unwrap(desc.block_shape))
    if len(shape) != 2 or shape[0] != 1:
        raise ValueError(f"{what}: the descriptor's block must be 2-D with one row, got {_fmt_shape(shape)}")
    x_offsets = to_tensor(x_offsets)
    if len(x_offsets.shape) != 1:
        raise ValueError(f"{what}: x_offsets must be 1-D, got shape {_fmt_shape(x_offsets.shape)}")
    if x_offsets.shape[0] < 8:
        raise ValueError(f"{what}: needs at least 8 rows, got {x_offsets.shape[0]}")
    if not x_offsets.dtype.is_int() or x_offsets.dtype.primitive_bitwidth != 32:
        raise TypeError(f"{what}: x_offsets must be int32, got {x_offsets.dtype}")
    bits = desc.base.type.element_ty.primitive_bitwidth
    min_cols = 32 // bits * 8
    if shape[1] < min_cols:
        raise ValueError(f"{what} of {desc.base.type.element_ty} needs at least {min_cols} columns, got {shape[1]}")
    return cast(x_offsets, int32)


def descriptor_gather(desc: Any, x_offsets: Any, y_offset: Any) -> "core.tensor":
    rows = _gather_checks(desc, x_offsets, "descriptor gather")
    y = _index_scalar(y_offset, int32, "descriptor gather y_offset")
    elem = desc.base.type.element_ty
    shape = (rows.shape[0], core._unwrap(desc.block_shape)[1])
    attrs = {**_descriptor_attrs(2), "cache": "", "eviction": "", "volatile": False}
    return _op("block_load", _operands(desc, [rows, y]) + [_padding_value(elem, desc.padding)],
               block_type(elem, shape), attrs)


def descriptor_scatter(desc: Any, value: Any, x_offsets: Any, y_offset: Any) -> None:
    rows = _gather_checks(desc, x_offsets, "descriptor scatter")
    y = _index_scalar(y_offset, int32, "descriptor scatter y_offset")
    shape = (rows.shape[0], core._unwrap(desc.block_shape)[1])
    value = _store_value(desc, value, shape, "descriptor scatter")
    _op_void("block_store", _operands(desc, [rows, y]) + [value],
             {**_descriptor_attrs(2), "cache": "", "eviction": ""})


__all__ = ["advance", "block_load", "block_store", "descriptor_atomic", "descriptor_fields", "descriptor_gather",
           "descriptor_load", "descriptor_scatter", "descriptor_store", "make_block_ptr", "make_tensor_descriptor"]
