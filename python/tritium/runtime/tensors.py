"""Tensor stand-ins Triton code passes to launches: `MockTensor` (a dtype
with no memory, for `warmup` and ahead-of-time keys) and `TensorWrapper` /
`reinterpret` (a tensor's memory seen with another element type, e.g. uint8
storage as float8). Both are tensor-like to the binder: `dtype` plus
`data_ptr()`."""
from __future__ import annotations

from typing import Any

from ..backends.base import tensor_address
from ..language.signature import element_dtype


class MockTensor:
    """A tensor of `dtype` at address 0 (so it counts as 16-byte aligned)."""

    def __init__(self, dtype: Any, shape: Any = None):
        self.dtype = dtype
        self.shape = [1] if shape is None else list(shape)

    @staticmethod
    def wrap_dtype(arg: Any) -> Any:
        """A torch dtype given where a tensor is expected becomes a MockTensor."""
        if type(arg).__name__ == "dtype" and type(arg).__module__ == "torch":
            return MockTensor(arg)
        return arg

    @staticmethod
    def data_ptr() -> int:
        return 0

    def stride(self) -> tuple:
        strides, n = [], 1
        for d in reversed(self.shape):
            strides.append(n)
            n *= d
        return tuple(reversed(strides))


class TensorWrapper:
    """`base`'s memory with element type `dtype` (a tritium dtype or a name
    such as "fp8e5"); everything else is read from `base`."""

    def __init__(self, base: Any, dtype: Any):
        self.base = base
        self.dtype = element_dtype(dtype)
        self.data = getattr(base, "data", None)
        self.device = getattr(base, "device", None)
        self.shape = getattr(base, "shape", None)

    def data_ptr(self) -> int:
        return tensor_address(self.base)

    def stride(self, *args: Any) -> Any:
        """The base's strides in its own elements (a NumPy base's byte strides
        divided by its itemsize), as torch's `stride()` gives them."""
        stride = getattr(self.base, "stride", None)
        if callable(stride):
            return stride(*args)
        strides = tuple(s // self.base.itemsize for s in self.base.strides)
        return strides[args[0]] if args else strides

    def element_size(self) -> int:
        return self.dtype.primitive_bitwidth // 8

    def numel(self) -> int:
        if not callable(getattr(self.base, "numel", None)):     # NumPy
            return self.base.size * self.base.itemsize // self.element_size()
        return self.base.numel() * self.base.element_size() // self.element_size()

    def dim(self) -> int:
        return self.base.dim() if callable(getattr(self.base, "dim", None)) else self.base.ndim

    def cpu(self) -> "TensorWrapper":
        return TensorWrapper(self.base.cpu(), self.dtype)

    def copy_(self, other: Any) -> None:
        self.base.copy_(other.base if isinstance(other, TensorWrapper) else other)

    def clone(self) -> "TensorWrapper":
        return TensorWrapper(self.base.clone(), self.dtype)

    def to(self, device: Any) -> "TensorWrapper":
        return TensorWrapper(self.base.to(device), self.dtype)

    def __str__(self) -> str:
        return f"TensorWrapper[{self.dtype}]({self.base})"


def reinterpret(tensor: Any, dtype: Any) -> Any:
    """`tensor` seen as elements of `dtype`: a TensorWrapper (or the tensor
    itself when its element type already is `dtype`)."""
    if isinstance(tensor, TensorWrapper):
        if element_dtype(dtype) == element_dtype(tensor.base.dtype):
            return tensor.base
        return TensorWrapper(tensor.base, dtype)
    if any(hasattr(tensor, a) for a in ("data_ptr", "__cuda_array_interface__", "__array_interface__")):
        return TensorWrapper(tensor, dtype)
    raise TypeError(f"reinterpret: cannot reinterpret a {type(tensor).__name__} (expected a tensor)")


__all__ = ["MockTensor", "TensorWrapper", "reinterpret"]
