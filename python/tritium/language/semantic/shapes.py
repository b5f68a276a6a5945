"""Shape rules: broadcasting (numpy-style, right-aligned) and the shape ops
(expand_dims, reshape, permute, join, split, cat). Shapes are constexpr powers
of two, checked here once for every op that takes one."""
from __future__ import annotations

from typing import Any, Sequence

from .. import core
from ..builder import current_builder
from ..dtypes import block_type
from .emit import _fmt_shape, _op, _shape, _tyname
from .scalars import to_tensor


def broadcast_shapes(a: tuple, b: tuple, opname: str = "broadcast") -> tuple:
    if len(a) < len(b):
        a = (1,) * (len(b) - len(a)) + tuple(a)
    elif len(b) < len(a):
        b = (1,) * (len(a) - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ValueError(f"incompatible shapes for '{opname}': {_fmt_shape(a)} and {_fmt_shape(b)}")
    return tuple(out)


def splat(x: "core.tensor", shape: Sequence[int]) -> "core.tensor":
    if x.type.is_block():
        raise ValueError("cannot splat a block tensor")
    if len(shape) == 0:
        return x
    return _op("splat", [x], block_type(x.type, shape))


def broadcast_to_shape(x: "core.tensor", shape: Sequence[int], opname: str = "broadcast_to") -> "core.tensor":
    """Broadcast `x` to `shape`; lower ranks are aligned on the right."""
    shape = tuple(shape)
    if not x.type.is_block():
        return splat(x, shape)
    src = x.type.shape
    if len(src) > len(shape):
        raise ValueError(f"cannot broadcast shape {_fmt_shape(src)} to {_fmt_shape(shape)} in '{opname}'")
    while len(x.type.shape) < len(shape):
        x = expand_dims(x, 0)
    src = x.type.shape
    if src == shape:
        return x
    for s, d in zip(src, shape):
        if s != d and s != 1:
            raise ValueError(f"incompatible shapes for '{opname}': {_fmt_shape(src)} and {_fmt_shape(shape)}")
    return _op("broadcast", [x], block_type(x.type.scalar, shape))


def broadcast_pair(a: "core.tensor", b: "core.tensor", opname: str = "broadcast"):
    sa, sb = _shape(a.type), _shape(b.type)
    if sa == sb:
        return a, b
    shape = broadcast_shapes(sa, sb, opname)
    return broadcast_to_shape(a, shape, opname), broadcast_to_shape(b, shape, opname)


def broadcast_tensors(*xs: "core.tensor", opname: str = "broadcast") -> list:
    shape: tuple = ()
    for x in xs:
        shape = broadcast_shapes(shape, _shape(x.type), opname)
    return [broadcast_to_shape(x, shape, opname) for x in xs]


def broadcast_to(x: "core.tensor", shape: Sequence[int]) -> "core.tensor":
    """`tl.broadcast_to`: ranks must match (a scalar may be splatted)."""
    shape = check_shape(shape, "broadcast_to")
    if x.type.is_block() and len(x.type.shape) != len(shape):
        raise ValueError(f"broadcast_to: rank mismatch between {_fmt_shape(x.type.shape)} and {_fmt_shape(shape)}")
    return broadcast_to_shape(x, shape, "broadcast_to")


def check_shape(shape: Sequence[Any], what: str) -> tuple:
    out = []
    for i, s in enumerate(shape):
        s = core._unwrap(s)
        if isinstance(s, core.tensor) or not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"{what}: shape element {i} must be a constexpr int, got {s!r}")
        if s <= 0 or s & (s - 1):
            raise ValueError(f"{what}: shape element {i} is {s}, which is not a power of two")
        out.append(s)
    return tuple(out)


def wrap_axis(axis: Any, ndim: int, what: str = "axis") -> int:
    axis = core._unwrap(axis)
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"{what} must be a constexpr int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"invalid {what} {axis}: expected {-ndim} <= {what} < {ndim}")
    return axis % ndim


