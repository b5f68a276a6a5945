"""Kernel argument typing: maps each launch argument (tensor-like, Python
scalar, dtype, constexpr) to the IR type it gets in the kernel signature, or
to a constexpr specialization, following Triton's rules."""
from __future__ import annotations

import enum
from typing import Any

from .blocks import tensor_descriptor_type
from .core import constexpr
from .dtypes import dtype, float32, int1, int32, int64, pointer_type, scalar_from_name, uint64

# framework dtype names whose spelling differs from ours
_ALIASES = {"bool": "int1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
            "float8_e4m3fnuz": "fp8e4b8", "float8_e5m2fnuz": "fp8e5b16", "half": "fp16",
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


class ArgKind(enum.Enum):
    """What a launch argument is, before it becomes an IR type or a key entry."""
    CONSTEXPR = "constexpr"   # constexpr, None, dtype or str: specialized on its value
    BOOL = "bool"
    INT = "int"
    FLOAT = "float"
    TENSOR = "tensor"         # read through .data_ptr() / .dtype
    DLPACK = "dlpack"         # read through its DLPack capsule
    SCALAR = "scalar"         # numpy and other 0-d scalars: typed by .dtype, passed by value
    TENSORDESC = "tensordesc" # a host TensorDescriptor: base pointer, shape, strides, padding flag


def is_tensor_descriptor(v: Any) -> bool:
    """A host TensorDescriptor (tritium.tools' or Triton's: read by its fields)."""
    return type(v).__name__ == "TensorDescriptor" and hasattr(v, "block_shape") and hasattr(v, "base")


def descriptor_type(v: Any, shape_div16: Any = None) -> tensor_descriptor_type:
    """The kernel-side type of a host TensorDescriptor argument."""
    return tensor_descriptor_type(element_dtype(v.base.dtype), v.block_shape, shape_div16)


def arg_kind(v: Any, launch: bool = False) -> ArgKind | None:
    """The kind of argument `v` is, or None when kernels cannot take it.
    `launch` is the launch path's view (the key and the Rust code that must
    agree with it): there a torch tensor is a pointer at any rank, as in
    Triton, and an object known only by `__dlpack__` is a tensor too; the
    compile-time and interpreter typing (`arg_type`) takes a 0-d tensor as a
    scalar and does not read DLPack."""
    if v is None or isinstance(v, (constexpr, dtype, str)):
        return ArgKind.CONSTEXPR
    if isinstance(v, bool):     # before int: bool is an int subclass
        return ArgKind.BOOL
    if isinstance(v, int):
        return ArgKind.INT
    if isinstance(v, float):
        return ArgKind.FLOAT
    if is_tensor_descriptor(v):
        return ArgKind.TENSORDESC
    if (launch and hasattr(v, "data_ptr")) or is_tensor_like(v):
        return ArgKind.TENSOR
    if launch and hasattr(v, "__dlpack__"):
        return ArgKind.DLPACK
    if hasattr(v, "dtype") and hasattr(v, "item"):
        return ArgKind.SCALAR
    return None


def unsupported_arg(name: str, v: Any, fn_name: str | None = None) -> TypeError:
    """The error for an argument `arg_kind` rejects (naming the kernel when known)."""
    of = f" of '{fn_name}'" if fn_name is not None else ""
    return TypeError(f"unsupported type {type(v).__name__} for kernel argument '{name}'{of} "
                     "(expected a tensor, a TensorDescriptor, a number, None, a dtype or a constexpr)")


def arg_type(name: str, v: Any) -> dtype | constexpr | tensor_descriptor_type:
    """The IR type of a runtime argument, or a constexpr for values that can
    only be specialized (None, dtypes, strings)."""
    kind = arg_kind(v)
    if kind is ArgKind.CONSTEXPR:
        return v if isinstance(v, constexpr) else constexpr(v)
    if kind is ArgKind.BOOL:
        return int1
    if kind is ArgKind.INT:
        return int_type(v)
    if kind is ArgKind.FLOAT:
        return float32
    if kind is ArgKind.TENSOR:
        return pointer_type(element_dtype(v.dtype))
    if kind is ArgKind.SCALAR:
        return element_dtype(v.dtype)
    if kind is ArgKind.TENSORDESC:
        return descriptor_type(v)
    raise unsupported_arg(name, v)



def specialize(params: list, bound: dict[str, Any]) -> dict[str, Any]:
    """Each bound argument of a kernel's parameters (KernelParam) as an IR
    dtype (a runtime argument) or a constexpr (specialized)."""
    out = {}
    for p in params:
        v = bound[p.name]
        if p.is_constexpr:
            out[p.name] = v if isinstance(v, constexpr) else constexpr(v)
        else:
            out[p.name] = arg_type(p.name, v)
    return out


def split_signature(text: str, seps: str = ", ") -> list[str]:
    """`text` split at `seps` outside <...> and [...] (so `tensordesc<fp16[64, 64]>` stays whole)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<[":
            depth += 1
        elif ch in ">]":
            depth -= 1
        if ch in seps and depth == 0:
            if cur.strip():
                out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def type_from_name(name: str) -> dtype | tensor_descriptor_type:
    """A signature entry: a dtype name (`fp32`, `*fp16`) or `tensordesc<fp16[64, 64]>`."""
    name = name.strip()
    if name.startswith("tensordesc"):
        return tensor_descriptor_type.parse(name)
    return scalar_from_name(name)


def parse_signature(sig: Any, names: list[str]) -> dict[str, dtype | tensor_descriptor_type]:
    """`"*fp32, *fp32, i32"`, a list of such strings/dtypes, or a dict by name."""
    if isinstance(sig, str):
        sig = split_signature(sig)
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
        out[k] = t if isinstance(t, (dtype, tensor_descriptor_type)) else type_from_name(str(t))
    return out
