"""Reductions, scans and small helpers built from the core builtins: sum, max,
argmax, cumsum, softmax, swizzle2d, flip, ...

Written as plain builtins (not @jit) so the same code runs under the compiler
and the interpreter; the accumulation dtypes follow Triton 3.x (`_pick_sum_dtype`,
sub-32-bit max/min widened).
"""
from __future__ import annotations

import builtins as _py
from typing import Any

from . import semantic
from .builtins import maximum, minimum, where, zeros, zeros_like  # noqa: F401  (re-exported)
from .core import _unwrap, builtin, tensor
from .dtypes import bfloat16, float32, int32, uint32
from .math import cdiv, exp, fdiv  # noqa: F401  (cdiv re-exported)


def _single_or_tuple(inputs: Any):
    inputs = _unwrap(inputs)
    if isinstance(inputs, (tuple, list)):
        return [semantic.to_tensor(_unwrap(t)) for t in inputs], True
    return [semantic.to_tensor(inputs)], False


@builtin
def reduce(input: Any, axis: Any, combine_fn: Any, keep_dims: Any = False) -> Any:
    """Reduce `input` (a tensor or a tuple of tensors) along `axis` (None: all
    elements) with `combine_fn(acc..., new...) -> acc...`."""
    inputs, is_tuple = _single_or_tuple(input)
    res = semantic.reduction(inputs, _unwrap(axis), _unwrap(combine_fn), bool(_unwrap(keep_dims)))
    return tuple(res) if is_tuple else res[0]


@builtin
def associative_scan(input: Any, axis: Any, combine_fn: Any, reverse: Any = False) -> Any:
    inputs, is_tuple = _single_or_tuple(input)
    res = semantic.scan(inputs, _unwrap(axis), _unwrap(combine_fn), bool(_unwrap(reverse)))
    return tuple(res) if is_tuple else res[0]


# ----- combine functions (builtins, so reductions call them directly)


@builtin
def _sum_combine(a, b):
    return semantic.add(a, b)


@builtin
def _prod_combine(a, b):
    return semantic.mul(a, b)


@builtin
def _xor_combine(a, b):
    return semantic.xor_(a, b)


@builtin
def _max_combine(a, b):
    return semantic.maximum(a, b)


@builtin
def _min_combine(a, b):
    return semantic.minimum(a, b)


def _arg_combine(pred: str, tie_break_left: bool):
    def combine(v1, i1, v2, i2):
        better = semantic.compare(v1, v2, pred)
        if tie_break_left:
            tie = semantic.and_(semantic.equal(v1, v2), semantic.less_than(i1, i2))
            better = semantic.or_(better, tie)
        return semantic.where(better, v1, v2), semantic.where(better, i1, i2)
    return builtin(combine)


_ARGMAX = {True: _arg_combine(">", True), False: _arg_combine(">", False)}
_ARGMIN = {True: _arg_combine("<", True), False: _arg_combine("<", False)}


def _pick_sum_dtype(in_dtype, dtype):
    if dtype is not None:
        return dtype
    # narrow integers accumulate in 32 bits of the same signedness (int1 counts as unsigned, as in Triton)
    if in_dtype.is_int_signed() and in_dtype.int_bitwidth < 32:
        return int32
    if (in_dtype.is_int_unsigned() or in_dtype.is_int1()) and in_dtype.int_bitwidth < 32:
        return uint32
    return None


def _promote_bf16(x: tensor) -> tensor:
    return semantic.cast(x, float32) if x.dtype == bfloat16 else x


@builtin
def sum(input: Any, axis: Any = None, keep_dims: Any = False, dtype: Any = None) -> tensor:
    input = semantic.to_tensor(input)
    out = _pick_sum_dtype(input.dtype, _unwrap(dtype))
    if out is not None:
        input = semantic.cast(input, out)
    return reduce(input, axis, _sum_combine, keep_dims)


@builtin
def xor_sum(input: Any, axis: Any = None, keep_dims: Any = False) -> tensor:
    input = semantic.to_tensor(input)
    if not input.dtype.is_int():
        raise TypeError(f"xor_sum is only defined for integers, got {input.dtype}")
    return reduce(input, axis, _xor_combine, keep_dims)


@builtin
def _or_combine(a, b):
    return semantic.or_(a, b)


@builtin
def reduce_or(input: Any, axis: Any, keep_dims: Any = False) -> tensor:
    """Bitwise OR of integers along `axis` (None: all elements)."""
    input = semantic.to_tensor(input)
    if not input.dtype.is_int():
        raise TypeError(f"reduce_or is only defined for integers, got {input.dtype}")
    return reduce(input, axis, _or_combine, keep_dims)


def _with_indices(input: tensor, axis: Any, combine, keep_dims: bool):
    axis = _unwrap(axis)
    if axis is None:
        flat = semantic.reshape(input, (input.numel,), can_reorder=False)
        v, i = _with_indices(flat, 0, combine, False)
        if keep_dims:
            ones = (1,) * len(input.shape)
            v, i = semantic.reshape(v, ones), semantic.reshape(i, ones)
        return v, i
    rank = len(input.shape)
    axis = semantic.wrap_axis(axis, rank, "reduction axis")
    index = semantic.arange(0, input.shape[axis])
    if rank > 1:
        index = semantic.expand_dims(index, [d for d in range(rank) if d != axis])
        index = semantic.broadcast_to_shape(index, input.shape)
    return reduce((input, index), axis, combine, keep_dims)


