"""The public `tl.*` builtins that are not math or reductions: ids, creation,
memory, atomics, shape ops, dot, hints and debugging.

Each is a thin `@builtin` function: it unwraps the arguments Triton takes as
constexprs and hands over to `semantic/`, which owns the rules.
"""
from __future__ import annotations

import sys
from typing import Any

from . import asm as _asm
from . import semantic
from .core import CompileTimeAssertionFailure, PropagateNan, _shape_args, _unwrap, builtin, tensor
from .dtypes import float32


@builtin
def program_id(axis: Any) -> tensor:
    return semantic.program_id(_unwrap(axis))


@builtin
def num_programs(axis: Any) -> tensor:
    return semantic.num_programs(_unwrap(axis))


@builtin
def arange(start: Any, end: Any) -> tensor:
    return semantic.arange(start, end)


def _shape_of(shape: Any) -> tuple:
    shape = _unwrap(shape)
    if isinstance(shape, (list, tuple)):
        return tuple(_unwrap(s) for s in shape)
    return (shape,)


@builtin
def full(shape: Any, value: Any, dtype: Any) -> tensor:
    return semantic.full(_shape_of(shape), value, _unwrap(dtype))


@builtin
def zeros(shape: Any, dtype: Any) -> tensor:
    return semantic.full(_shape_of(shape), 0, _unwrap(dtype))


@builtin
def zeros_like(input: tensor) -> tensor:
    input = semantic.to_tensor(input)
    return semantic.full(input.shape, 0, input.dtype)


@builtin
def full_like(input: tensor, value: Any, shape: Any = None, dtype: Any = None) -> tensor:
    input = semantic.to_tensor(input)
    shape = input.shape if _unwrap(shape) is None else _shape_of(shape)
    dt = input.dtype if _unwrap(dtype) is None else _unwrap(dtype)
    return semantic.full(shape, value, dt)


@builtin
def cast(input: Any, dtype: Any, fp_downcast_rounding: Any = None, bitcast: Any = False) -> tensor:
    if _unwrap(bitcast):
        return semantic.bitcast(input, _unwrap(dtype))
    return semantic.cast(input, _unwrap(dtype), _unwrap(fp_downcast_rounding))


@builtin
def to_tensor(x: Any) -> tensor:
    return semantic.to_tensor(x)


# ----- memory


@builtin
def load(pointer: Any, mask: Any = None, other: Any = None, boundary_check: Any = (), padding_option: Any = "",
         cache_modifier: Any = "", eviction_policy: Any = "", volatile: Any = False) -> tensor:
    return semantic.load(pointer, mask, other, boundary_check, padding_option, cache_modifier, eviction_policy,
                         volatile)


@builtin
def store(pointer: Any, value: Any, mask: Any = None, boundary_check: Any = (), cache_modifier: Any = "",
          eviction_policy: Any = "") -> None:
    semantic.store(pointer, value, mask, boundary_check, cache_modifier, eviction_policy)


def _atomic(kind: str):
    def fn(pointer: Any, val: Any, mask: Any = None, sem: Any = None, scope: Any = None) -> tensor:
        return semantic.atomic_rmw(kind, pointer, val, mask, _unwrap(sem), _unwrap(scope))
    fn.__name__ = fn.__qualname__ = f"atomic_{kind}"
    fn.__doc__ = f"Atomically apply `{kind}` at `pointer` with `val` (where `mask`); returns the old values."
    return builtin(fn)


atomic_add = _atomic("add")
atomic_max = _atomic("max")
atomic_min = _atomic("min")
atomic_and = _atomic("and")
atomic_or = _atomic("or")
atomic_xor = _atomic("xor")
atomic_xchg = _atomic("xchg")


@builtin
def atomic_cas(pointer: Any, cmp: Any, val: Any, sem: Any = None, scope: Any = None) -> tensor:
    return semantic.atomic_cas(pointer, cmp, val, _unwrap(sem), _unwrap(scope))


# ----- elementwise selection


@builtin
def where(condition: Any, x: Any, y: Any) -> tensor:
    return semantic.where(condition, x, y)


@builtin
def minimum(x: Any, y: Any, propagate_nan: Any = PropagateNan.NONE) -> tensor:
    return semantic.minimum(x, y, _unwrap(propagate_nan))


@builtin
def maximum(x: Any, y: Any, propagate_nan: Any = PropagateNan.NONE) -> tensor:
    return semantic.maximum(x, y, _unwrap(propagate_nan))


