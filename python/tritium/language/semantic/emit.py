"""Emitting ops through the current builder, and the small type helpers every
rule module shares (element-type swaps, shapes, how types print in errors)."""
from __future__ import annotations

from typing import Sequence

from .. import core
from ..builder import current_builder
from ..dtypes import block_type, dtype


def _op(op: str, operands: Sequence["core.tensor"], ty: dtype, attrs: dict | None = None) -> "core.tensor":
    handles = current_builder().create(op, [o.handle for o in operands], [ty], attrs or {})
    return core.tensor(handles[0], ty)


def _op_void(op: str, operands: Sequence["core.tensor"], attrs: dict | None = None) -> None:
    current_builder().create(op, [o.handle for o in operands], [], attrs or {})


def with_element_ty(ty: dtype, elem: dtype) -> dtype:
    return block_type(elem, ty.shape) if ty.is_block() else elem


def _shape(ty: dtype) -> tuple:
    return ty.shape if ty.is_block() else ()


def _fmt_shape(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _tyname(ty: dtype) -> str:
    return str(ty.scalar) if not ty.is_block() else f"{_fmt_shape(ty.shape)} {ty.scalar}"


def _arith(op: str, a: "core.tensor", b: "core.tensor", attrs: dict | None = None) -> "core.tensor":
    return _op(op, [a, b], a.type, attrs)