def _minmax_reduce(input: Any, axis: Any, return_indices: Any, tie_break_left: Any, keep_dims: Any,
                   combine, arg_combines) -> Any:
    input = _promote_bf16(semantic.to_tensor(input))
    keep_dims = bool(_unwrap(keep_dims))
    if _unwrap(return_indices):
        return _with_indices(input, axis, arg_combines[bool(_unwrap(tie_break_left))], keep_dims)
    if input.dtype.primitive_bitwidth < 32:
        input = semantic.cast(input, float32 if input.dtype.is_floating() else int32)
    return reduce(input, axis, combine, keep_dims)


@builtin
def max(input: Any, axis: Any = None, return_indices: Any = False, return_indices_tie_break_left: Any = True,
        keep_dims: Any = False) -> Any:
    return _minmax_reduce(input, axis, return_indices, return_indices_tie_break_left, keep_dims,
                          _max_combine, _ARGMAX)


@builtin
def min(input: Any, axis: Any = None, return_indices: Any = False, return_indices_tie_break_left: Any = True,
        keep_dims: Any = False) -> Any:
    return _minmax_reduce(input, axis, return_indices, return_indices_tie_break_left, keep_dims,
                          _min_combine, _ARGMIN)


@builtin
def argmax(input: Any, axis: Any, tie_break_left: Any = True, keep_dims: Any = False) -> tensor:
    return max(input, axis, True, tie_break_left, keep_dims)[1]


@builtin
def argmin(input: Any, axis: Any, tie_break_left: Any = True, keep_dims: Any = False) -> tensor:
    return min(input, axis, True, tie_break_left, keep_dims)[1]


@builtin
def cumsum(input: Any, axis: Any = 0, reverse: Any = False, dtype: Any = None) -> tensor:
    input = semantic.to_tensor(input)
    out = _pick_sum_dtype(input.dtype, _unwrap(dtype))
    if out is not None:
        input = semantic.cast(input, out)
    return associative_scan(input, axis, _sum_combine, reverse)


@builtin
def cumprod(input: Any, axis: Any = 0, reverse: Any = False) -> tensor:
    input = _promote_bf16(semantic.to_tensor(input))
    return associative_scan(input, axis, _prod_combine, reverse)


@builtin
def sigmoid(x: Any) -> tensor:
    return semantic.truediv(1, semantic.add(1, exp(semantic.minus(x))))


@builtin
def softmax(x: Any, dim: Any = None, keep_dims: Any = False, ieee_rounding: Any = False) -> tensor:
    d = 0 if _unwrap(dim) is None else _unwrap(dim)
    z = semantic.sub(x, max(x, d, keep_dims=keep_dims))
    num = exp(z)
    den = sum(num, d, keep_dims=keep_dims)
    return fdiv(num, den, ieee_rounding)


@builtin
def ravel(x: Any, can_reorder: Any = False) -> tensor:
    x = semantic.to_tensor(x)
    return semantic.reshape(x, (x.numel,), bool(_unwrap(can_reorder)))


@builtin
def swizzle2d(i: Any, j: Any, size_i: Any, size_j: Any, size_g: Any):
    """Map row-major (i, j) of a size_i x size_j grid to a grouped order where
    groups of `size_g` rows are walked column-major (for L2 reuse)."""
    i, j, size_i, size_j, size_g = (_unwrap(v) for v in (i, j, size_i, size_j, size_g))
    ij = semantic.add(semantic.mul(i, size_j), j)
    size_gj = semantic.mul(size_g, size_j) if isinstance(size_g, tensor) or isinstance(size_j, tensor) \
        else size_g * size_j
    group_id = semantic.floordiv(ij, size_gj)
    off_i = semantic.mul(group_id, size_g)
    size_g = minimum(semantic.sub(size_i, off_i), size_g)
    new_i = semantic.add(off_i, semantic.mod(ij, size_g))
    new_j = semantic.floordiv(semantic.mod(ij, size_gj), size_g)
    return new_i, new_j


def _swap_halves(y: tensor, axis: int) -> tensor:
    rank = len(y.shape)
    order = [d for d in range(rank) if d != axis] + [axis]
    inverse = [order.index(d) for d in range(rank)]
    lo, hi = semantic.split(semantic.permute(y, order))
    return semantic.permute(semantic.join(hi, lo), inverse)


@builtin
def flip(x: Any, dim: Any = None) -> tensor:
    """Reverse `x` along `dim` (default: the last). Exact for every value:
    the index's bits are reversed one at a time by swapping halves."""
    x = semantic.to_tensor(x)
    shape = x.shape
    if not shape:
        raise ValueError("flip needs a tensor, got a scalar")
    d = len(shape) - 1 if _unwrap(dim) is None else semantic.wrap_axis(dim, len(shape), "flip dim")
    k = shape[d].bit_length() - 1
    if k == 0:
        return x
    pre, post = shape[:d], shape[d + 1:]
    y = semantic.reshape(x, pre + (2,) * k + post)
    for bit in _py.range(k):
        y = _swap_halves(y, len(pre) + bit)
    return semantic.reshape(y, shape)
