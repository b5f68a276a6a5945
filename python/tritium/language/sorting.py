"""`tl.sort`, `tl.topk` and `tl.bitonic_merge`: bitonic networks built from
the core ops, so the compiler and the interpreter run the same code.

One compare-and-swap step pairs each element i with i ^ d (d a power of
two): the axis of length n is viewed as (n / 2d, 2, d), so partners sit on
the middle axis of length 2, and the partner of each element is its own
bits XORed with the pair's XOR (one `xor_sum` over that axis). An element
keeps the smaller or the larger of the pair depending on which side it is
on and on the direction of its block. Any axis can be sorted (Triton allows
only the last): it is moved last and back.
"""
from __future__ import annotations

from typing import Any

from . import semantic
from .core import _unwrap, builtin, tensor
from .dtypes import scalar_from_name


def _log2(n: int, what: str) -> int:
    if n < 1 or n & (n - 1):
        raise ValueError(f"{what} must be a power of two, got {n}")
    return n.bit_length() - 1


def _as_bits(x: tensor) -> tensor:
    """An integer view of x's elements, for the XOR that finds partners."""
    if x.dtype.is_int():
        return x
    return semantic.bitcast(x, scalar_from_name(f"int{x.dtype.primitive_bitwidth}"))


def _axis_index(length: int, axis: int, rank: int) -> tensor:
    """arange(0, length) shaped to broadcast along `axis` of a rank-`rank` tensor."""
    shape = [1] * rank
    shape[axis] = length
    return semantic.reshape(semantic.arange(0, length), shape)


def _compare_and_swap(x: tensor, d: int, flip: Any) -> tensor:
    """One step on the last axis: each element and its partner i ^ d end up
    ordered ascending where `flip` is 0 and descending where it is 1 (`flip`
    is 0, 1, or an int tensor over the (n / 2d) pair groups)."""
    lead, n = x.shape[:-1], x.shape[-1]
    rank = len(lead) + 3
    y = semantic.reshape(x, lead + (n // (2 * d), 2, d))
    bits = _as_bits(y)
    partner_bits = semantic.xor_(bits, semantic.reduction([bits], rank - 2, _xor, True)[0])
    partner = partner_bits if bits is y else semantic.bitcast(partner_bits, y.dtype)
    right = _axis_index(2, rank - 2, rank)
    take_partner = semantic.not_equal(semantic.greater_than(y, partner), semantic.xor_(right, flip))
    return semantic.reshape(semantic.where(take_partner, partner, y), x.shape)


@builtin
def _xor(a, b):
    return semantic.xor_(a, b)


def _merge(x: tensor, stage: int, order: Any) -> tensor:
    """Merges the bitonic runs of length 2^stage along the last axis: order
    0/1 sorts every run ascending/descending, "alternate" sorts run r
    ascending when r is even (so pairs of runs form bitonic sequences)."""
    n = x.shape[-1]
    for j in reversed(range(stage)):
        d = 1 << j
        if order == "alternate":
            groups = n // (2 * d)
            # the run of element i is i >> stage; in the (groups, 2, d) view that is group >> (stage - j - 1)
            g = semantic.arange(0, groups)
            if stage - j - 1:
                g = semantic.shr(g, stage - j - 1)
            flip = semantic.reshape(semantic.and_(g, 1), (1,) * len(x.shape[:-1]) + (groups, 1, 1))
        else:
            flip = order
        x = _compare_and_swap(x, d, flip)
    return x


def _to_last(x: tensor, dim: Any, what: str) -> tuple[tensor, list[int] | None]:
    rank = len(x.shape)
    if rank == 0:
        raise ValueError(f"{what} needs a tensor, got a scalar")
    d = rank - 1 if _unwrap(dim) is None else semantic.wrap_axis(_unwrap(dim), rank, f"{what} dim")
    if d == rank - 1:
        return x, None
    order = [a for a in range(rank) if a != d] + [d]
    return semantic.permute(x, order), order


def _from_last(x: tensor, order: list[int] | None) -> tensor:
    if order is None:
        return x
    return semantic.permute(x, [order.index(a) for a in range(len(order))])


def _flag(v: Any, what: str) -> int:
    v = _unwrap(v)
    if not isinstance(v, (bool, int)) or int(v) not in (0, 1):
        raise ValueError(f"{what} must be a constexpr bool, got {v!r}")
    return int(v)


@builtin
def sort(x: Any, dim: Any = None, descending: Any = 0) -> tensor:
    """`x` sorted along `dim` (default: the last), ascending unless `descending`."""
    x = semantic.to_tensor(x)
    x, order = _to_last(x, dim, "sort")
    log_n = _log2(x.shape[-1], "the sorted dimension")
    desc = _flag(descending, "sort: descending")
    for stage in range(1, log_n + 1):
        x = _merge(x, stage, "alternate" if stage < log_n else desc)
    return _from_last(x, order)


@builtin
def topk(x: Any, k: Any, dim: Any = None) -> tensor:
    """The `k` largest elements of `x` along `dim` (default: the last), in
    descending order; that dimension of the result has length k."""
    x = semantic.to_tensor(x)
    x, order = _to_last(x, dim, "topk")
    k = _unwrap(k)
    log_n = _log2(x.shape[-1], "the topk dimension")
    if not isinstance(k, int) or not 1 <= k <= x.shape[-1]:
        raise ValueError(f"topk: k must be an int between 1 and {x.shape[-1]}, got {k!r}")
    log_k = _log2(k, "topk: k")
    for stage in range(1, log_k + 1):
        x = _merge(x, stage, "alternate" if stage < log_n else 1)
    lead = x.shape[:-1]
    for i in range(log_k + 1, log_n + 1):
        # runs of k alternate ascending/descending: the elementwise max of a
        # pair is a bitonic run holding the pair's k largest elements
        m = x.shape[-1]
        pairs = semantic.reshape(x, lead + (m // (2 * k), 2, k))
        x = semantic.reshape(semantic.reduction([pairs], len(lead) + 1, _max, False)[0], lead + (m // 2,))
        x = _merge(x, log_k, "alternate" if i < log_n else 1)
    return _from_last(x, order)


@builtin
def _max(a, b):
    return semantic.maximum(a, b)


@builtin
def bitonic_merge(x: Any, dim: Any = None, descending: Any = 0) -> tensor:
    """Sorts `x` along `dim` (default: the last) when it is a bitonic
    sequence there (ascending then descending, or the reverse)."""
    x = semantic.to_tensor(x)
    x, order = _to_last(x, dim, "bitonic_merge")
    log_n = _log2(x.shape[-1], "the merged dimension")
    return _from_last(_merge(x, log_n, _flag(descending, "bitonic_merge: descending")), order)


__all__ = ["bitonic_merge", "sort", "topk"]
