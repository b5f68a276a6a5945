"""Reductions and scans: axis and shape checks, and the combine region built by
running the user's combine function on scalar block arguments."""
from __future__ import annotations

from typing import Any, Sequence

from .. import core
from ..builder import current_builder
from ..dtypes import block_type, dtype
from .emit import _fmt_shape, _shape, _tyname
from .scalars import _is_py_scalar, constant, to_tensor
from .shapes import expand_dims, reshape, wrap_axis


def _combine_region(fn, elem_types: Sequence[dtype], what: str):
    """The region body: wrap block arguments as scalar tensors, run the user's
    combine function (inlined by the frontend), and check what it returns."""
    n = len(elem_types)

    def region(accs, news):
        args = [core.tensor(h, t) for h, t in zip(list(accs) + list(news), list(elem_types) * 2)]
        out = core.call_combine_fn(fn, args)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if len(outs) != n:
            raise TypeError(f"{what}: the combine function returned {len(outs)} values, expected {n}")
        handles = []
        for o, t in zip(outs, elem_types):
            o = core._unwrap(o)
            if _is_py_scalar(o):
                o = constant(o, t)
            o = to_tensor(o)
            if o.type != t:
                raise TypeError(f"{what}: the combine function returned {_tyname(o.type)}, expected {t}")
            handles.append(o.handle)
        return handles

    return region


def reduction(inputs: Sequence[Any], axis: Any, combine_fn, keep_dims: bool = False) -> tuple:
    inputs = [to_tensor(t) for t in inputs]
    axis = core._unwrap(axis)
    if not inputs:
        raise ValueError("tl.reduce: no inputs")
    rank = len(_shape(inputs[0].type))
    if rank == 0:
        raise ValueError("tl.reduce: cannot reduce a scalar")
    if axis is None:
        flat = [reshape(t, (t.type.numel,), can_reorder=True) for t in inputs]
        res = reduction(flat, 0, combine_fn)
        if keep_dims:
            res = tuple(reshape(r, (1,) * rank) for r in res)
        return res
    axis = wrap_axis(axis, rank, "reduction axis")
    shape = inputs[0].type.shape
    for t in inputs:
        if _shape(t.type) != shape:
            raise ValueError(f"tl.reduce: all inputs must have the same shape, got {_fmt_shape(shape)} and "
                             f"{_fmt_shape(_shape(t.type))}")
    out_shape = shape[:axis] + shape[axis + 1:]
    elem = [t.type.scalar for t in inputs]
    out_tys = [block_type(e, out_shape) if out_shape else e for e in elem]
    hs = current_builder().create_combine("reduce", [t.handle for t in inputs], out_tys, {"axis": axis}, elem,
                                          _combine_region(combine_fn, elem, "tl.reduce"))
    res = tuple(core.tensor(h, t) for h, t in zip(hs, out_tys))
    if keep_dims:
        res = tuple(expand_dims(r, axis) for r in res)
    return res


def scan(inputs: Sequence[Any], axis: Any, combine_fn, reverse: bool = False) -> tuple:
    inputs = [to_tensor(t) for t in inputs]
    if not inputs:
        raise ValueError("tl.associative_scan: no inputs")
    shape = _shape(inputs[0].type)
    if not shape:
        raise ValueError("tl.associative_scan: cannot scan a scalar")
    axis = wrap_axis(axis, len(shape), "scan axis")
    for t in inputs:
        if _shape(t.type) != shape:
            raise ValueError(f"tl.associative_scan: all inputs must have the same shape, got {_fmt_shape(shape)} "
                             f"and {_fmt_shape(_shape(t.type))}")
    elem = [t.type.scalar for t in inputs]
    tys = [t.type for t in inputs]
    hs = current_builder().create_combine("scan", [t.handle for t in inputs], tys,
                                          {"axis": axis, "reverse": bool(core._unwrap(reverse))}, elem,
                                          _combine_region(combine_fn, elem, "tl.associative_scan"))
    return tuple(core.tensor(h, t) for h, t in zip(hs, tys))
