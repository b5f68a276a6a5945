"""Kernel argument typing: maps each launch argument (tensor-like, Python
scalar, dtype, constexpr) to the IR type it gets in the kernel signature, or
to a constexpr specialization, following Triton's rules."""
from __future__ import annotations

from typing import Any

from ..language.core import constexpr
from ..language.dtypes import dtype, float32, int1, int32, int64, pointer_type, scalar_from_name, uint64

# framework dtype names whose spelling differs from ours
_ALIASES = {"bool": "int1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5", "half": "fp16",
            "float": "fp32", "double": "fp64"}


def element_dtype(framework_dtype: Any) -> dtype:
    """A torch/numpy/cupy dtype (or its name) as a language dtype."""
    if isinstance(framework_dtype, dtype):
        return framework_dtype
    name = getattr(framework_dtype, "name", None) or str(framework_dtype)
    name = name.split(".")[-1]
    name = _ALIASES.get(name, name)
    return scalar_from_name(name)


def is_tensor_like(v: Any) -> bool:
    return hasattr(v, "dtype") and (hasattr(v, "data_ptr") or hasattr(v, "__array_interface__")
                                    or hasattr(v, "__cuda_array_interface__")) and getattr(v, "ndim", 1) != 0


def int_type(v: int) -> dtype:
    if -2 ** 31 <= v < 2 ** 31:
        return int32
    if -2 ** 63 <= v < 2 ** 63:
        return int64
    if 0 <= v < 2 ** 64:
        return uint64
    raise ValueError(f"integer argument {v} does not fit in 64 bits")


def arg_type(name: str, v: Any) -> dtype | constexpr:
    """The IR type of a runtime argument, or a constexpr for values that can
    only be specialized (None, dtypes, strings, tuples of those)."""
    if isinstance(v, constexpr):
        return v
    if v is None or isinstance(v, (dtype, str)):
        return constexpr(v)
    if isinstance(v, bool):
        return int1
    if isinstance(v, int):
        return int_type(v)
    if isinstance(v, float):
        return float32
    if is_tensor_like(v):
        return pointer_type(element_dtype(v.dtype))
    if hasattr(v, "dtype") and hasattr(v, "item"):  # numpy / 0-d scalars
        return element_dtype(v.dtype)
    raise TypeError(f"unsupported type {type(v).__name__} for kernel argument '{name}' "
                    "(expected a tensor, a number, None, a dtype or a constexpr)")


def parse_signature(sig: Any, names: list[str]) -> dict[str, dtype]:
    """`"*fp32, *fp32, i32"`, a list of such strings/dtypes, or a dict by name."""
    if isinstance(sig, str):
        sig = [s for s in sig.replace(",", " ").split() if s]
    if isinstance(sig, dict):
        items = dict(sig)
    else:
        sig = list(sig)
        if len(sig) > len(names):
            raise TypeError(f"signature has {len(sig)} entries but the kernel has {len(names)} parameters")
        items = dict(zip(names, sig))
    out = {}
    for k, t in items.items():
        if k not in names:
            raise TypeError(f"signature names unknown parameter '{k}'")
        out[k] = t if isinstance(t, dtype) else scalar_from_name(str(t))
    return out
