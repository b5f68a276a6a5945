"""Atomic read-modify-write and compare-and-swap: element-type support, memory
semantics and scope, and float max/min built from integer atomics."""
from __future__ import annotations

from typing import Any

from .. import core
from ..dtypes import bfloat16, float16, float32, float64, int1, int32, int64, pointer_type, uint32, uint64
from .arithmetic import and_, not_, shr
from .casts import bitcast, cast
from .comparison import where
from .emit import _op, _shape, _tyname, with_element_ty
from .memory import _check_mask, _choice
from .scalars import constant, to_tensor
from .shapes import broadcast_to_shape

_SEMS = ("relaxed", "acquire", "release", "acq_rel")
_SCOPES = ("gpu", "cta", "sys")


def _atomic_operands(ptr: Any, val: Any, mask: Any, kind: str):
    ptr = to_tensor(ptr)
    if not ptr.type.scalar.is_ptr():
        raise TypeError(f"atomic_{kind}: expected a pointer, got {_tyname(ptr.type)}")
    if getattr(ptr.type.scalar, "const", False):
        raise TypeError(f"atomic_{kind}: cannot write through a constant pointer")
    elem = ptr.type.scalar.element_ty
    if elem in (float16, bfloat16) and kind != "add":
        raise TypeError(f"atomic_{kind} does not support {elem}")
    if elem.primitive_bitwidth < 32 and not elem in (float16, bfloat16):
        raise TypeError(f"atomic_{kind} does not support {elem}")
    val = to_tensor(val)
    mask = None if core._unwrap(mask) is None else to_tensor(mask)
    if ptr.type.is_block():
        val = broadcast_to_shape(val, ptr.type.shape, f"atomic_{kind}")
        if mask is not None:
            mask = broadcast_to_shape(mask, ptr.type.shape, f"atomic_{kind}")
    else:
        if val.type.is_block() or (mask is not None and mask.type.is_block()):
            raise ValueError(f"atomic_{kind}: value and mask must be scalars when the pointer is a scalar")
    if mask is not None:
        _check_mask(mask)
    return ptr, cast(val, elem), mask


def atomic_rmw(kind: str, ptr: Any, val: Any, mask: Any = None, sem: Any = None, scope: Any = None) -> "core.tensor":
    sem = _choice(sem or "acq_rel", _SEMS, "atomic sem")
    scope = _choice(scope or "gpu", _SCOPES, "atomic scope")
    ptr, val, mask = _atomic_operands(ptr, val, mask, kind)
    sca = val.type.scalar
    if kind in ("and", "or", "xor") and not sca.is_int():
        raise TypeError(f"atomic_{kind} needs an integer element type, got {sca}")
    if kind in ("max", "min") and sca.is_floating():
        if sca not in (float32, float64):
            raise TypeError(f"atomic_{kind} is not supported for {sca}")
        return _float_atomic_minmax(kind, ptr, val, mask, sem, scope)
    attrs = {"kind": kind, "sem": sem, "scope": scope}
    return _op("atomic_rmw", [ptr, val] + ([mask] if mask is not None else []), val.type, attrs)


def _float_atomic_minmax(kind, ptr, val, mask, sem, scope):
    """Float max/min through integer atomics: for non-negative values the signed
    order of the bits is the float order; for negative ones the unsigned order is
    reversed. Exact for every non-NaN input."""
    sca = val.type.scalar
    ity, uty = (int32, uint32) if sca == float32 else (int64, uint64)
    space = ptr.type.scalar.address_space
    if mask is None:
        mask = constant(True, with_element_ty(val.type, int1))
    i_val, u_val = bitcast(val, ity), bitcast(val, uty)
    i_ptr, u_ptr = bitcast(ptr, pointer_type(ity, space)), bitcast(ptr, pointer_type(uty, space))
    neg = cast(shr(u_val, sca.primitive_bitwidth - 1), int1)
    pos = not_(neg)
    other = "min" if kind == "max" else "max"
    attrs = {"sem": sem, "scope": scope}
    pos_ret = _op("atomic_rmw", [i_ptr, i_val, and_(mask, pos)], i_val.type, {"kind": kind, **attrs})
    neg_ret = _op("atomic_rmw", [u_ptr, u_val, and_(mask, neg)], u_val.type, {"kind": other, **attrs})
    return where(pos, bitcast(pos_ret, sca), bitcast(neg_ret, sca))


def atomic_cas(ptr: Any, cmp: Any, val: Any, sem: Any = None, scope: Any = None) -> "core.tensor":
    sem = _choice(sem or "acq_rel", _SEMS, "atomic sem")
    scope = _choice(scope or "gpu", _SCOPES, "atomic scope")
    ptr = to_tensor(ptr)
    if not ptr.type.scalar.is_ptr():
        raise TypeError(f"atomic_cas: expected a pointer, got {_tyname(ptr.type)}")
    elem = ptr.type.scalar.element_ty
    if elem.primitive_bitwidth not in (16, 32, 64):
        raise TypeError(f"atomic_cas only supports 16, 32 or 64-bit elements, got {elem}")
    cmp, val = to_tensor(cmp), to_tensor(val)
    shape = _shape(ptr.type)
    if ptr.type.is_block():
        cmp, val = broadcast_to_shape(cmp, shape, "atomic_cas"), broadcast_to_shape(val, shape, "atomic_cas")
    elif cmp.type.is_block() or val.type.is_block():
        raise ValueError("atomic_cas: cmp and val must be scalars when the pointer is a scalar")
    cmp, val = cast(cmp, elem), cast(val, elem)
    return _op("atomic_cas", [ptr, cmp, val], val.type, {"sem": sem, "scope": scope})
