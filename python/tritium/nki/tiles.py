"""Tiles and HBM tensors of the NKI frontend, over the interpreter's handles.

An `HbmTensor` is a kernel argument: a base address, a shape and strides.
Indexing it (`t[i_p, i_f]`, `t[0:128, k:k + 512]`) gives an `HbmView`: one
address per element of the indexed tile, computed through the builder, so
`nl.load`/`nl.store` of a view are the interpreter's ordinary `load`/`store`
and clients see ordinary memory events. A `Tile` is an on-chip value (SBUF or
PSUM) wrapping a language tensor: arithmetic follows the language's
promotion rules, and a tile made by `nl.ndarray`/`nl.zeros` can be written
through indexing (`acc[...] += nl.matmul(a, b)`), as NKI buffers can.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..interpreter.builder import wrap
from ..interpreter.floats import memory_itemsize
from ..language import core, dtypes, semantic
from ..language.builder import current_builder

PMAX = 128   # nl.tile_size.pmax: the partition dimension's largest size

_NP_DTYPES = {np.dtype(np.bool_): dtypes.int1, np.dtype(np.int8): dtypes.int8, np.dtype(np.int16): dtypes.int16,
              np.dtype(np.int32): dtypes.int32, np.dtype(np.int64): dtypes.int64, np.dtype(np.uint8): dtypes.uint8,
              np.dtype(np.uint16): dtypes.uint16, np.dtype(np.uint32): dtypes.uint32,
              np.dtype(np.float16): dtypes.float16, np.dtype(np.float32): dtypes.float32}


def to_dtype(dtype: Any) -> Any:
    """An NKI dtype (nl.float32, ...) or a NumPy one, as a tritium dtype."""
    if isinstance(dtype, dtypes.dtype):
        return dtype
    try:
        return _NP_DTYPES[np.dtype(dtype)]
    except (TypeError, KeyError):
        raise TypeError(f"not a dtype NKI kernels can use: {dtype!r}") from None


class Tile(core.tensor):
    """An on-chip tile: a language tensor (so the semantic layer takes it as
    one) whose operators return tiles, indexed and written the NKI way."""

    def __init__(self, t: core.tensor, buffer: str = "sbuf") -> None:
        super().__init__(t.handle, t.type)
        self.buffer = buffer

    @property
    def shape(self) -> tuple:
        return tuple(self.type.shape) if self.type.is_block() else ()

    def astype(self, dtype: Any) -> "Tile":
        return Tile(semantic.cast(self, to_dtype(dtype)))

    def __repr__(self) -> str:
        return f"Tile({self.handle!r}, shape={self.shape}, dtype={self.dtype}, buffer={self.buffer})"

    def __getitem__(self, key: Any) -> "Tile":
        if any(k is None for k in (key if isinstance(key, tuple) else (key,))):
            return Tile(core.tensor.__getitem__(self, key), self.buffer)   # `[:, None]`: a new axis
        index, shape = _tile_index(key, self.shape)
        out = np.asarray(self.handle)[(slice(None), *index)]
        return Tile(_tensor(out, self.dtype, shape), self.buffer)

    def __setitem__(self, key: Any, value: Any) -> None:
        index, shape = _tile_index(key, self.shape)
        vals = np.asarray(semantic.cast(semantic.to_tensor(value), self.dtype).handle)
        handle = np.asarray(self.handle)
        n = max(handle.shape[0], vals.shape[0])
        vals = vals.reshape(vals.shape[0], *([1] * (len(shape) - (vals.ndim - 1))), *vals.shape[1:])
        updated = np.array(np.broadcast_to(handle, (n, *self.shape)))
        updated[(slice(None), *index)] = np.broadcast_to(vals, (n, *shape))
        self.handle = _tensor(updated, self.dtype, self.shape).handle


def _tile_op(name: str):
    op = getattr(core.tensor, name)

    def method(self: Tile, *other: Any) -> Tile:
        return Tile(op(self, *other))
    method.__name__ = name
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__and__", "__rand__", "__or__",
              "__ror__", "__xor__", "__mod__", "__floordiv__", "__neg__", "__invert__"):
    setattr(Tile, _name, _tile_op(_name))
Tile.__hash__ = object.__hash__


def _tensor(values: np.ndarray, dtype: Any, shape: tuple) -> core.tensor:
    ty = dtypes.block_type(dtype, list(shape)) if shape else dtype
    return core.tensor(wrap(values, ty), ty)


def _index_values(v: Any) -> np.ndarray:
    """An index tile's values with the program axis in front, or a Python int's."""
    if isinstance(v, core.tensor):
        return np.asarray(v.handle).astype(np.int64)
    return np.array([int(core._unwrap(v))], np.int64)


def _slice_indices(k: slice, size: int) -> np.ndarray:
    """(n, length) element indices of a slice; its bounds may be per-program
    tiles (`t[m * 128:(m + 1) * 128]`) as long as every program's slice has
    the same length."""
    if not any(isinstance(b, core.tensor) for b in (k.start, k.stop)):
        return np.arange(*slice(*(core._unwrap(b) for b in (k.start, k.stop, k.step))).indices(size),
                         dtype=np.int64)[None]
    step = int(core._unwrap(k.step) or 1)
    start = _index_values(0 if k.start is None else k.start)
    stop = _index_values(size if k.stop is None else k.stop)
    lengths = np.broadcast_to(-(-(stop - start) // step), np.broadcast(start, stop).shape)
    if (lengths != lengths.reshape(-1)[0]).any():
        raise IndexError("a slice whose length differs between programs")
    return start.reshape(-1, 1) + step * np.arange(max(0, int(lengths.reshape(-1)[0])), dtype=np.int64)


def normalize_key(key: Any, shape: tuple) -> tuple[list[np.ndarray], tuple]:
    """Index arrays (program axis first, broadcastable to (n, *out_shape)), one
    per indexed dim, and the tile shape they address. A slice becomes an
    arange along its own output axis; index tiles broadcast together on the
    output axes they span; an int drops its dim."""
    if not isinstance(key, tuple):
        key = (key,)
    if any(k is Ellipsis for k in key):
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (len(shape) - len(key) + 1) + key[i + 1:]
    key = key + (slice(None),) * (len(shape) - len(key))
    if len(key) != len(shape):
        raise IndexError(f"{len(key)} indices for a tensor of rank {len(shape)}")
    tiles = [k for k in key if isinstance(k, core.tensor) and k.type.is_block()]
    tile_rank = max((len(t.type.shape) for t in tiles), default=0)
    slice_dims = [d for d, k in enumerate(key) if isinstance(k, slice)]
    out_rank = tile_rank if tiles else len(slice_dims)
    if tiles and slice_dims and len(key) != tile_rank:
        raise IndexError("mix slices with index tiles only when each dimension gets one (a slice or a tile)")
    arrays, out_shape = [], [1] * out_rank
    for d, k in enumerate(key):
        if isinstance(k, slice):
            idx = _slice_indices(k, shape[d])
            axis = d if tiles else slice_dims.index(d)
            view = [1] * out_rank
            view[axis] = idx.shape[1]
            out_shape[axis] = max(out_shape[axis], idx.shape[1])
            arrays.append(idx.reshape(idx.shape[0], *view))
        else:
            vals = _index_values(k)
            vals = vals.reshape(vals.shape[0], *([1] * (out_rank - (vals.ndim - 1))), *vals.shape[1:])
            for a, s in enumerate(vals.shape[1:]):
                if s != 1:
                    out_shape[a] = s if out_shape[a] == 1 else out_shape[a]
            arrays.append(vals)
    return arrays, tuple(out_shape)


def _tile_index(key: Any, shape: tuple) -> tuple[tuple, tuple]:
    arrays, out_shape = normalize_key(key, shape)
    n = max(a.shape[0] for a in arrays) if arrays else 1
    if n > 1:
        raise IndexError("a tile indexed by per-program index tiles: index it with the same tile in every "
                         "program, or load from HBM instead")
    return tuple(np.broadcast_to(a[0], out_shape) for a in arrays), out_shape


class HbmView:
    """Addresses of an indexed HBM tensor: `ptrs` (a pointer tile) and shape."""

    def __init__(self, tensor: "HbmTensor", ptrs: core.tensor, shape: tuple) -> None:
        self.tensor = tensor
        self.ptrs = ptrs
        self.shape = shape


class HbmTensor:
    """A tensor argument in device memory (HBM)."""

    def __init__(self, name: str, ptr: core.tensor, shape: tuple, strides: tuple, dtype: Any) -> None:
        self.name = name
        self.ptr = ptr
        self.shape = tuple(shape)
        self.strides = tuple(strides)
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"HbmTensor({self.name}, shape={self.shape}, dtype={self.dtype})"

    def full(self) -> HbmView:
        return self[(slice(None),) * len(self.shape)]

    def __getitem__(self, key: Any) -> HbmView:
        arrays, shape = normalize_key(key, self.shape)
        n = max([a.shape[0] for a in arrays] + [1])
        offsets = np.zeros((n, *shape), np.int64)
        for a, stride in zip(arrays, self.strides):
            offsets = offsets + a * stride
        base = np.asarray(self.ptr.handle).reshape(-1, *([1] * len(shape)))
        itemsize = _itemsize(self.dtype)
        addresses = base + offsets * itemsize
        ty = dtypes.block_type(self.ptr.dtype, list(shape)) if shape else self.ptr.dtype
        current_builder()   # inside a launch
        return HbmView(self, core.tensor(wrap(addresses, ty), ty), shape)


def _itemsize(dtype: Any) -> int:
    return memory_itemsize(dtype)
