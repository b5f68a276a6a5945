"""`tl.gather`, `tl.histogram` and `tl.assume`: the ops that address
elements by value (`gather`, `histogram` of docs/ir.md) and the hint
`assume`. Shapes are checked here so a mistake is reported at the kernel's
line; the verifier checks the same rules on the IR."""
from __future__ import annotations

from typing import Any

from . import core, semantic
from .core import _unwrap, builtin
from .dtypes import block_type, int1, int32
from .semantic.emit import _op, _op_void


@builtin
def gather(src: Any, index: Any, axis: Any) -> "core.tensor":
    """`out[i][j]... = src[...][index[i][j]...][...]` along `axis`: the result
    is shaped like `index`, which matches `src` on every other axis."""
    src, index = semantic.to_tensor(src), semantic.to_tensor(index)
    rank = len(src.shape)
    if rank == 0 or len(index.shape) != rank:
        raise ValueError(f"gather: source and index must be tensors of one rank, got shapes "
                         f"{list(src.shape)} and {list(index.shape)}")
    axis = semantic.wrap_axis(axis, rank, "gather axis")
    if not index.dtype.is_int() or index.dtype.is_int1():
        raise TypeError(f"gather: index must hold integers, got {index.dtype}")
    for d in range(rank):
        if d != axis and src.shape[d] != index.shape[d]:
            raise ValueError(f"gather: index dimension {d} is {index.shape[d]} but the source's is {src.shape[d]} "
                             f"(only the gathered axis {axis} may differ)")
    return _op("gather", [src, index], block_type(src.dtype, list(index.shape)), {"axis": axis})


@builtin
def histogram(input: Any, num_bins: Any, mask: Any = None) -> "core.tensor":
    """Counts of each value 0..num_bins-1 among `input`'s elements (where
    `mask` is true); values outside that range are not counted."""
    input = semantic.to_tensor(input)
    bins = _unwrap(num_bins)
    if len(input.shape) != 1 or not input.dtype.is_int() or input.dtype.is_int1():
        raise TypeError(f"histogram: input must be a 1-D tensor of integers, got {input.type}")
    if not isinstance(bins, int) or isinstance(bins, bool) or bins < 1 or bins & (bins - 1):
        raise ValueError(f"histogram: num_bins must be a power of two, got {bins!r}")
    operands = [input]
    if _unwrap(mask) is not None:
        m = semantic.to_tensor(_unwrap(mask))
        if m.dtype != int1:
            m = semantic.not_equal(m, 0)
        operands.append(semantic.broadcast_to(m, input.shape) if m.shape != input.shape else m)
    return _op("histogram", operands, block_type(int32, [bins]), {"num_bins": bins})


@builtin
def assume(cond: Any) -> None:
    """Lets the compiler rely on `cond` (a boolean scalar or tensor) holding;
    the interpreter checks it."""
    c = semantic.to_tensor(_unwrap(cond))
    if c.dtype != int1:
        raise TypeError(f"assume: the condition must be a boolean, got {c.dtype}")
    _op_void("assume", [c])


__all__ = ["assume", "gather", "histogram"]