def expand_dims(x: Any, axis: Any) -> "core.tensor":
    x = to_tensor(x)
    axis = core._unwrap(axis)
    axes = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    ndim = len(_shape(x.type)) + len(axes)
    axes = [wrap_axis(a, ndim) for a in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"expand_dims: duplicate axes {axes}")
    for a in sorted(axes):
        shape = list(_shape(x.type))
        shape.insert(a, 1)
        if not x.type.is_block():
            x = splat(x, shape)
        else:
            x = _op("expand_dims", [x], block_type(x.type.scalar, shape), {"axis": a})
    return x


def reshape(x: Any, shape: Sequence[Any], can_reorder: bool = False) -> "core.tensor":
    x = to_tensor(x)
    shape = check_shape(shape, "reshape")
    numel = 1
    for s in shape:
        numel *= s
    src_numel = x.type.numel if x.type.is_block() else 1
    if numel != src_numel:
        raise ValueError(f"reshape: cannot reshape {_fmt_shape(_shape(x.type))} ({src_numel} elements) "
                         f"to {_fmt_shape(shape)} ({numel} elements)")
    if not x.type.is_block():
        return splat(x, shape)
    if not shape:
        raise ValueError("reshape: the target shape must not be empty")
    if x.type.shape == shape:
        return x
    return _op("reshape", [x], block_type(x.type.scalar, shape), {"can_reorder": bool(can_reorder)})


def permute(x: Any, dims: Sequence[Any]) -> "core.tensor":
    x = to_tensor(x)
    dims = tuple(core._unwrap(d) for d in dims)
    shape = _shape(x.type)
    if len(dims) != len(shape):
        raise ValueError(f"permute: {len(dims)} dims given for a tensor of rank {len(shape)}")
    if sorted(dims) != list(range(len(dims))):
        raise ValueError(f"permute: dims must be a permutation of 0..{len(dims) - 1}, got {list(dims)}")
    if dims == tuple(range(len(dims))):
        return x
    return _op("permute", [x], block_type(x.type.scalar, [shape[d] for d in dims]), {"order": list(dims)})


def trans(x: Any, dims: Sequence[Any] = ()) -> "core.tensor":
    x = to_tensor(x)
    if not dims:
        if len(_shape(x.type)) != 2:
            raise ValueError(f"trans without dims needs a 2-D tensor, got shape {_fmt_shape(_shape(x.type))}")
        dims = (1, 0)
    return permute(x, dims)


def join(a: Any, b: Any) -> "core.tensor":
    a, b = to_tensor(a), to_tensor(b)
    if a.type.scalar != b.type.scalar:
        raise TypeError(f"join: operands must have the same dtype, got {a.type.scalar} and {b.type.scalar}")
    a, b = broadcast_pair(a, b, "join")
    if not a.type.is_block():
        a, b = expand_dims(a, 0), expand_dims(b, 0)
        joined = _op("join", [a, b], block_type(a.type.scalar, (1, 2)))
        return reshape(joined, (2,))
    return _op("join", [a, b], block_type(a.type.scalar, a.type.shape + (2,)))


def split(a: Any) -> tuple:
    a = to_tensor(a)
    shape = _shape(a.type)
    if not shape or shape[-1] != 2:
        raise ValueError(f"split: the last dimension must be 2, got shape {_fmt_shape(shape)}")
    out_ty = block_type(a.type.scalar, shape[:-1]) if len(shape) > 1 else a.type.scalar
    hs = current_builder().create("split", [a.handle], [out_ty, out_ty], {})
    return core.tensor(hs[0], out_ty), core.tensor(hs[1], out_ty)


def cat(a: Any, b: Any, can_reorder: bool = False) -> "core.tensor":
    a, b = to_tensor(a), to_tensor(b)
    if not can_reorder:
        raise ValueError("tl.cat: only can_reorder=True is supported (the result's element order is unspecified)")
    if not a.type.is_block() or a.type != b.type:
        raise TypeError(f"tl.cat: operands must be tensors of one type, got {_tyname(a.type)} and {_tyname(b.type)}")
    shape = (a.type.shape[0] * 2,) + a.type.shape[1:]
    return _op("cat", [a, b], block_type(a.type.scalar, shape), {"can_reorder": True})
