"""`TensorDescriptor`: a host-side description of a strided array (base
tensor, shape, strides in elements, block shape, padding) that a kernel
takes as one argument and uses exactly like `tl.make_tensor_descriptor`'s
value. Checked here as Triton 3.6 checks it, so kernels may rely on what
TMA needs: a 16-byte aligned base, 16-byte multiple leading strides, a
contiguous last dimension.

A kernel receives it as the base pointer, the shape (i32), the leading
strides (i64; the last is 1) and an i1 "pad with NaN" flag, so one compiled
kernel serves both paddings (language/signature.py types it
`tensordesc<fp16[64, 64]>`, Triton's spelling)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

from ..language.dtypes import MAX_TENSOR_NUMEL
from ..language.signature import element_dtype

MAX_RANK = 5


def _address(base: Any) -> int | None:
    """The base's address, when it can be read without a device."""
    if hasattr(base, "data_ptr"):
        return int(base.data_ptr())
    iface = getattr(base, "__cuda_array_interface__", None) or getattr(base, "__array_interface__", None)
    return int(iface["data"][0]) if iface is not None else None


def _itemsize(base: Any) -> int:
    dt = base.dtype
    size = getattr(dt, "itemsize", None)
    return int(size) if size is not None else int(base.element_size())


def _is_float(base: Any) -> bool:
    dt = base.dtype
    flag = getattr(dt, "is_floating_point", None)
    if isinstance(flag, bool):
        return flag
    return element_dtype(dt).is_floating()


@dataclass
class TensorDescriptor:
    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    padding: str = "zero"

    def __post_init__(self) -> None:
        self.shape = [int(s) for s in self.shape]
        self.strides = [int(s) for s in self.strides]
        self.block_shape = [int(b) for b in self.block_shape]
        rank = len(self.shape)
        if not 1 <= rank <= MAX_RANK:
            raise ValueError(f"TensorDescriptor: rank must be 1 to {MAX_RANK}, got {rank}")
        if len(self.strides) != rank or len(self.block_shape) != rank:
            raise ValueError(f"TensorDescriptor: shape, strides and block_shape must have one length, got "
                             f"{rank}, {len(self.strides)} and {len(self.block_shape)}")
        numel = 1
        for i, b in enumerate(self.block_shape):
            if b <= 0 or b & (b - 1):
                raise ValueError(f"TensorDescriptor: block_shape element {i} is {b}, which is not a power of two")
            numel *= b
        if numel > MAX_TENSOR_NUMEL:
            raise ValueError(f"TensorDescriptor: a block of {numel} elements exceeds {MAX_TENSOR_NUMEL}")
        if type(self.base).__name__ not in ("FakeTensor", "FunctionalTensor"):
            addr = _address(self.base)
            if addr is not None and addr % 16:
                raise ValueError(f"TensorDescriptor: base must be 16-byte aligned, got address {addr:#x}")
        size = _itemsize(self.base)
        for i, s in enumerate(self.strides[:-1]):
            if s * size % 16:
                raise ValueError(f"TensorDescriptor: stride {i} ({s} elements of {size} bytes) is not a multiple "
                                 "of 16 bytes")
        if any(s <= 0 for s in self.shape):
            raise ValueError(f"TensorDescriptor: shape must be positive, got {self.shape}")
        if self.strides[-1] != 1:
            raise ValueError(f"TensorDescriptor: the last dimension must be contiguous (stride 1), got "
                             f"{self.strides[-1]}")
        if self.padding not in ("zero", "nan"):
            raise ValueError(f"TensorDescriptor: padding must be 'zero' or 'nan', got {self.padding!r}")
        if self.padding == "nan" and not _is_float(self.base):
            raise ValueError("TensorDescriptor: padding 'nan' needs a floating-point tensor")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: List[int], padding: str = "zero") -> "TensorDescriptor":
        """The whole of `tensor` (torch: `.stride()`; NumPy: byte strides / itemsize)."""
        if callable(getattr(tensor, "stride", None)):
            strides = list(tensor.stride())
        else:
            size = _itemsize(tensor)
            strides = [s // size for s in tensor.strides]
        return TensorDescriptor(tensor, list(tensor.shape), strides, block_shape, padding)


__all__ = ["TensorDescriptor"]
