"""`nki.language` (import as `nl`): kernels in the style of AWS Neuron's NKI,
run by tritium's interpreter. Index tiles come from `nl.arange`/`nl.mgrid`
and the program ids; `nl.load`/`nl.store` take an HBM tensor indexed with
NumPy-style slices or index tiles, and a `mask=`; tiles compute with the
elementwise set, `nl.matmul` and reductions. Everything runs through the
interpreter's builder, so loads, stores, dots and reductions reach clients as
the same events a Triton kernel's do.

The surface is NKI's, the semantics the interpreter's: tiles are values
with a shape and dtype; `nl.sbuf`/`nl.psum` only label them; loops run
in order whatever the iterator.
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import language as tl
from ..language import core, dtypes, semantic
from .tiles import PMAX, HbmTensor, HbmView, Tile, to_dtype

# -- dtypes and buffers ---------------------------------------------------------
bool_ = dtypes.int1
int8, int16, int32, int64 = dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64
uint8, uint16, uint32 = dtypes.uint8, dtypes.uint16, dtypes.uint32
float16, bfloat16, float32 = dtypes.float16, dtypes.bfloat16, dtypes.float32
float8_e4m3, float8_e5m2 = dtypes.float8e4nv, dtypes.float8e5

sbuf, psum, hbm, shared_hbm = "sbuf", "psum", "hbm", "shared_hbm"


class tile_size:
    pmax = PMAX                     # partition dimension of a tile
    psum_fmax = 2048 // 4           # free dimension of a PSUM tile (fp32)
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512


# -- indices and programs -------------------------------------------------------------
def program_id(axis: int) -> Tile:
    return Tile(tl.program_id(axis))


def num_programs(axis: int) -> Tile:
    return Tile(tl.num_programs(axis))


def arange(start: int, stop: int | None = None) -> Tile:
    """An index tile: start..stop-1 (one dimension; `[:, None]`/`[None, :]` place it)."""
    if stop is None:
        start, stop = 0, start
    return Tile(semantic.add(tl.arange(0, stop - start), start) if start else tl.arange(0, stop - start))


class _MGrid:
    """`nl.mgrid[0:128, 0:512]`: one index tile per dimension, shaped to broadcast together."""

    def __getitem__(self, key: Any) -> tuple:
        key = key if isinstance(key, tuple) else (key,)
        out = []
        for d, k in enumerate(key):
            t = arange(k.start or 0, k.stop)
            for axis in range(len(key)):
                if axis != d:
                    t = semantic.expand_dims(t, axis)
            out.append(Tile(t))
        return tuple(out)


mgrid = _MGrid()


def affine_range(start: int, stop: int | None = None, step: int = 1) -> range:
    """Iterations with no loop-carried dependency (run in order here)."""
    return builtins.range(*((0, start) if stop is None else (start, stop)), step)


sequential_range = affine_range
static_range = affine_range


# -- memory -------------------------------------------------------------------------
def _view(dst: Any) -> HbmView:
    if isinstance(dst, HbmTensor):
        return dst.full()
    if isinstance(dst, HbmView):
        return dst
    raise TypeError(f"expected an HBM tensor or an indexed one (t[i_p, i_f]), got {type(dst).__name__}")


def _check_partition(shape: tuple, what: str) -> None:
    if shape and shape[0] > PMAX:
        raise ValueError(f"{what}: partition dimension {shape[0]} exceeds nl.tile_size.pmax ({PMAX})")


def load(src: Any, mask: Any = None, dtype: Any = None, **kwargs: Any) -> Tile:
    """HBM to SBUF: the indexed elements of `src` (masked-off ones read as 0)."""
    view = _view(src)
    _check_partition(view.shape, "nl.load")
    other = None if mask is None else 0
    t = tl.load(view.ptrs, mask=mask, other=other)
    return Tile(semantic.cast(t, to_dtype(dtype)) if dtype is not None else t)


def store(dst: Any, value: Any, mask: Any = None, **kwargs: Any) -> None:
    """SBUF to HBM: `value` (broadcast to the indexed shape) into `dst`."""
    view = _view(dst)
    _check_partition(view.shape, "nl.store")
    v = semantic.to_tensor(value)
    v = semantic.cast(v, view.tensor.dtype)
    if v.type.is_block() and tuple(v.shape) != tuple(view.shape):
        v = semantic.broadcast_to(v, list(view.shape))
    tl.store(view.ptrs, v, mask=mask)


def _on_chip(shape: Any, dtype: Any, buffer: str, fill: float) -> Tile:
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    _check_partition(shape, "nl.ndarray")
    return Tile(tl.full(list(shape), fill, to_dtype(dtype)), buffer)


def zeros(shape: Any, dtype: Any, buffer: str = sbuf, **kwargs: Any) -> Tile:
    return _on_chip(shape, dtype, buffer, 0)


def ones(shape: Any, dtype: Any, buffer: str = sbuf, **kwargs: Any) -> Tile:
    return _on_chip(shape, dtype, buffer, 1)


def full(shape: Any, fill_value: Any, dtype: Any, buffer: str = sbuf, **kwargs: Any) -> Tile:
    return _on_chip(shape, dtype, buffer, fill_value)


def ndarray(shape: Any, dtype: Any, buffer: str = sbuf, **kwargs: Any) -> Tile:
    """An on-chip buffer to fill through indexing (zero-filled here)."""
    if buffer in (hbm, shared_hbm):
        raise ValueError("nl.ndarray in HBM: pass output tensors as kernel arguments instead")
    return _on_chip(shape, dtype, buffer, 0)


# -- compute ------------------------------------------------------------------------
def matmul(x: Any, y: Any, transpose_x: bool = False, **kwargs: Any) -> Tile:
    """x @ y (x transposed first with transpose_x), accumulated in fp32 (PSUM)."""
    a = tl.trans(x) if transpose_x else x
    acc = tl.zeros([a.shape[0], y.shape[1]], float32)
    return Tile(tl.dot(a, y, acc), psum)


def transpose(x: Any, **kwargs: Any) -> Tile:
    return Tile(tl.trans(x))


def _result(t: core.tensor, dtype: Any) -> Tile:
    return Tile(semantic.cast(t, to_dtype(dtype)) if dtype is not None else t)


def _float(x: Any) -> core.tensor:
    t = semantic.to_tensor(x)
    return t if t.dtype.is_floating() else semantic.cast(t, float32)


def _unary(fn):
    def op(x: Any, dtype: Any = None, **kwargs: Any) -> Tile:
        return _result(fn(_float(x)), dtype)
    op.__name__ = fn.__name__
    return op


exp = _unary(lambda x: tl.exp(x))
log = _unary(lambda x: tl.log(x))
sqrt = _unary(lambda x: tl.sqrt(x))
rsqrt = _unary(lambda x: tl.rsqrt(x))
sin = _unary(lambda x: tl.sin(x))
cos = _unary(lambda x: tl.cos(x))
erf = _unary(lambda x: tl.erf(x))
tanh = _unary(lambda x: 2.0 * tl.sigmoid(2.0 * x) - 1.0)
sigmoid = _unary(lambda x: tl.sigmoid(x))
relu = _unary(lambda x: tl.maximum(x, 0.0))
reciprocal = _unary(lambda x: 1.0 / x)
square = _unary(lambda x: x * x)
silu = _unary(lambda x: x * tl.sigmoid(x))


def abs(x: Any, dtype: Any = None, **kwargs: Any) -> Tile:  # noqa: A001 - NKI's name
    return _result(tl.abs(x), dtype)


def negative(x: Any, dtype: Any = None, **kwargs: Any) -> Tile:
    return _result(-x, dtype)


def _binary(fn):
    def op(x: Any, y: Any, dtype: Any = None, **kwargs: Any) -> Tile:
        return _result(fn(semantic.to_tensor(x), y), dtype)
    return op


add = _binary(lambda x, y: x + y)
subtract = _binary(lambda x, y: x - y)
multiply = _binary(lambda x, y: x * y)
divide = _binary(lambda x, y: x / y)
maximum = _binary(lambda x, y: tl.maximum(x, y))
minimum = _binary(lambda x, y: tl.minimum(x, y))


def where(condition: Any, x: Any, y: Any, dtype: Any = None, **kwargs: Any) -> Tile:
    return _result(tl.where(condition, x, y), dtype)


def copy(x: Any, dtype: Any = None, **kwargs: Any) -> Tile:
    return _result(x, dtype)


def _reduce(fn):
    def op(x: Any, axis: Any, dtype: Any = None, keepdims: bool = False, **kwargs: Any) -> Tile:
        t = x
        axes = sorted({a % len(x.shape) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))},
                      reverse=True)
        for a in axes:
            t = fn(t, a)
            if keepdims:
                t = semantic.expand_dims(t, a)
        return _result(t, dtype)
    return op


max = _reduce(lambda t, a: tl.max(t, axis=a))  # noqa: A001 - NKI's names
min = _reduce(lambda t, a: tl.min(t, axis=a))  # noqa: A001
sum = _reduce(lambda t, a: tl.sum(t, axis=a))  # noqa: A001


def mean(x: Any, axis: Any, dtype: Any = None, keepdims: bool = False, **kwargs: Any) -> Tile:
    t = x
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    count = int(np.prod([t.shape[a] for a in axes]))
    total = sum(_float(t), axis, keepdims=keepdims)
    return _result(total / float(count), dtype)
