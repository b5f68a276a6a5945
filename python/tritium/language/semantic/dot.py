"""`tl.dot`: operand dtypes and shapes, input precision, accumulator and
output types."""
from __future__ import annotations

from typing import Any

from .. import core
from ..dtypes import bfloat16, block_type, dtype, float16, float32, float64, int8, int32
from .casts import cast
from .emit import _fmt_shape, _op, _tyname
from .scalars import constant, to_tensor


_DOT_INPUT = ("int8", "uint8", "fp16", "bf16", "fp32", "fp64")
_INPUT_PRECISIONS = ("tf32", "tf32x3", "ieee")
# fp8 formats dots take as f16 (Triton: e4b15 everywhere, the fnuz pair off gfx942)
_UPCAST_FP8 = ("fp8e4b15", "fp8e4b8", "fp8e5b16")


def dot(a: Any, b: Any, acc: Any = None, input_precision: Any = None, allow_tf32: Any = None,
        max_num_imprecise_acc: Any = None, out_dtype: dtype = float32) -> "core.tensor":
    a, b = to_tensor(a), to_tensor(b)
    input_precision, allow_tf32 = core._unwrap(input_precision), core._unwrap(allow_tf32)
    max_num_imprecise_acc = core._unwrap(max_num_imprecise_acc)
    out_dtype = core._unwrap(out_dtype)
    if input_precision is not None and allow_tf32 is not None:
        raise ValueError("tl.dot: give only one of input_precision and allow_tf32")
    if input_precision is None:
        input_precision = "tf32" if allow_tf32 is None or allow_tf32 else "ieee"
    if not isinstance(input_precision, str) or input_precision.lower() not in _INPUT_PRECISIONS:
        raise ValueError(f"tl.dot: input_precision must be one of {', '.join(_INPUT_PRECISIONS)}, "
                         f"got {input_precision!r}")
    input_precision = input_precision.lower()
    if not a.type.is_block() or not b.type.is_block() or len(a.type.shape) not in (2, 3) \
            or len(b.type.shape) != len(a.type.shape):
        raise ValueError(f"tl.dot: operands must both be 2-D, or both 3-D (batched), got {_tyname(a.type)} and "
                         f"{_tyname(b.type)}")
    batch = a.type.shape[:-2]
    if b.type.shape[:-2] != batch:
        raise ValueError(f"tl.dot: batch dims differ: {_fmt_shape(a.type.shape)} and {_fmt_shape(b.type.shape)}")
    ad, bd = a.type.scalar, b.type.scalar
    if ad.name in _UPCAST_FP8 or bd.name in _UPCAST_FP8:
        # no tensor core takes these: every value is exact in f16, as Triton upcasts them
        a, b = cast(a, float16), cast(b, float16)
        ad = bd = float16
    if not (ad.is_fp8() and bd.is_fp8()):
        if ad.name not in _DOT_INPUT or bd.name not in _DOT_INPUT:
            raise TypeError(f"tl.dot: unsupported operand dtypes {ad} and {bd}")
        if ad != bd:
            raise TypeError(f"tl.dot: both operands must have the same dtype, got {ad} and {bd}")
    (m, k), (k2, n) = a.type.shape[-2:], b.type.shape[-2:]
    if k != k2:
        raise ValueError(f"tl.dot: incompatible shapes {_fmt_shape(a.type.shape)} and {_fmt_shape(b.type.shape)} "
                         f"(inner dimensions {k} and {k2} differ)")
    min_k = 32 if ad.primitive_bitwidth == 8 else 16
    if m < 16 or n < 16 or k < min_k:
        raise ValueError(f"tl.dot: shapes need M >= 16, N >= 16 and K >= {min_k}; got M={m}, N={n}, K={k}")
    if ad.is_int():
        if ad != int8 or bd != int8:
            raise TypeError("tl.dot: integer dot only supports int8 operands")
        ret = int32
    elif out_dtype == bfloat16:
        raise ValueError("tl.dot: out_dtype=bfloat16 is not supported; use float32 and cast")
    elif ad in (float32, bfloat16):
        ret = float32
    elif ad == float64:
        ret = float64
    else:
        if out_dtype not in (float16, float32):
            raise ValueError(f"tl.dot: out_dtype must be float16 or float32, got {out_dtype}")
        ret = out_dtype
    ret_ty = block_type(ret, (*batch, m, n))
    if core._unwrap(acc) is None:
        acc = constant(0, ret_ty)
    else:
        acc = to_tensor(acc)
        if acc.type != ret_ty:
            raise TypeError(f"tl.dot: accumulator must be {_tyname(ret_ty)}, got {_tyname(acc.type)} "
                            f"(pass out_dtype to match it)")
    if max_num_imprecise_acc is None:
        max_num_imprecise_acc = 0
    elif ad.is_fp8() and max_num_imprecise_acc > k:
        raise ValueError(f"tl.dot: max_num_imprecise_acc ({max_num_imprecise_acc}) must be <= K ({k})")
    attrs = {"input_precision": input_precision, "max_num_imprecise_acc": int(max_num_imprecise_acc)}
    return _op("dot", [a, b, acc], ret_ty, attrs)