@builtin
def clamp(x: Any, min: Any, max: Any, propagate_nan: Any = PropagateNan.NONE) -> tensor:
    return semantic.clamp(x, min, max, _unwrap(propagate_nan))


# ----- shape ops


@builtin
def broadcast(input: Any, other: Any) -> tuple:
    return tuple(semantic.broadcast_pair(semantic.to_tensor(input), semantic.to_tensor(other), "broadcast"))


@builtin
def broadcast_to(input: Any, *shape: Any) -> tensor:
    return semantic.broadcast_to(semantic.to_tensor(input), _shape_args(shape))


@builtin
def expand_dims(input: Any, axis: Any) -> tensor:
    return semantic.expand_dims(input, axis)


@builtin
def reshape(input: Any, *shape: Any, can_reorder: Any = False) -> tensor:
    return semantic.reshape(input, _shape_args(shape), _unwrap(can_reorder))


@builtin
def view(input: Any, *shape: Any) -> tensor:
    return semantic.reshape(input, _shape_args(shape), can_reorder=True)


@builtin
def trans(input: Any, *dims: Any) -> tensor:
    return semantic.trans(input, _shape_args(dims))


@builtin
def permute(input: Any, *dims: Any) -> tensor:
    return semantic.permute(input, _shape_args(dims))


@builtin
def join(a: Any, b: Any) -> tensor:
    return semantic.join(a, b)


@builtin
def split(a: Any) -> tuple:
    return semantic.split(a)


@builtin
def interleave(a: Any, b: Any) -> tensor:
    c = semantic.join(a, b)
    if len(c.shape) == 1:
        return c
    return semantic.reshape(c, c.shape[:-2] + (c.shape[-2] * 2,))


@builtin
def cat(input: Any, other: Any, can_reorder: Any = False) -> tensor:
    return semantic.cat(input, other, _unwrap(can_reorder))


# ----- dot


@builtin
def dot(input: Any, other: Any, acc: Any = None, input_precision: Any = None, allow_tf32: Any = None,
        max_num_imprecise_acc: Any = None, out_dtype: Any = float32) -> tensor:
    return semantic.dot(input, other, acc, input_precision, allow_tf32, max_num_imprecise_acc, _unwrap(out_dtype))


# ----- hints


@builtin
def multiple_of(input: Any, values: Any) -> tensor:
    return semantic.multiple_of(input, values)


@builtin
def max_contiguous(input: Any, values: Any) -> tensor:
    return semantic.max_contiguous(input, values)


@builtin
def max_constancy(input: Any, values: Any) -> tensor:
    return semantic.max_constancy(input, values)


# ----- debugging


@builtin
def static_assert(cond: Any, msg: Any = "") -> None:
    """Checked while compiling (and when the interpreter reaches it)."""
    c = _unwrap(cond)
    if isinstance(c, tensor):
        raise TypeError("static_assert needs a constexpr condition; use tl.device_assert for tensor values")
    if not c:
        raise CompileTimeAssertionFailure(f"static_assert failed: {_unwrap(msg)}" if _unwrap(msg)
                                          else "static_assert failed")


@builtin
def static_print(*values: Any, sep: str = " ", end: str = "\n", file: Any = None, flush: bool = False) -> None:
    print(*[_unwrap(v) for v in values], sep=sep, end=end, file=file or sys.stdout, flush=flush)


@builtin
def device_print(prefix: Any, *args: Any, hex: Any = False) -> None:
    semantic.device_print(_unwrap(prefix), [_unwrap(a) for a in args], _unwrap(hex))


@builtin
def device_assert(cond: Any, msg: Any = "", mask: Any = None) -> None:
    semantic.device_assert(_unwrap(cond), _unwrap(msg), mask)


@builtin
def debug_barrier() -> None:
    semantic.debug_barrier()


@builtin
def inline_asm_elementwise(asm: Any, constraints: Any, args: Any, dtype: Any, is_pure: Any, pack: Any) -> Any:
    args = _unwrap(args)
    dtype = _unwrap(dtype)
    if isinstance(args, (list, tuple)):
        args = [_unwrap(a) for a in args]
    if isinstance(dtype, (list, tuple)):
        dtype = tuple(_unwrap(d) for d in dtype)
    return _asm.inline_asm_elementwise(_unwrap(asm), _unwrap(constraints), args, dtype, _unwrap(is_pure),
                                       _unwrap(pack))
